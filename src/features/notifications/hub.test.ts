import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { seedAccount, type LoggedInUser } from '../../../test/support/accounts.js';
import { connectHub, sleep, waitFor, type TestHubClient } from '../../../test/support/hub-client.js';
import { memberOf, orgWithOwner } from '../../../test/support/members.js';
import { sharedDatabaseUrl } from '../../../test/support/shared-database.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { PushType, type Push } from '../../platform/push/pushes.js';

let servers: TestServer[] = [];
let clients: TestHubClient[] = [];
afterEach(async () => {
  await Promise.all(clients.map((client) => client.stop().catch(() => undefined)));
  clients = [];
  await Promise.all(servers.map((server) => server.close().catch(() => undefined)));
  servers = [];
});

async function start(env: Record<string, string> = {}): Promise<TestServer> {
  const server = await startTestServer({ env });
  servers.push(server);
  return server;
}

function hubUrl(server: TestServer, path = '/notifications/hub'): string {
  return `${server.baseUrl}${path}`;
}

async function connect(server: TestServer, user: LoggedInUser | null, options: Parameters<typeof connectHub>[1] = {}, path?: string) {
  const client = await connectHub(hubUrl(server, path), { ...(user ? { token: user.accessToken } : {}), ...options });
  clients.push(client);
  return client;
}

function cipherPush(user: LoggedInUser, contextId: string | null): Push {
  return {
    type: PushType.SyncCipherUpdate,
    payload: { Id: randomUUID(), UserId: user.userId, OrganizationId: null, CollectionIds: null, RevisionDate: new Date('2026-08-21T10:00:00.123Z') },
    contextId,
    target: { user: user.userId },
  };
}

/** The status a raw WebSocket upgrade gets: 101 when it opens, else the refusal's status. */
function upgradeStatus(url: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url.replace(/^http/, 'ws'), { headers });
    ws.on('open', () => {
      ws.terminate();
      resolve(101);
    });
    ws.on('unexpected-response', (_request, response) => {
      resolve(response.statusCode ?? 0);
      ws.terminate();
    });
    ws.on('error', (error) => reject(error));
  });
}

