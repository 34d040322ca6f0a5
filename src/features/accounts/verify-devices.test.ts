import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, loginAccount, passwordGrantForm, registerAccount, type LoggedInUser } from '../../../test/support/accounts.js';
import { testClock } from '../../../test/support/clock.js';
import { startSmtpSink, type SmtpSink } from '../../../test/support/smtp-sink.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';

let server: TestServer;
let sink: SmtpSink;
let user: LoggedInUser;
const clock = testClock(new Date('2026-11-24T10:00:00Z'));
const NEW_DEVICE = { deviceType: '9', deviceIdentifier: 'e7d3a4b2-3f4e-4c3f-9b1a-1f2e3d4c5b6a', deviceName: 'chrome' };

beforeAll(async () => {
  sink = await startSmtpSink();
  // New-device verification on, so the switch's effect on a login can be seen.
  server = await startTestServer({ clock, env: { ...sink.env, NEW_DEVICE_VERIFICATION: 'true' } });
  user = await createUser(server);
});
afterAll(async () => {
  await server.close();
  await sink.close();
});

const profileSetting = async () => ((await server.request('GET', '/api/accounts/profile', { token: user.accessToken })).body as { verifyDevices: boolean }).verifyDevices;

describe('new-device login protection (/api/accounts/verify-devices)', () => {
  it('turns off with POST, as the web vault sends, and on again with PUT', async () => {
    expect(await profileSetting()).toBe(true);
    const off = await server.request('POST', '/api/accounts/verify-devices', { token: user.accessToken, json: { masterPasswordHash: user.account.masterPasswordHash, verifyDevices: false } });
    expect(off.status).toBe(200);
    expect(await profileSetting()).toBe(false);
    const on = await server.request('PUT', '/api/accounts/verify-devices', { token: user.accessToken, json: { masterPasswordHash: user.account.masterPasswordHash, verifyDevices: true } });
    expect(on.status).toBe(200);
    expect(await profileSetting()).toBe(true);
  });

  it('refuses a wrong master password hash and changes nothing', async () => {
    const res = await server.request('POST', '/api/accounts/verify-devices', { token: user.accessToken, json: { masterPasswordHash: 'bm90IHRoZSBoYXNo', verifyDevices: false } });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toContain('masterPasswordHash');
    expect(await profileSetting()).toBe(true);
  });

  it('names a missing verifyDevices', async () => {
    const res = await server.request('POST', '/api/accounts/verify-devices', { token: user.accessToken, json: { masterPasswordHash: user.account.masterPasswordHash } });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toContain('verifyDevices');
  });

  it('lets a login from a new device through without a mailed code once turned off', async () => {
    const account = await registerAccount(server);
    await server.database.db.updateTable('users').set({ email_verified: true }).where('email', '=', account.email).execute();
    await loginAccount(server, account);
    // New-device verification spares accounts in their first day; the known device is never asked.
    clock.advance(25 * 3_600_000);
    const owner = await loginAccount(server, account);
    const form = passwordGrantForm(account, NEW_DEVICE);
    const asked = await server.request('POST', '/identity/connect/token', { form });
    expect(asked.status).toBe(400);
    expect(asked.body).toMatchObject({ error: 'device_error' });
    const off = await server.request('POST', '/api/accounts/verify-devices', { token: owner.accessToken, json: { masterPasswordHash: account.masterPasswordHash, verifyDevices: false } });
    expect(off.status).toBe(200);
    expect((await server.request('POST', '/identity/connect/token', { form })).status).toBe(200);
  });

  it('refuses anonymous callers', async () => {
    for (const method of ['POST', 'PUT'] as const) {
      expect((await server.request(method, '/api/accounts/verify-devices', { json: { verifyDevices: false } })).status).toBe(401);
    }
  });
});
