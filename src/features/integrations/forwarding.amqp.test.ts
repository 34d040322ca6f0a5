import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import amqp from 'amqplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { orgWithOwner, type Actor } from '../../../test/support/admin.js';
import { acceptedIds, emitEvents, emitReadSet, organizationWithHook } from '../../../test/support/forwarding.js';
import { testService } from '../../../test/support/services.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { eventually, startReceiver } from '../../../test/support/webhook-receiver.js';
import { INTEGRATION_TYPES } from './rules.js';
import { amqpNames } from './transports.js';

const run = promisify(execFile);
const AMQP_URL = testService('amqp');
const NODE = AMQP_URL ? testService('amqpNode') : undefined;
// Queues of their own, so that nothing else on the broker takes these messages.
const PREFIX = `strongroom-test-${randomBytes(4).toString('hex')}`;

let server: TestServer;
let owner: Actor;

async function rabbitmqctl(...args: string[]): Promise<void> {
  await run('rabbitmqctl', ['-n', NODE!, ...args], { timeout: 60_000 });
}

/** Starts the broker's application again, retrying while its port is still being released. */
async function startBroker(): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      await rabbitmqctl('start_app');
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
}

const unique = (ids: string[]) => [...new Set(ids)].sort();

describe.skipIf(!AMQP_URL || !NODE)('forwarding through RabbitMQ', () => {
  beforeAll(async () => {
    server = await startTestServer({
      env: {
        AMQP_URL: AMQP_URL!,
        AMQP_PREFIX: PREFIX,
        INTEGRATIONS_ALLOW_PRIVATE_ADDRESSES: 'true',
        INTEGRATIONS_POLL_MS: '20',
        INTEGRATIONS_RETRY_BASE_MS: '50',
        INTEGRATIONS_MAX_RETRIES: '3',
        INTEGRATIONS_TIMEOUT_MS: '2000',
        HEALTH_ENABLED: 'true',
      },
    });
    ({ owner } = await orgWithOwner(server));
  }, 120_000);

  afterAll(async () => {
    await server?.close();
    if (!AMQP_URL) return;
    const connection = await amqp.connect(AMQP_URL);
    const channel = await connection.createChannel();
    const names = amqpNames(PREFIX);
    for (const t of INTEGRATION_TYPES) {
      for (const queue of [names.eventQueue(t), names.integrationQueue(t), names.retryQueue(t)]) await channel.deleteQueue(queue);
    }
    await channel.deleteExchange(names.eventExchange);
    await channel.deleteExchange(names.integrationExchange);
    await connection.close();
  }, 60_000);

  it('delivers every event, retried through the retry queue, across a broker restart mid-stream', async () => {
    const tries = new Map<string, number>();
    // Every event fails its first try, so each takes the retry queue's way back.
    const receiver = await startReceiver(({ body }) => {
      const id = (JSON.parse(body) as { id: string }).id;
      const n = (tries.get(id) ?? 0) + 1;
      tries.set(id, n);
      return n === 1 ? 500 : 200;
    });
    try {
      const hook = await organizationWithHook(server, owner, receiver.url);
      const before = await emitEvents(server, hook.org, 60);
      await eventually(() => acceptedIds(receiver.received).length > 0, 30_000, 'the first deliveries');

      await rabbitmqctl('stop_app');
      // Written while the broker is away: they wait in the outbox.
      const during = await emitEvents(server, hook.org, 60);
      await eventually(async () => {
        const health = await server.request('GET', '/api/healthz/extended');
        return health.body.results.integrations.status === 'Degraded';
      }, 30_000, 'the broker to be seen as down');
      await startBroker();

      const after = await emitEvents(server, hook.org, 60);
      const secrets = Array.from({ length: 5 }, (_, i) => `00000000-0000-4000-8000-00000000000${i}`);
      await emitReadSet(server, hook.org, secrets);
      const all = unique([...before, ...during, ...after]);
      await eventually(() => unique(acceptedIds(receiver.received)).length === all.length + secrets.length, 90_000, 'every event delivered');
      const delivered = receiver.accepted().map((r) => JSON.parse(r.body) as { id: string; type: string; secret: string });
      expect(unique(delivered.filter((d) => d.type === 'Collection_Updated').map((d) => d.id))).toEqual(all);
      expect(unique(delivered.filter((d) => d.type === 'Secret_Retrieved').map((d) => d.secret))).toEqual(secrets);
      // Each went through a failure and a retry.
      expect([...tries.values()].every((n) => n >= 2)).toBe(true);

      await eventually(async () => (await server.request('GET', '/api/healthz/extended')).body.results.integrations.status === 'Healthy', 30_000, 'the broker to be back');
      const health = await server.request('GET', '/api/healthz/extended');
      expect(health.body.results.integrations.data).toMatchObject({ transport: 'amqp', broker: { connected: true } });
    } finally {
      await receiver.close();
    }
  }, 240_000);

  it('parks deliveries that fail every retry, and replays them through the broker', async () => {
    const receiver = await startReceiver(() => 503);
    try {
      const hook = await organizationWithHook(server, owner, receiver.url);
      const ids = await emitEvents(server, hook.org, 3);
      const path = `/api/organizations/${hook.org}/integrations/dead-letters`;
      await eventually(async () => (await server.request('GET', path, { token: owner.token })).body.data.length === 3, 60_000, 'three dead letters');
      expect(receiver.received).toHaveLength(12);
      receiver.setBehavior(() => 200);
      const replay = await server.request('POST', `${path}/replay`, { token: owner.token });
      expect(replay.body).toMatchObject({ replayed: 3, skipped: 0 });
      await eventually(() => unique(acceptedIds(receiver.received)).length === 3, 30_000, 'the replays');
      expect(unique(acceptedIds(receiver.received))).toEqual(unique(ids));
    } finally {
      await receiver.close();
    }
  }, 120_000);
});
