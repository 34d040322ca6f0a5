import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, loginAccount, TEST_DEVICE, type LoggedInUser } from '../../../test/support/accounts.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';

let server: TestServer;
let user: LoggedInUser;
let other: LoggedInUser;
beforeAll(async () => {
  server = await startTestServer();
  user = await createUser(server, { email: 'Dev.Ice@Example.com' });
  other = await createUser(server, { email: 'other@example.com' });
});
afterAll(async () => server.close());

const WEB = { deviceType: '9', deviceIdentifier: '0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0', deviceName: 'chrome' };
const known = (email: string, identifier: string, encode = (e: string) => Buffer.from(e).toString('base64url')) =>
  server.request('GET', '/api/devices/knowndevice', { headers: { 'x-request-email': encode(email), 'x-device-identifier': identifier } });

describe('GET /api/devices/knowndevice', () => {
  it('is true for a device the account logged in from, anonymously, as the login page asks', async () => {
    const res = await known('dev.ice@example.com', TEST_DEVICE.deviceIdentifier);
    expect(res.status).toBe(200);
    expect(res.text).toBe('true');
    // The iOS app sends standard base64, percent-encoded; the email's case does not matter.
    expect((await known('DEV.ICE@example.com', TEST_DEVICE.deviceIdentifier, (e) => encodeURIComponent(Buffer.from(e).toString('base64')))).text).toBe('true');
  });

  it('is false for a new device and for an unknown account alike', async () => {
    expect((await known('dev.ice@example.com', WEB.deviceIdentifier)).text).toBe('false');
    expect((await known('nobody@example.com', TEST_DEVICE.deviceIdentifier)).text).toBe('false');
  });

  it('answers 400 naming a missing or undecodable header', async () => {
    const missing = await server.request('GET', '/api/devices/knowndevice', { headers: { 'x-device-identifier': WEB.deviceIdentifier } });
    expect(missing.status).toBe(400);
    expect(JSON.stringify(missing.body)).toMatch(/x-request-email/i);
    const garbage = await server.request('GET', '/api/devices/knowndevice', { headers: { 'x-request-email': '***', 'x-device-identifier': WEB.deviceIdentifier } });
    expect(garbage.status).toBe(400);
    expect(Object.keys(garbage.body.validationErrors)).toEqual(['X-Request-Email']);
  });
});

describe('GET /api/devices', () => {
  it("lists the caller's own devices, none trusted", async () => {
    await loginAccount(server, user.account, WEB);
    const res = await server.request('GET', '/api/devices', { token: user.accessToken });
    expect(res.status).toBe(200);
    expect(res.body.object).toBe('list');
    const data = res.body.data as { identifier: string; userId: string }[];
    expect(data.map((d) => d.identifier)).toEqual([TEST_DEVICE.deviceIdentifier, WEB.deviceIdentifier]);
    expect(res.body.data[1]).toMatchObject({ object: 'device', userId: user.userId, name: 'chrome', type: 9, isTrusted: false, encryptedUserKey: null });
    const others = await server.request('GET', '/api/devices', { token: other.accessToken });
    expect((others.body.data as { userId: string }[]).map((d) => d.userId)).toEqual([other.userId]);
  });

  it('finds one by identifier, and 404s a device of another account', async () => {
    const mine = await server.request('GET', `/api/devices/identifier/${TEST_DEVICE.deviceIdentifier}`, { token: user.accessToken });
    expect(mine.status).toBe(200);
    expect(mine.body).toMatchObject({ identifier: TEST_DEVICE.deviceIdentifier, userId: user.userId });
    await loginAccount(server, user.account, WEB);
    const theirs = await server.request('GET', `/api/devices/identifier/${WEB.deviceIdentifier}`, { token: other.accessToken });
    expect(theirs.status).toBe(404);
  });

  it('needs a signed-in user', async () => {
    expect((await server.request('GET', '/api/devices')).status).toBe(401);
    expect((await server.request('GET', `/api/devices/identifier/${TEST_DEVICE.deviceIdentifier}`)).status).toBe(401);
  });
});