describe('notifications hub: connecting', () => {
  it('accepts a user token in the Authorization header and in the access_token query parameter', async () => {
    const server = await start();
    const user = await seedAccount(server);
    const byHeader = await connect(server, user);
    const byQuery = await connect(server, null, {}, `/notifications/hub?access_token=${encodeURIComponent(user.accessToken)}`);
    server.app.features.pushes.send(cipherPush(user, null));
    await waitFor(() => byHeader.received().length === 1 && byQuery.received().length === 1, 5000, 'the push on both connections');
  });

  it('refuses a bad, missing or stale token with 401 at the upgrade, before any WebSocket opens', async () => {
    const server = await start();
    const user = await seedAccount(server);
    expect(await upgradeStatus(hubUrl(server), { authorization: `Bearer ${user.accessToken}` })).toBe(101);
    expect(await upgradeStatus(hubUrl(server))).toBe(401);
    expect(await upgradeStatus(hubUrl(server), { authorization: 'Bearer not-a-token' })).toBe(401);
    expect(await upgradeStatus(`${hubUrl(server)}?access_token=${user.accessToken.slice(0, -4)}AAAA`)).toBe(401);
    // The real client fails its start(): with skipNegotiation the status is not visible to it (notifications.md P15).
    await expect(connectHub(hubUrl(server), { token: 'not-a-token' })).rejects.toThrow();
    // A security-stamp change makes the token stale: refused at connect time too.
    await server.database.db.updateTable('users').set({ security_stamp: randomUUID() }).where('id', '=', user.userId).execute();
    expect(await upgradeStatus(hubUrl(server), { authorization: `Bearer ${user.accessToken}` })).toBe(401);
    // Other upgrade paths are not served.
    expect(await upgradeStatus(`${server.baseUrl}/notifications/elsewhere`, { authorization: `Bearer ${user.accessToken}` })).toBe(404);
  });

  it('serves the hub at the root when the notifications service runs alone', async () => {
    const databaseUrl = await sharedDatabaseUrl();
    const server = await startTestServer({ databaseUrl });
    servers.push(server);
    const user = await seedAccount(server);
    const alone = await startTestServer({ databaseUrl, env: { SERVICES: 'notifications' } });
    servers.push(alone);
    const client = await connect(alone, user, {}, '/hub');
    alone.app.features.pushes.send(cipherPush(user, null));
    await waitFor(() => client.received().length === 1);
    expect(await upgradeStatus(`${alone.baseUrl}/notifications/hub`, { authorization: `Bearer ${user.accessToken}` })).toBe(404);
  });

  it('answers the negotiate step for SignalR clients that do not skip it', async () => {
    const server = await start();
    const user = await seedAccount(server);
    const negotiate = await server.request('POST', '/notifications/hub/negotiate?negotiateVersion=1', { token: user.accessToken });
    expect(negotiate.status).toBe(200);
    expect(negotiate.body).toMatchObject({ negotiateVersion: 1, availableTransports: [{ transport: 'WebSockets', transferFormats: ['Text', 'Binary'] }] });
    expect((await server.request('POST', '/notifications/hub/negotiate?negotiateVersion=1')).status).toBe(401);
    expect((await server.request('POST', '/notifications/anonymous-hub/negotiate?negotiateVersion=1')).status).toBe(200);
    const client = await connect(server, user, { skipNegotiation: false });
    server.app.features.pushes.send(cipherPush(user, null));
    await waitFor(() => client.received().length === 1);
  });

  it('answers the official handshake errors for an unknown protocol or version, then closes', async () => {
    const server = await start();
    const user = await seedAccount(server);
    const handshake = (request: string) =>
      new Promise<{ reply: string; code: number }>((resolve, reject) => {
        const ws = new WebSocket(hubUrl(server).replace(/^http/, 'ws'), { headers: { authorization: `Bearer ${user.accessToken}` } });
        let reply = '';
        ws.on('open', () => ws.send(`${request}\u001e`));
        ws.on('message', (data) => (reply += Buffer.from(data as Buffer).toString('utf8')));
        ws.on('close', (code) => resolve({ reply, code }));
        ws.on('error', reject);
      });
    expect(await handshake('{"protocol":"xml","version":1}')).toEqual({ reply: '{"error":"Requested protocol \'xml\' is not available."}\u001e', code: 1000 });
    expect((await handshake('{"protocol":"messagepack","version":3}')).reply).toContain("does not support version 3 of the 'messagepack' protocol");
    expect((await handshake('not json')).reply).toContain('"error"');
    // Inbound frames are bounded: a frame over 4 KB closes the connection (1009, message too big).
    expect((await handshake(`{"protocol":"messagepack","version":1,"pad":"${'x'.repeat(5000)}"}`)).code).toBe(1009);
  });
});

