/**
 * `npx tsx fleet/run.ts [instances]`: brings up a fleet (fleet/fleet.ts) and keeps it running
 * until Ctrl-C, printing the balancer's URL and the test CA to trust. Needs DATABASE_URL
 * (PostgreSQL), REDIS_URL and AMQP_URL in the environment, and nginx.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestTls } from '../test/support/tls.js';
import { buildServer, startFleet } from './fleet.js';

const { DATABASE_URL, REDIS_URL, AMQP_URL } = process.env;
if (!DATABASE_URL?.startsWith('postgres') || !REDIS_URL || !AMQP_URL) {
  console.error('fleet/run.ts needs DATABASE_URL (postgres://…), REDIS_URL and AMQP_URL.');
  process.exit(2);
}
const count = Number(process.argv[2] ?? 3);
buildServer();
const dir = await mkdtemp(join(tmpdir(), 'strongroom-fleet-'));
const tls = await createTestTls();
const fleet = await startFleet({ databaseUrl: DATABASE_URL, redisUrl: REDIS_URL, amqpUrl: AMQP_URL, dir, tls, instances: count });
console.log(`Fleet of ${count} at ${fleet.url} (instances: ${fleet.instances.map((i) => i.url).join(', ')}).`);
console.log(`Trust the test CA: NODE_EXTRA_CA_CERTS=${tls.caPath}. Ctrl-C stops it.`);
process.once('SIGINT', () => {
  void fleet.close().then(() => rm(dir, { recursive: true, force: true })).then(() => process.exit(0));
});
