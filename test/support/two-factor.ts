import { expect } from 'vitest';
import { totpCode } from '../../src/features/two-factor/totp.js';
import type { LoggedInUser } from './accounts.js';
import type { TestServer } from './test-server.js';

/**
 * Turns the user's authenticator app on through the official routes, with a code for `now`, and
 * answers its key. That code is spent: a login needs the next time step's.
 */
export async function enableAuthenticator(server: TestServer, user: LoggedInUser, now: Date = new Date()): Promise<string> {
  const read = await server.request('POST', '/api/two-factor/get-authenticator', { token: user.accessToken, json: { masterPasswordHash: user.account.masterPasswordHash } });
  const key = String(read.body.authenticator.key);
  const put = await server.request('PUT', '/api/two-factor/authenticator', {
    token: user.accessToken,
    json: { key, token: await totpCode(key, now), userVerificationToken: read.body.userVerificationToken },
  });
  expect(put.status, put.text).toBe(200);
  return key;
}