describe('notifications hub: delivery', () => {
  it('delivers a user push with its payload (dates as dates) and ContextId to every connection of the user, and to no one else', async () => {
    const server = await start();
    const user = await seedAccount(server);
    const other = await seedAccount(server);
    const phone = await connect(server, user);
    const laptop = await connect(server, user);
    const stranger = await connect(server, other);
    const push = cipherPush(user, 'device-a');
    server.app.features.pushes.send(push);
    await waitFor(() => phone.received().length === 1 && laptop.received().length === 1);
    for (const client of [phone, laptop]) {
      expect(client.received()[0]).toEqual({ Type: PushType.SyncCipherUpdate, Payload: push.payload, ContextId: 'device-a' });
      expect((client.received()[0]!.Payload as { RevisionDate: unknown }).RevisionDate).toBeInstanceOf(Date);
    }
    await sleep(200);
    expect(stranger.received()).toEqual([]);
  });

  it('delivers an organization push to the members of the organization only', async () => {
    const server = await start();
    const { orgId, owner } = await orgWithOwner(server);
    const member = await memberOf(server, orgId);
    const outsider = await seedAccount(server);
    const ownerClient = await connect(server, owner);
    const memberClient = await connect(server, member);
    const outsiderClient = await connect(server, outsider);
    const push: Push = {
      type: PushType.SyncOrganizationStatusChanged,
      payload: { OrganizationId: orgId, Enabled: false },
      contextId: null,
      target: { organization: orgId },
    };
    server.app.features.pushes.send([push]);
    await waitFor(() => ownerClient.received().length === 1 && memberClient.received().length === 1);
    expect(memberClient.received()[0]).toEqual({ Type: 18, Payload: { OrganizationId: orgId, Enabled: false }, ContextId: null });
    await sleep(200);
    expect(outsiderClient.received()).toEqual([]);
  });

  it('takes organization membership from the moment of delivery, not of connecting', async () => {
    const server = await start();
    const { orgId } = await orgWithOwner(server);
    const user = await seedAccount(server);
    const before = await connect(server, user);
    const membership = await memberOf(server, orgId);
    // The same user joining later: seed a second membership row for `user` instead of a new account.
    await server.database.db.updateTable('organization_users').set({ user_id: user.userId }).where('id', '=', membership.memberId).execute();
    const after = await connect(server, user);
    server.app.features.pushes.send({ type: PushType.PolicyChanged, payload: { OrganizationId: orgId, Policy: null }, contextId: null, target: { organization: orgId } });
    await waitFor(() => after.received().length === 1 && before.received().length === 1);
  });

  it('sends AuthRequestResponseRecieved to the anonymous-hub connections of that auth request only, and no Heartbeat there', async () => {
    const server = await start({ NOTIFICATIONS_HEARTBEAT_SECONDS: '1' });
    const user = await seedAccount(server);
    const requestId = randomUUID();
    const waiting = await connect(server, null, {}, `/notifications/anonymous-hub?Token=${requestId}`);
    const otherRequest = await connect(server, null, {}, `/notifications/anonymous-hub?Token=${randomUUID()}`);
    const userClient = await connect(server, user);
    const push: Push = { type: PushType.AuthRequestResponse, payload: { Id: requestId, UserId: user.userId }, contextId: 'approver', target: { authRequest: requestId } };
    server.app.features.pushes.send(push);
    await waitFor(() => waiting.heard.length > 0);
    expect(waiting.heard).toEqual([
      { method: 'AuthRequestResponseRecieved', args: [{ Type: 16, Payload: { Id: requestId, UserId: user.userId }, ContextId: 'approver' }] },
    ]);
    // The /hub connection gets its Heartbeat (no arguments) within the shortened interval; the anonymous ones never do.
    await waitFor(() => userClient.heard.some((m) => m.method === 'Heartbeat'), 3000, 'a Heartbeat');
    expect(userClient.heard.find((m) => m.method === 'Heartbeat')?.args).toEqual([]);
    expect(userClient.received()).toEqual([]);
    expect(otherRequest.heard).toEqual([]);
    expect(waiting.heard.filter((m) => m.method === 'Heartbeat')).toEqual([]);
    expect(await upgradeStatus(hubUrl(server, '/notifications/anonymous-hub?Token=not-a-guid'))).toBe(400);
  });

  it('speaks the JSON protocol too (camelCase objects, ISO dates, as ASP.NET Core writes them)', async () => {
    const server = await start();
    const user = await seedAccount(server);
    const client = await connect(server, user, { protocol: 'json' });
    const push = cipherPush(user, 'device-b');
    server.app.features.pushes.send(push);
    await waitFor(() => client.received().length === 1);
    expect(client.received()[0]).toEqual({
      type: 0,
      payload: { id: push.payload.Id, userId: user.userId, organizationId: null, collectionIds: null, revisionDate: '2026-08-21T10:00:00.123Z' },
      contextId: 'device-b',
    });
  });

  it('closes the connections of a user after delivering LogOut', async () => {
    const server = await start();
    const user = await seedAccount(server);
    const other = await seedAccount(server);
    const client = await connect(server, user);
    const otherClient = await connect(server, other);
    server.app.features.pushes.send({ type: PushType.LogOut, payload: { UserId: user.userId, Reason: 0 }, contextId: null, target: { user: user.userId } });
    const error = await client.closed;
    expect(client.received()).toEqual([{ Type: 11, Payload: { UserId: user.userId, Reason: 0 }, ContextId: null }]);
    expect(error?.message).toContain('logged out');
    expect(otherClient.connection.state).toBe('Connected');
  });

  it('closes every connection with a Close message allowing reconnect when the server stops', async () => {
    const server = await start();
    const user = await seedAccount(server);
    const client = await connect(server, user);
    const started = Date.now();
    await server.app.close();
    // A Close message without error: the client's onclose gets no error (notifications.md §2.4).
    expect(await client.closed).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(3000);
  });
});

