/**
 * A version-2 account as this SDK release makes one when it registers (COSE XChaCha20-Poly1305
 * user key, signing key pair, signed security state), then logs in, syncs and unlocks through the
 * SDK, as issue 41 asks.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/test-server.js';
import type * as Sdk from '@bitwarden/sdk-internal';
import { cipherCreateRequest, lastSdkExchange, registerWithSdk, sdkLogin, syncIntoSdk } from '../support/sdk-internal.js';

let server: TestServer;
let account: Awaited<ReturnType<typeof registerWithSdk>>;

// One registration for the file: the SDK's default Argon2id takes seconds in WASM.
beforeAll(async () => {
  server = await startTestServer();
  account = await registerWithSdk(server, 'v2@example.com');
}, 240_000);

afterAll(async () => {
  await server?.close();
});

describe('a version-2 account made by the SDK', () => {
  it('is made by the SDK registration itself, which posts its keys to register/finish', () => {
    expect(lastSdkExchange('POST', '/identity/accounts/register/finish').status).toBe(200);
    expect(account.registration.account_cryptographic_state).toHaveProperty('V2');
  });

  // The SDK seals a version-2 account's items whole (`data`, no name): Strongroom must keep the
  // account's keys from the registration and take the sealed item for this to pass.
  it('logs in, unlocks, writes an item and decrypts it after a sync', async () => {
    const session = await sdkLogin(server, account);
    expect(session.login.wrappedAccountCryptoState).toHaveProperty('V2');
    const login: Sdk.LoginView = { username: 'alice', password: 'pw', passwordRevisionDate: undefined, uris: undefined, totp: undefined, autofillOnPageLoad: undefined, fido2Credentials: undefined };
    await session.client.vault().ciphers().create(cipherCreateRequest('v2 login', { login }));
    const sync = await syncIntoSdk(server, session);
    expect(session.state.get('account_cryptographic_state')).toEqual(account.registration.account_cryptographic_state);
    expect((sync.userDecryption as { userKeyId: string | null }).userKeyId).toBeTruthy();
    const { successes, failures } = await session.client.vault().ciphers().get_all();
    expect(failures).toEqual([]);
    expect(successes.map((c) => c.login?.username)).toEqual(['alice']);
  });
});
