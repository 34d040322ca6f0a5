import { randomUUID } from 'node:crypto';
import { createServer, connect as tcpConnect, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createUser, type LoggedInUser } from '../../../test/support/accounts.js';
import { connectHub, sleep, waitFor, type TestHubClient } from '../../../test/support/hub-client.js';
import { memberOf, orgWithOwner } from '../../../test/support/members.js';
import { testService } from '../../../test/support/services.js';
import { sharedDatabaseUrl } from '../../../test/support/shared-database.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { PushType, type Push } from '../../platform/push/pushes.js';

const redisUrl = testService('redis');

let servers: TestServer[] = [];
let clients: TestHubClient[] = [];
let proxies: RedisProxy[] = [];
afterEach(async () => {
  await Promise.all(clients.map((client) => client.stop().catch(() => undefined)));
  clients = [];
  await Promise.all(servers.map((server) => server.close().catch(() => undefined)));
  servers = [];
  for (const proxy of proxies) await proxy.down();
  proxies = [];
});

async function connect(server: TestServer, user: LoggedInUser): Promise<TestHubClient> {
  const client = await connectHub(`${server.baseUrl}/notifications/hub`, { token: user.accessToken });
  clients.push(client);
  return client;
}

function cipherPush(user: LoggedInUser, contextId: string | null = null): Push {
  return {
    type: PushType.SyncCipherCreate,
    payload: { Id: randomUUID(), UserId: user.userId, OrganizationId: null, CollectionIds: null, RevisionDate: new Date() },
    contextId,
    target: { user: user.userId },
  };
}

/** A TCP relay in front of the real Redis that a test can take down and bring back: an outage on demand. */
interface RedisProxy {
  url: string;
  up(): Promise<void>;
  down(): Promise<void>;
}

async function redisProxy(target: string): Promise<RedisProxy> {
  const { hostname, port } = new URL(target);
  const sockets = new Set<Socket>();
  let server: Server | null = null;
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const address = probe.address();
  const listenPort = typeof address === 'object' && address ? address.port : 0;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  const proxy: RedisProxy = {
    url: `redis://127.0.0.1:${listenPort}`,
    async up() {
      if (server) return;
      server = createServer((client) => {
        const upstream = tcpConnect(Number(port), hostname);
        for (const socket of [client, upstream]) {
          sockets.add(socket);
          socket.on('close', () => sockets.delete(socket));
          socket.on('error', () => undefined);
        }
        client.pipe(upstream).pipe(client);
      });
      await new Promise<void>((resolve) => server!.listen(listenPort, '127.0.0.1', resolve));
    },
    async down() {
      for (const socket of sockets) socket.destroy();
      if (!server) return;
      const closing = server;
      server = null;
      await new Promise<void>((resolve) => closing.close(() => resolve()));
    },
  };
  proxies.push(proxy);
  return proxy;
}

async function hubHealth(server: TestServer): Promise<{ status: string; description: string | null }> {
  const res = await server.request('GET', '/api/healthz/extended');
  return res.body.results.notifications as { status: string; description: string | null };
}

async function waitForHealth(server: TestServer, status: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while ((await hubHealth(server)).status !== status) {
    if (Date.now() > deadline) throw new Error(`the hub did not turn ${status}`);
    await sleep(100);
  }
}

describe.skipIf(!redisUrl)('notifications fan-out across instances through Redis', () => {
  it('delivers a push made on either instance to the user\'s connections on both, exactly once each', async () => {
    const databaseUrl = await sharedDatabaseUrl();
    const env = { REDIS_URL: redisUrl!, HEALTH_ENABLED: 'true' };
    const a = await startTestServer({ databaseUrl, env });
    servers.push(a);
    const b = await startTestServer({ databaseUrl, env });
    servers.push(b);
    const user = await createUser(a);
    const onA = await connect(a, user);
    const onB = await connect(b, user);
    const { orgId, owner } = await orgWithOwner(a);
    const member = await memberOf(a, orgId);
    const ownerOnB = await connect(b, owner);
    const memberOnA = await connect(a, member);
    await waitForHealth(a, 'Healthy');
    await waitForHealth(b, 'Healthy');

    const fromA = cipherPush(user, 'device-a');
    a.app.features.pushes.send(fromA);
    const fromB = cipherPush(user);
    b.app.features.pushes.send(fromB);
    b.app.features.pushes.send({ type: PushType.SyncOrganizationStatusChanged, payload: { OrganizationId: orgId, Enabled: true }, contextId: null, target: { organization: orgId } });
    await waitFor(() => onA.received().length === 2 && onB.received().length === 2 && ownerOnB.received().length === 1 && memberOnA.received().length === 1);
    await sleep(300);
    for (const client of [onA, onB]) {
      expect(client.received().map((m) => (m.Payload as { Id: string }).Id).sort()).toEqual([fromA.payload.Id, fromB.payload.Id].sort());
      const first = client.received().find((m) => (m.Payload as { Id: string }).Id === fromA.payload.Id)!;
      expect(first.ContextId).toBe('device-a');
      expect((first.Payload as { RevisionDate: unknown }).RevisionDate).toEqual(fromA.payload.RevisionDate);
    }
    expect(ownerOnB.received()).toHaveLength(1);
    expect(memberOnA.received()).toHaveLength(1);
  }, 90_000); // Two instances over one database and Redis: room for a busy machine.

  it('keeps serving HTTP and local pushes while Redis is unreachable, reports degraded, and recovers by itself', { timeout: 60_000 }, async () => {
    const databaseUrl = await sharedDatabaseUrl();
    const proxy = await redisProxy(redisUrl!);
    // Redis is down from the start: the instance starts anyway.
    const a = await startTestServer({ databaseUrl, env: { REDIS_URL: proxy.url, HEALTH_ENABLED: 'true' } });
    servers.push(a);
    const b = await startTestServer({ databaseUrl, env: { REDIS_URL: redisUrl!, HEALTH_ENABLED: 'true' } });
    servers.push(b);
    const user = await createUser(a);
    const onA = await connect(a, user);
    const health = await hubHealth(a);
    expect(health.status).toBe('Degraded');
    expect(health.description).toContain('Redis is unreachable');
    a.app.features.pushes.send(cipherPush(user));
    await waitFor(() => onA.received().length === 1, 5000, 'the local push while Redis is down');

    await proxy.up();
    await waitForHealth(a, 'Healthy');
    // Resubscribed: a push made on the other instance arrives again, once.
    b.app.features.pushes.send(cipherPush(user));
    await waitFor(() => onA.received().length === 2, 5000, 'the push from the other instance');
    a.app.features.pushes.send(cipherPush(user));
    await waitFor(() => onA.received().length === 3);

    // An outage while running: degraded at once, local pushes still go out, once each.
    await proxy.down();
    await waitForHealth(a, 'Degraded');
    a.app.features.pushes.send(cipherPush(user));
    await waitFor(() => onA.received().length === 4, 5000, 'the local push during the outage');
    await proxy.up();
    await waitForHealth(a, 'Healthy');
    b.app.features.pushes.send(cipherPush(user));
    await waitFor(() => onA.received().length === 5, 5000, 'the push from the other instance after the outage');
    await sleep(300);
    expect(onA.received()).toHaveLength(5);
    expect((await a.request('GET', '/api/alive')).status).toBe(200);
  });
});