describe('notifications hub: limits', () => {
  it('caps connections per user and per IP with 429', async () => {
    const server = await start({ NOTIFICATIONS_MAX_CONNECTIONS_PER_USER: '2', NOTIFICATIONS_MAX_CONNECTIONS_PER_IP: '3' });
    const user = await seedAccount(server);
    const other = await seedAccount(server);
    await connect(server, user);
    await connect(server, user);
    expect(await upgradeStatus(hubUrl(server), { authorization: `Bearer ${user.accessToken}` })).toBe(429);
    await connect(server, other);
    expect(await upgradeStatus(hubUrl(server), { authorization: `Bearer ${other.accessToken}` })).toBe(429);
    await clients.shift()!.stop();
    await waitFor(() => server.app.features.notifications.hub.connectionCount() === 2);
    await connect(server, other);
  });

  it('holds the per-user cap for upgrades that arrive together', async () => {
    const server = await start({ NOTIFICATIONS_MAX_CONNECTIONS_PER_USER: '2' });
    const user = await seedAccount(server);
    const sockets: WebSocket[] = [];
    const attempt = () =>
      new Promise<number>((resolve, reject) => {
        const ws = new WebSocket(hubUrl(server).replace(/^http/, 'ws'), { headers: { authorization: `Bearer ${user.accessToken}` } });
        sockets.push(ws);
        ws.on('open', () => resolve(101));
        ws.on('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0));
        ws.on('error', reject);
      });
    const statuses = await Promise.all(Array.from({ length: 6 }, attempt));
    for (const ws of sockets) ws.terminate();
    expect(statuses.sort()).toEqual([101, 101, 429, 429, 429, 429]);
  });

  it('drops a connection that stops reading, and keeps delivering to the others', async () => {
    const server = await start({ NOTIFICATIONS_MAX_BUFFERED_KILOBYTES: '16' });
    const user = await seedAccount(server);
    const reader = await connect(server, user);
    // A raw client that completes the handshake and then never reads its socket again.
    const stalled = new WebSocket(hubUrl(server).replace(/^http/, 'ws'), { headers: { authorization: `Bearer ${user.accessToken}` } });
    await new Promise<void>((resolve) => stalled.once('open', () => resolve()));
    stalled.send('{"protocol":"messagepack","version":1}\u001e');
    await new Promise<void>((resolve) => stalled.once('message', () => resolve()));
    (stalled as unknown as { _socket: { pause(): void } })._socket.pause();
    const hub = server.app.features.notifications.hub;
    expect(hub.connectionCount()).toBe(2);
    const big = 'x'.repeat(64 * 1024);
    for (let i = 0; i < 400 && hub.connectionCount() === 2; i++) {
      server.app.features.pushes.send({ ...cipherPush(user, null), payload: { Id: randomUUID(), UserId: user.userId, Padding: big, RevisionDate: new Date() } });
      await sleep(5);
    }
    expect(hub.connectionCount()).toBe(1);
    await waitFor(() => reader.received().length > 10);
    stalled.terminate();
  });
});

describe('notifications hub: keep-alive', () => {
  it('holds a silent connection past 60 s with the real client (its server timeout is 30 s)', { timeout: 90_000 }, async () => {
    const server = await start();
    const user = await seedAccount(server);
    const client = await connect(server, user);
    let closedEarly = false;
    void client.closed.then(() => (closedEarly = true));
    await sleep(65_000);
    expect(closedEarly).toBe(false);
    expect(client.connection.state).toBe('Connected');
    server.app.features.pushes.send(cipherPush(user, null));
    await waitFor(() => client.received().length === 1);
  });
});
