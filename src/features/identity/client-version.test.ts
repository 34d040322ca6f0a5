import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, loginAccount, passwordGrantForm, TEST_DEVICE, type LoggedInUser } from '../../../test/support/accounts.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';

/**
 * The official BaseRequestValidator checks the client version for every grant, so a login with
 * a device's approved request (its access code in place of the password) is held to it too.
 */
let server: TestServer;
let user: LoggedInUser;
const NEW_DEVICE = { deviceType: '9', deviceIdentifier: randomUUID(), deviceName: 'chrome' };

beforeAll(async () => {
  server = await startTestServer();
  user = await createUser(server);
  // The official default lets only a device the account used before ask.
  await loginAccount(server, user.account, NEW_DEVICE);
});
afterAll(async () => server?.close());

const logIn = (id: string, accessCode: string, headers: Record<string, string>) =>
  server.request('POST', '/identity/connect/token', { headers, form: { ...passwordGrantForm(user.account, NEW_DEVICE), password: accessCode, authRequest: id } });

describe('a login with an approved device request to a version-2 account', () => {
  it('is refused from a client without the version header or older than 2025.11.0, and the request still logs in a current one', async () => {
    const accessCode = 'the-access-code';
    const asked = await server.request('POST', '/api/auth-requests', {
      headers: { 'device-type': NEW_DEVICE.deviceType, 'device-identifier': NEW_DEVICE.deviceIdentifier },
      json: { email: user.account.email, publicKey: Buffer.from('a public key').toString('base64'), deviceIdentifier: NEW_DEVICE.deviceIdentifier, accessCode, type: 0 },
    });
    expect(asked.status, asked.text).toBe(200);
    const id = asked.body.id as string;
    const approved = await server.request('PUT', `/api/auth-requests/${id}`, { token: user.accessToken, json: { deviceIdentifier: TEST_DEVICE.deviceIdentifier, requestApproved: true, key: '4.aGVsbG8=' } });
    expect(approved.status, approved.text).toBe(200);
    // The columns that make an account version-2 (accounts/account-keys.ts hasV2Keys).
    await server.database.db.updateTable('users').set({ wrapped_signing_key: '7.AAAA', verifying_key: 'AAAA', security_state: 'AAAA', security_version: 2 }).where('id', '=', user.userId).execute();

    expect((await logIn(id, accessCode, {})).body.error).toBe('version_header_missing');
    expect((await logIn(id, accessCode, { 'bitwarden-client-version': '2025.10.0' })).body.error).toBe('invalid_client_version');
    // Refused before the request is spent: the updated client logs in with it.
    const ok = await logIn(id, accessCode, { 'bitwarden-client-version': '2025.11.0' });
    expect(ok.status, ok.text).toBe(200);
  });
});
