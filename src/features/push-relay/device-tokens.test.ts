import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { passwordGrantForm, seedAccount, TEST_DEVICE, type LoggedInUser } from '../../../test/support/accounts.js';
import { recordingOutbox } from '../../../test/support/outbox.js';
import { startRelayDouble, type RelayDouble } from '../../../test/support/relay-double.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { createRelayChannel, type RelayChannel } from './relay-channel.js';

/*
 * The official device token routes end to end: the token lands on the device row, the relay
 * registration is queued on the outbox after commit, and delivering it reaches the relay double
 * with the token read from the database.
 */

const DEVICE = TEST_DEVICE.deviceIdentifier;
const outbox = recordingOutbox();
let server: TestServer;
let relay: RelayDouble;
let relayChannel: RelayChannel;
let user: LoggedInUser;

const tokenOf = async (owner: LoggedInUser, identifier = DEVICE) =>
  (await server.database.db.selectFrom('devices').select(['id', 'push_token']).where('user_id', '=', owner.userId).where('identifier', '=', identifier).executeTakeFirstOrThrow());
const putToken = (owner: LoggedInUser | null, pushToken: unknown, identifier = DEVICE, method = 'PUT') =>
  server.request(method, `/api/devices/identifier/${identifier}/token`, { ...(owner ? { token: owner.accessToken } : {}), json: { pushToken } });

beforeAll(async () => {
  relay = await startRelayDouble();
  server = await startTestServer({ env: { INSTALLATION_ID: relay.installationId, INSTALLATION_KEY: relay.installationKey, PUSH_RELAY_URI: relay.url, PUSH_IDENTITY_URI: relay.url }, outbox });
  relayChannel = createRelayChannel({ config: server.config, db: server.database.db }) as RelayChannel;
  user = await seedAccount(server);
});
afterAll(async () => {
  await Promise.all([server?.close(), relay?.close()]);
});
beforeEach(() => {
  outbox.clear();
  relay.reset();
});

describe('PUT and POST /devices/identifier/{identifier}/token', () => {
  it('stores the token, answers an empty 200 and queues a registration that reaches the relay with it', async () => {
    const res = await putToken(user, 'fcm-token-abc');
    expect(res.status, res.text).toBe(200);
    expect(res.text).toBe('');
    const device = await tokenOf(user);
    expect(device.push_token).toBe('fcm-token-abc');
    expect(outbox.queued).toEqual([{ channel: 'relay', message: { kind: 'register', deviceId: device.id } }]);
    // The outbox holds ids only: the token is read back when the message is delivered.
    expect(JSON.stringify(outbox.queued)).not.toContain('fcm-token-abc');
    await relayChannel.deliver(outbox.queued[0]?.message ?? {}, 1);
    expect(relay.calls).toEqual([
      {
        method: 'POST',
        path: '/push/register',
        authorization: expect.any(String),
        body: { deviceId: device.id, pushToken: 'fcm-token-abc', userId: user.userId, type: Number(TEST_DEVICE.deviceType), identifier: DEVICE, organizationIds: [], installationId: relay.installationId },
      },
    ]);
    // No token in the server's log.
    expect(server.logs.text()).not.toContain('fcm-token-abc');
  });

  it('the obsolete POST does the same; a new token registers again', async () => {
    expect((await putToken(user, 'apns-2', DEVICE, 'POST')).status).toBe(200);
    expect((await tokenOf(user)).push_token).toBe('apns-2');
    expect(outbox.of('relay')).toEqual([{ kind: 'register', deviceId: (await tokenOf(user)).id }]);
  });

  it('an empty or missing token clears it and the relay forgets the device; clearing again queues nothing', async () => {
    const someone = await seedAccount(server);
    expect((await putToken(someone, 'tok')).status).toBe(200);
    outbox.clear();
    expect((await putToken(someone, '')).status).toBe(200);
    const { id, push_token } = await tokenOf(someone);
    expect(push_token).toBeNull();
    expect(outbox.of('relay')).toEqual([{ kind: 'delete', deviceId: id }]);
    outbox.clear();
    const res = await server.request('PUT', `/api/devices/identifier/${DEVICE}/token`, { token: someone.accessToken, json: {} });
    expect(res.status).toBe(200);
    expect(outbox.queued).toEqual([]);
  });

  it('refuses a token that is not printable ASCII, naming the field, and stores a token trimmed', async () => {
    const someone = await seedAccount(server);
    for (const pushToken of ['x\ud800', 'tok\u0000en', 'tök']) {
      const res = await putToken(someone, pushToken);
      expect(res.status, JSON.stringify(pushToken)).toBe(400);
      expect(JSON.stringify(res.body)).toMatch(/pushToken/);
    }
    expect((await putToken(someone, '  spaced-token  ')).status).toBe(200);
    expect((await tokenOf(someone)).push_token).toBe('spaced-token');
  });

  it("another account's device, an unknown one and a removed one are 404, and nothing is queued", async () => {
    const other = await seedAccount(server);
    const otherDevice = await tokenOf(other);
    // Both accounts logged in with the same identifier: each sets only their own device.
    expect((await putToken(user, 'mine')).status).toBe(200);
    expect((await tokenOf(other)).push_token).toBeNull();
    outbox.clear();
    expect((await putToken(user, 'x', randomUUID())).status).toBe(404);
    await server.database.db.updateTable('devices').set({ active: false }).where('id', '=', otherDevice.id).execute();
    expect((await putToken(other, 'x')).status).toBe(404);
    expect(outbox.queued).toEqual([]);
  });

  it('bad input is a 400 naming the field; no session is a 401', async () => {
    const long = await putToken(user, 'x'.repeat(256));
    expect(long.status).toBe(400);
    expect(long.text).toMatch(/pushToken/);
    expect((await putToken(user, 42)).status).toBe(400);
    expect((await putToken(null, 'x')).status).toBe(401);
    expect(outbox.queued).toEqual([]);
  });
});

