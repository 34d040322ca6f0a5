import { createECDH, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, loginAccount, TEST_DEVICE, type LoggedInUser } from '../../../test/support/accounts.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';

let server: TestServer;
let user: LoggedInUser;
let other: LoggedInUser;
beforeAll(async () => {
  server = await startTestServer();
  user = await createUser(server, { email: 'web.push@example.com' });
  other = await createUser(server, { email: 'someone.else@example.com' });
});
afterAll(async () => server.close());

const EXTENSION = { deviceType: '2', deviceIdentifier: '3c1d2e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f', deviceName: 'chrome' };
const path = (identifier: string) => `/api/devices/identifier/${identifier}/web-push-auth`;

/** A browser's subscription, as the extension sends it (PushSubscription.toJSON(), flattened). */
function browserSubscription(endpoint = `https://fcm.googleapis.com/fcm/send/${randomBytes(8).toString('hex')}`) {
  const ecdh = createECDH('prime256v1');
  return { endpoint, p256dh: ecdh.generateKeys().toString('base64url'), auth: randomBytes(16).toString('base64url') };
}

const stored = async (identifier: string, userId: string) =>
  server.database.db
    .selectFrom('web_push_subscriptions as s')
    .innerJoin('devices as d', 'd.id', 's.device_id')
    .select(['s.endpoint', 's.p256dh', 's.auth', 'd.id'])
    .where('d.identifier', '=', identifier)
    .where('d.user_id', '=', userId)
    .executeTakeFirst();

