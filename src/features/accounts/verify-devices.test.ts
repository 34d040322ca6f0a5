import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, type LoggedInUser } from '../../../test/support/accounts.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';

let server: TestServer;
let user: LoggedInUser;
beforeAll(async () => {
  server = await startTestServer();
  user = await createUser(server);
});
afterAll(async () => server.close());

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

  it('refuses anonymous callers', async () => {
    for (const method of ['POST', 'PUT'] as const) {
      expect((await server.request(method, '/api/accounts/verify-devices', { json: { verifyDevices: false } })).status).toBe(401);
    }
  });
});