describe('clear-token and device removal', () => {
  it('PUT and POST clear-token need no session, clear the token and queue push/delete; an unknown identifier is 404', async () => {
    const someone = await seedAccount(server);
    const identifier = randomUUID();
    const stamp = new Date().toISOString();
    const id = randomUUID();
    await server.database.db
      .insertInto('devices')
      .values({ id, user_id: someone.userId, type: 0, identifier, name: 'phone', push_token: 'fcm-1', creation_date: stamp, revision_date: stamp, encrypted_user_key: null, encrypted_public_key: null, encrypted_private_key: null })
      .execute();
    const res = await server.request('PUT', `/api/devices/identifier/${identifier}/clear-token`);
    expect(res.status, res.text).toBe(200);
    expect((await tokenOf(someone, identifier)).push_token).toBeNull();
    expect(outbox.of('relay')).toEqual([{ kind: 'delete', deviceId: id }]);
    await relayChannel.deliver(outbox.queued[0]?.message ?? {}, 1);
    expect(relay.calls.map((c) => [c.path, c.body])).toEqual([['/push/delete', { id }]]);
    outbox.clear();
    // Nothing left to clear: 200, nothing queued.
    expect((await server.request('POST', `/api/devices/identifier/${identifier}/clear-token`)).status).toBe(200);
    expect(outbox.queued).toEqual([]);
    expect((await server.request('PUT', `/api/devices/identifier/${randomUUID()}/clear-token`)).status).toBe(404);
  });

  it('removing a device that holds a token queues push/delete; one without a token queues nothing', async () => {
    const someone = await seedAccount(server);
    expect((await putToken(someone, 'tok')).status).toBe(200);
    const { id } = await tokenOf(someone);
    outbox.clear();
    expect((await server.request('DELETE', `/api/devices/${id}`, { token: someone.accessToken })).status).toBe(200);
    expect((await tokenOf(someone)).push_token).toBeNull();
    expect(outbox.of('relay')).toEqual([{ kind: 'delete', deviceId: id }]);
    const another = await seedAccount(server);
    outbox.clear();
    expect((await server.request('DELETE', `/api/devices/${(await tokenOf(another)).id}`, { token: another.accessToken })).status).toBe(200);
    expect(outbox.queued).toEqual([]);
  });
});

describe('a push token sent with the login', () => {
  it('is stored on a new device and registered with the relay; a known device keeps its own', async () => {
    const someone = await seedAccount(server);
    outbox.clear();
    const phone = { deviceType: '0', deviceIdentifier: randomUUID(), deviceName: 'Pixel' };
    const login = (pushToken: string) =>
      server.request('POST', '/identity/connect/token', { form: { ...passwordGrantForm(someone.account, phone), devicePushToken: pushToken } });
    const first = await login('fcm-at-login');
    expect(first.status, first.text).toBe(200);
    const device = await tokenOf(someone, phone.deviceIdentifier);
    expect(device.push_token).toBe('fcm-at-login');
    expect(outbox.of('relay')).toEqual([{ kind: 'register', deviceId: device.id }]);
    outbox.clear();
    expect((await login('another-token')).status).toBe(200);
    expect((await tokenOf(someone, phone.deviceIdentifier)).push_token).toBe('fcm-at-login');
    expect(outbox.queued).toEqual([]);
  });
});

describe('with the relay off', () => {
  it('the token is still stored (as officially) and nothing is queued', async () => {
    const offOutbox = recordingOutbox();
    const off = await startTestServer({ outbox: offOutbox });
    try {
      const someone = await seedAccount(off);
      const res = await off.request('PUT', `/api/devices/identifier/${DEVICE}/token`, { token: someone.accessToken, json: { pushToken: 'tok' } });
      expect(res.status).toBe(200);
      const row = await off.database.db.selectFrom('devices').select('push_token').where('user_id', '=', someone.userId).executeTakeFirstOrThrow();
      expect(row.push_token).toBe('tok');
      expect(offOutbox.queued).toEqual([]);
    } finally {
      await off.close();
    }
  });
});