describe('PUT /api/devices/identifier/{identifier}/web-push-auth', () => {
  it("stores the subscription of the caller's own device, and a new one replaces it", async () => {
    const first = browserSubscription();
    const res = await server.request('PUT', path(TEST_DEVICE.deviceIdentifier), { token: user.accessToken, json: first });
    expect(res.status).toBe(200);
    expect(res.text).toBe('');
    expect(await stored(TEST_DEVICE.deviceIdentifier, user.userId)).toMatchObject(first);

    const second = browserSubscription();
    // The extension before 2026 POSTs, with standard base64 keys from some browsers.
    const padded = { ...second, auth: Buffer.from(second.auth, 'base64url').toString('base64') };
    expect((await server.request('POST', path(TEST_DEVICE.deviceIdentifier), { token: user.accessToken, json: padded })).status).toBe(200);
    expect(await stored(TEST_DEVICE.deviceIdentifier, user.userId)).toMatchObject(second);
    const count = await server.database.db.selectFrom('web_push_subscriptions').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(1);
  });

  it("answers 404 for another account's device and for one never logged in from", async () => {
    await loginAccount(server, other.account, EXTENSION);
    expect((await server.request('PUT', path(EXTENSION.deviceIdentifier), { token: user.accessToken, json: browserSubscription() })).status).toBe(404);
    expect((await server.request('PUT', path('8d9e0f1a-2b3c-4d5e-8f70-8192a3b4c5d6'), { token: user.accessToken, json: browserSubscription() })).status).toBe(404);
    expect(await stored(EXTENSION.deviceIdentifier, other.userId)).toBeUndefined();
  });

  it('refuses endpoints the server must not POST to, naming the field', async () => {
    for (const endpoint of [
      'http://push.example.com/send/1',
      'https://127.0.0.1/send/1',
      'https://localhost:8443/send/1',
      'https://[::1]/send/1',
      'https://10.1.2.3/send/1',
      'https://169.254.169.254/latest/meta-data',
      'https://[::ffff:192.168.0.1]/send',
      'https://user:secret@push.example.com/send/1',
      'https://push.example.com:8443/send/1',
      'https://LOCALHOST./send/1',
      `https://push.example.com/${'\u{1F600}'.repeat(999)}`,
      'not a url',
    ]) {
      const res = await server.request('PUT', path(TEST_DEVICE.deviceIdentifier), { token: other.accessToken, json: browserSubscription(endpoint) });
      expect(res.status, endpoint).toBe(400);
      expect(Object.keys(res.body.validationErrors as object), endpoint).toEqual(['endpoint']);
    }
    expect(await stored(TEST_DEVICE.deviceIdentifier, other.userId)).toBeUndefined();
  });

  it('refuses keys no browser makes, naming the field', async () => {
    const good = browserSubscription();
    const notOnCurve = Buffer.alloc(65, 7);
    notOnCurve[0] = 4;
    const cases: [Record<string, unknown>, string][] = [
      [{ ...good, p256dh: notOnCurve.toString('base64url') }, 'p256dh'],
      [{ ...good, p256dh: randomBytes(33).toString('base64url') }, 'p256dh'],
      [{ ...good, p256dh: 'not*base64' }, 'p256dh'],
      [{ ...good, auth: randomBytes(12).toString('base64url') }, 'auth'],
    ];
    for (const [body, field] of cases) {
      const res = await server.request('PUT', path(TEST_DEVICE.deviceIdentifier), { token: other.accessToken, json: body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(Object.keys(res.body.validationErrors as object)).toEqual([field]);
    }
    const missing = await server.request('PUT', path(TEST_DEVICE.deviceIdentifier), { token: other.accessToken, json: { endpoint: good.endpoint, p256dh: good.p256dh } });
    expect(missing.status).toBe(400);
    expect(JSON.stringify(missing.body)).toMatch(/auth/);
  });

  it('needs a signed-in user', async () => {
    expect((await server.request('PUT', path(TEST_DEVICE.deviceIdentifier), { json: browserSubscription() })).status).toBe(401);
  });

  it('forgets the subscription when the device is removed, and refuses a removed device', async () => {
    await server.request('PUT', path(EXTENSION.deviceIdentifier), { token: other.accessToken, json: browserSubscription() });
    const device = await stored(EXTENSION.deviceIdentifier, other.userId);
    expect(device).toBeDefined();
    expect((await server.request('DELETE', `/api/devices/${device?.id}`, { token: other.accessToken })).status).toBe(200);
    expect(await stored(EXTENSION.deviceIdentifier, other.userId)).toBeUndefined();
    expect((await server.request('PUT', path(EXTENSION.deviceIdentifier), { token: other.accessToken, json: browserSubscription() })).status).toBe(404);
  });

  it('forgets the subscription when the app clears its token (as the official clear-token)', async () => {
    const someone = await createUser(server, { email: 'clears.token@example.com' });
    const extension = { ...EXTENSION, deviceIdentifier: '5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b' };
    const login = await loginAccount(server, someone.account, extension);
    expect((await server.request('PUT', path(extension.deviceIdentifier), { token: login.accessToken, json: browserSubscription() })).status).toBe(200);
    expect(await stored(extension.deviceIdentifier, someone.userId)).toBeDefined();
    expect((await server.request('PUT', `/api/devices/identifier/${extension.deviceIdentifier}/clear-token`)).status).toBe(200);
    expect(await stored(extension.deviceIdentifier, someone.userId)).toBeUndefined();
  });

  it('keeps the newest ten browsers of an account subscribed', async () => {
    const many = await createUser(server, { email: 'many.browsers@example.com' });
    const endpoints: string[] = [];
    for (let i = 0; i < 12; i++) {
      const browser = { deviceType: '2', deviceIdentifier: `0000000${i.toString(16)}-1111-4222-8333-444444444444`.slice(-36), deviceName: 'chrome' };
      const login = await loginAccount(server, many.account, browser);
      const subscription = browserSubscription();
      endpoints.push(subscription.endpoint);
      expect((await server.request('PUT', path(browser.deviceIdentifier), { token: login.accessToken, json: subscription })).status).toBe(200);
      await new Promise((r) => setTimeout(r, 2));
    }
    const kept = await server.database.db
      .selectFrom('web_push_subscriptions as s')
      .innerJoin('devices as d', 'd.id', 's.device_id')
      .select('s.endpoint')
      .where('d.user_id', '=', many.userId)
      .execute();
    expect(kept.map((r) => r.endpoint).sort()).toEqual(endpoints.slice(2).sort());
  });

  it('keeps subscriptions out of the log', () => {
    expect(server.logs.text()).not.toMatch(/fcm\.googleapis|p256dh/);
  });
});
