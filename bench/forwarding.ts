/**
 * Forwarding benchmark: how many events a second leave through the outbox relay to a local
 * webhook receiver, in process and through RabbitMQ, on SQLite and PostgreSQL, with the server
 * in its own process. Not a test.
 *
 *   npx tsx bench/forwarding.ts                                       # SQLite, in process
 *   BENCH_AMQP_URL=amqp://guest:guest@127.0.0.1:5672 npx tsx bench/forwarding.ts    # and through RabbitMQ
 *   BENCH_POSTGRES_URL=postgres://postgres@127.0.0.1:55433/strongroom_test npx tsx bench/forwarding.ts
 *
 * Options (environment): BENCH_EVENTS (20000), BENCH_ENGINES (sqlite,postgres), BENCH_AMQP_URL.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import amqp from 'amqplib';
import { openDatabase, type Database } from '../src/db/database.js';
import { EventType } from '../src/platform/audit/event-type.js';
import { INTEGRATION_TYPES } from '../src/features/integrations/rules.js';
import { amqpNames } from '../src/features/integrations/transports.js';
import { OrganizationUserType } from '../src/platform/access/roles.js';
import { seedMembership, seedOrganization } from '../test/support/orgs.js';
import type { TestServer } from '../test/support/test-server.js';
import { startReceiver } from '../test/support/webhook-receiver.js';
import { call, databaseFor, ENGINES, registerAndLogin, startServer, summary } from './harness.js';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 20_000);
const AMQP_URL = process.env.BENCH_AMQP_URL;
const TEMPLATE = '{"id":"#IdempotencyId#","type":"#Type#","organizationId":"#OrganizationId#","actingUserId":"#ActingUserId#","date":"#DateIso8601#"}';

interface Row {
  engine: string;
  transport: string;
  events: number;
  seconds: number;
  perSecond: number;
  firstMs: number;
  requests: number;
}

/** The seeding helpers of the tests take a server; these only use its database. */
const asServer = (database: Database) => ({ database, config: { selfHosted: true } }) as unknown as TestServer;

async function runOnce(engine: string, transport: 'in-process' | 'amqp'): Promise<Row> {
  const database = await databaseFor(engine);
  const prefix = `strongroom-bench-${randomBytes(4).toString('hex')}`;
  const env: Record<string, string> = {
    INTEGRATIONS_ALLOW_PRIVATE_ADDRESSES: 'true',
    INTEGRATIONS_POLL_MS: '20',
    LOG_LEVEL: 'info',
    ...(transport === 'amqp' ? { AMQP_URL: AMQP_URL!, AMQP_PREFIX: prefix } : {}),
  };
  const server = await startServer(database.url, env);
  const receiver = await startReceiver();
  const db = openDatabase(database.url, { poolSize: 2 });
  try {
    const { token } = await registerAndLogin(server.url, `forwarding-${engine}-${transport}@example.com`);
    const user = await db.db.selectFrom('users').select('id').executeTakeFirstOrThrow();
    const org = await seedOrganization(asServer(db));
    await seedMembership(asServer(db), { organizationId: org, userId: user.id, type: OrganizationUserType.Owner });
    const integration = JSON.parse(await call(server.url, 'POST', `/api/organizations/${org}/integrations`, { token, json: { type: 4, configuration: null } })) as { id: string };
    await call(server.url, 'POST', `/api/organizations/${org}/integrations/${integration.id}/configurations`, {
      token,
      json: { configuration: JSON.stringify({ Uri: `${receiver.url}/hook`, Scheme: 'Bearer', Token: 'bench' }), template: TEMPLATE },
    });
    // Let the relay take its lease and the transport connect before the clock starts.
    await new Promise((resolve) => setTimeout(resolve, 1500));

    const rows = Array.from({ length: EVENTS }, () => ({
      id: randomUUID(),
      type: EventType.Cipher_Updated,
      organization_id: org,
      acting_user_id: user.id,
      cipher_id: randomUUID(),
      date: new Date().toISOString(),
    }));
    const started = Date.now();
    // Committed as services commit them, in transactions of 500.
    for (let i = 0; i < rows.length; i += 500) await db.db.insertInto('events').values(rows.slice(i, i + 500)).execute();
    let firstMs = 0;
    const seen = new Set<string>();
    let checked = 0;
    while (seen.size < EVENTS) {
      for (; checked < receiver.received.length; checked++) seen.add((JSON.parse(receiver.received[checked]!.body) as { id: string }).id);
      if (!firstMs && seen.size > 0) firstMs = Date.now() - started;
      if (Date.now() - started > 600_000) throw new Error(`only ${seen.size} of ${EVENTS} delivered in 10 minutes`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const seconds = (Date.now() - started) / 1000;
    return { engine, transport, events: EVENTS, seconds, perSecond: EVENTS / seconds, firstMs, requests: receiver.received.length };
  } finally {
    await server.stop();
    await receiver.close();
    await db.close();
    await database.drop();
    if (transport === 'amqp') await dropTopology(prefix);
  }
}

async function dropTopology(prefix: string): Promise<void> {
  const connection = await amqp.connect(AMQP_URL!);
  const channel = await connection.createChannel();
  const names = amqpNames(prefix);
  for (const t of INTEGRATION_TYPES) for (const queue of [names.eventQueue(t), names.integrationQueue(t), names.retryQueue(t)]) await channel.deleteQueue(queue);
  await channel.deleteExchange(names.eventExchange);
  await channel.deleteExchange(names.integrationExchange);
  await connection.close();
}

const results: Row[] = [];
for (const engine of ENGINES) {
  const transports: ('in-process' | 'amqp')[] = AMQP_URL ? ['in-process', 'amqp'] : ['in-process'];
  for (const transport of transports) {
    console.error(`${engine}, ${transport}: ${EVENTS} events…`);
    results.push(await runOnce(engine, transport));
  }
}
console.log(`Forwarding ${EVENTS.toLocaleString('en-US')} events to a local webhook, Node ${process.version}\n`);
console.log('| engine | transport | events | seconds | events/s | first delivery ms | requests |');
console.log('|---|---|---|---|---|---|---|');
for (const r of results) {
  console.log(`| ${r.engine} | ${r.transport} | ${r.events.toLocaleString('en-US')} | ${r.seconds.toFixed(2)} | ${Math.round(r.perSecond).toLocaleString('en-US')} | ${r.firstMs} | ${r.requests.toLocaleString('en-US')} |`);
  summary('forwarding', { what: `${r.engine}, ${r.transport}: events forwarded to a webhook`, strongroom: r.perSecond, unit: 'events/s', better: 'higher' });
}
