import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, TEST_DEVICE, type LoggedInUser } from '../../../test/support/accounts.js';
import { testClock } from '../../../test/support/clock.js';
import { ENC, eventsOf } from '../../../test/support/admin.js';
import { seedPolicy } from '../../../test/support/members.js';
import { seedMembership, seedOrganization } from '../../../test/support/orgs.js';
import { SoftAuthenticator, type Options } from '../../../test/support/soft-authenticator.js';
import { enableAuthenticator } from '../../../test/support/two-factor.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { EventType } from '../../platform/audit/event-type.js';
import { OrganizationUserType } from '../../platform/access/roles.js';
import { PolicyType } from '../policies/policy-type.js';

/**
 * Log in with a passkey through the official routes, with a software authenticator
 * (test/support/soft-authenticator.ts); test/e2e/passkey-login.browser.test.ts does it with
 * Chromium's, PRF included.
 */
const ORIGIN = 'https://vault.example.com';
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ env: { PUBLIC_URL: ORIGIN } });
});
afterAll(async () => {
  await server.close();
});

/** The keys a client wraps for a passkey's PRF output (opaque to the server). */
const KEY_SET = { encryptedUserKey: '4.aGVsbG8=', encryptedPublicKey: ENC, encryptedPrivateKey: ENC };

const api = (user: LoggedInUser, method: string, path: string, json?: unknown) => server.request(method, `/api${path}`, { token: user.accessToken, ...(json === undefined ? {} : { json }) });
const secretOf = (user: LoggedInUser) => ({ masterPasswordHash: user.account.masterPasswordHash });
const handleOf = (user: LoggedInUser) => Buffer.from(user.userId.replace(/-/g, ''), 'hex').toString('base64url');

async function creationOptions(user: LoggedInUser): Promise<{ options: Options & Record<string, unknown>; token: string }> {
  const res = await api(user, 'POST', '/webauthn/attestation-options', secretOf(user));
  expect(res.status, res.text).toBe(200);
  return res.body as { options: Options & Record<string, unknown>; token: string };
}

async function register(user: LoggedInUser, key: SoftAuthenticator, extra: Record<string, unknown> = { supportsPrf: true, ...KEY_SET }, name = 'Laptop') {
  const { options, token } = await creationOptions(user);
  return api(user, 'POST', '/webauthn', { deviceResponse: key.register(options), name, token, supportsPrf: false, ...extra });
}

async function loginOptions(): Promise<{ options: Options & Record<string, unknown>; token: string }> {
  const res = await server.request('GET', '/identity/accounts/webauthn/assertion-options');
  expect(res.status, res.text).toBe(200);
  return res.body as { options: Options & Record<string, unknown>; token: string };
}

const grant = (form: Record<string, string>, headers: Record<string, string> = {}) =>
  server.request('POST', '/identity/connect/token', { headers, form: { grant_type: 'webauthn', client_id: 'web', scope: 'api offline_access', ...TEST_DEVICE, ...form } });

async function passkeyLogin(user: LoggedInUser, key: SoftAuthenticator, overrides: Parameters<SoftAuthenticator['assert']>[1] = {}, headers: Record<string, string> = {}) {
  const { options, token } = await loginOptions();
  return grant({ token, deviceResponse: key.assert(options, { userHandle: handleOf(user), ...overrides }) }, headers);
}

describe('registering a passkey', () => {
  it('answers creation options for the configured relying party after the master password, and keeps the passkey with its keys once per token', async () => {
    const user = await createUser(server);
    expect((await api(user, 'GET', '/webauthn')).body).toEqual({ object: 'list', data: [], continuationToken: null });
    const wrong = await api(user, 'POST', '/webauthn/attestation-options', { masterPasswordHash: 'd3Jvbmc=' });
    expect(wrong.status).toBe(400);
    expect(wrong.body.validationErrors).toEqual({ masterPasswordHash: ['User verification failed.'] });

    const created = await creationOptions(user);
    expect(created).toMatchObject({
      object: 'webauthnCredentialCreateOptions',
      options: { rp: { id: 'vault.example.com' }, user: { id: handleOf(user), name: user.account.email }, attestation: 'none', authenticatorSelection: { residentKey: 'required', userVerification: 'required' }, status: 'ok' },
    });
    const key = new SoftAuthenticator(ORIGIN);
    const body = { deviceResponse: key.register(created.options), name: 'Laptop', token: created.token, supportsPrf: true, ...KEY_SET };
    const saved = await api(user, 'POST', '/webauthn', body);
    expect(saved.status, saved.text).toBe(200);
    expect(saved.body).toEqual({ object: 'webauthnCredential', id: expect.any(String), name: 'Laptop', prfStatus: 0, encryptedUserKey: KEY_SET.encryptedUserKey, encryptedPublicKey: ENC });
    expect((await api(user, 'GET', '/webauthn')).body.data).toEqual([saved.body]);

    const again = await api(user, 'POST', '/webauthn', { ...body, deviceResponse: new SoftAuthenticator(ORIGIN).register(created.options) });
    expect(again.status).toBe(400);
    expect(again.body.validationErrors).toHaveProperty('token');
    expect((await api(user, 'GET', '/webauthn')).body.data).toHaveLength(1);
  });

  it('refuses an attestation for another origin, another user\'s token, a partial key set and a malformed key, storing nothing', async () => {
    const user = await createUser(server);
    const other = await createUser(server);
    const key = new SoftAuthenticator(ORIGIN);
    const { options, token } = await creationOptions(user);
    const foreign = await api(user, 'POST', '/webauthn', { deviceResponse: key.register(options, { origin: 'https://evil.example.com' }), name: 'Key', token, supportsPrf: false });
    expect(foreign.body.validationErrors).toEqual({ deviceResponse: ['Unable to complete WebAuthn registration.'] });
    const stolen = await api(other, 'POST', '/webauthn', { deviceResponse: key.register(options), name: 'Key', token, supportsPrf: false });
    expect(stolen.body.validationErrors).toHaveProperty('token');
    const partial = await api(user, 'POST', '/webauthn', { deviceResponse: key.register(options), name: 'Key', token, supportsPrf: true, encryptedUserKey: KEY_SET.encryptedUserKey });
    expect(partial.body.validationErrors).toHaveProperty('encryptedUserKey');
    const withoutPrf = await api(user, 'POST', '/webauthn', { deviceResponse: key.register(options), name: 'Key', token, supportsPrf: false, ...KEY_SET });
    expect(withoutPrf.body.validationErrors).toHaveProperty('supportsPrf');
    const malformed = await api(user, 'POST', '/webauthn', { deviceResponse: key.register(options), name: 'Key', token, supportsPrf: true, ...KEY_SET, encryptedPrivateKey: 'not encrypted' });
    expect(malformed.status).toBe(400);
    expect(Object.keys(malformed.body.validationErrors ?? {}).join()).toMatch(/encryptedPrivateKey/i);
    for (const who of [user, other]) expect((await api(who, 'GET', '/webauthn')).body.data).toEqual([]);
  });

  it('keeps at most five passkeys, and removes one after the master password', async () => {
    const user = await createUser(server);
    for (let i = 1; i <= 5; i++) expect((await register(user, new SoftAuthenticator(ORIGIN), { supportsPrf: false }, `Key ${i}`)).status).toBe(200);
    const sixth = await api(user, 'POST', '/webauthn/attestation-options', secretOf(user));
    expect(sixth.status).toBe(400);
    expect(sixth.body.message).toMatch(/at most 5 passkeys/);

    const [first] = (await api(user, 'GET', '/webauthn')).body.data as { id: string }[];
    const stranger = await createUser(server);
    expect((await api(stranger, 'POST', `/webauthn/${first!.id}/delete`, secretOf(stranger))).status).toBe(404);
    expect((await api(user, 'POST', `/webauthn/${first!.id}/delete`, { masterPasswordHash: 'd3Jvbmc=' })).status).toBe(400);
    expect((await api(user, 'POST', `/webauthn/${first!.id}/delete`, secretOf(user))).status).toBe(200);
    expect((await api(user, 'POST', `/webauthn/${first!.id}/delete`, secretOf(user))).status).toBe(404);
    expect((await api(user, 'GET', '/webauthn')).body.data).toHaveLength(4);
    expect((await register(user, new SoftAuthenticator(ORIGIN), { supportsPrf: false })).status).toBe(200);
  });

  it('refuses passkeys while an organization requires single sign-on of a member, but not of its owner', async () => {
    const member = await createUser(server);
    const owner = await createUser(server);
    const key = new SoftAuthenticator(ORIGIN);
    expect((await register(member, key)).status).toBe(200);
    const org = await seedOrganization(server);
    await seedMembership(server, { organizationId: org, userId: member.userId, type: OrganizationUserType.User });
    await seedMembership(server, { organizationId: org, userId: owner.userId, type: OrganizationUserType.Owner });
    await seedPolicy(server, org, PolicyType.RequireSso);

    const refused = await api(member, 'POST', '/webauthn/attestation-options', secretOf(member));
    expect(refused.status).toBe(400);
    expect(refused.body.message).toBe('Passkeys cannot be created for your account. SSO login is required.');
    const login = await passkeyLogin(member, key);
    expect(login.status).toBe(400);
    expect(login.body).toMatchObject({ error: 'invalid_grant', error_description: 'Sso authentication is required.' });
    expect((await register(owner, new SoftAuthenticator(ORIGIN))).status).toBe(200);
  });
});

describe('logging in with a passkey', () => {
  it('answers anonymous options for any passkey, and logs in once per assertion with the PRF unlock option', async () => {
    const user = await createUser(server);
    const key = new SoftAuthenticator(ORIGIN);
    const saved = await register(user, key);
    const { options, token } = await loginOptions();
    expect(options).toMatchObject({ rpId: 'vault.example.com', allowCredentials: [], userVerification: 'required', status: 'ok' });

    const before = (await eventsOf(server, EventType.User_LoggedIn)).filter((e) => e.user_id === user.userId).length;
    // Sign count 0, as synced passkeys send: only the spent challenge stops the replay below.
    const assertion = key.assert(options, { userHandle: handleOf(user), counter: 0 });
    const ok = await grant({ token, deviceResponse: assertion });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body).toMatchObject({ token_type: 'Bearer', scope: 'api offline_access', Key: expect.any(String) });
    expect(typeof ok.body.refresh_token).toBe('string');
    expect(ok.body.UserDecryptionOptions.WebAuthnPrfOption).toEqual({
      EncryptedPrivateKey: ENC,
      EncryptedUserKey: KEY_SET.encryptedUserKey,
      CredentialId: key.id,
      Transports: [],
    });
    expect((await eventsOf(server, EventType.User_LoggedIn)).filter((e) => e.user_id === user.userId)).toHaveLength(before + 1);

    const sync = await server.request('GET', '/api/sync', { token: ok.body.access_token });
    expect(sync.status).toBe(200);
    expect(sync.body.userDecryption.webAuthnPrfOptions).toEqual([{ encryptedPrivateKey: ENC, encryptedUserKey: KEY_SET.encryptedUserKey, credentialId: key.id, transports: [] }]);
    expect(saved.body.prfStatus).toBe(0);

    const replay = await grant({ token, deviceResponse: assertion });
    expect(replay.status).toBe(400);
    expect(replay.body).toMatchObject({ error: 'invalid_grant', ErrorModel: { Message: 'Invalid credential.' } });
  });

  it('needs no second factor, as the passkey verified its user', async () => {
    const user = await createUser(server);
    const key = new SoftAuthenticator(ORIGIN);
    expect((await register(user, key)).status).toBe(200);
    await enableAuthenticator(server, user);
    const ok = await passkeyLogin(user, key);
    expect(ok.status, ok.text).toBe(200);
  });

  it('refuses an assertion without user verification, for another origin, with a lower counter, of another account, or with a bad token', async () => {
    const user = await createUser(server);
    const other = await createUser(server);
    const key = new SoftAuthenticator(ORIGIN);
    expect((await register(user, key)).status).toBe(200);
    const invalid = { error: 'invalid_grant', ErrorModel: { Message: 'Invalid credential.' } };
    expect((await passkeyLogin(user, key, { userVerified: false })).body).toMatchObject(invalid);
    expect((await passkeyLogin(user, key, { origin: 'https://evil.example.com' })).body).toMatchObject(invalid);
    expect((await passkeyLogin(other, key)).body).toMatchObject(invalid);
    expect((await passkeyLogin(user, key)).status).toBe(200);
    expect((await passkeyLogin(user, key, { counter: 1 })).body).toMatchObject(invalid);

    const { options } = await loginOptions();
    const forged = await grant({ token: 'not-a-token', deviceResponse: key.assert(options, { userHandle: handleOf(user) }) });
    expect(forged.body.error).toBe('invalid_request');
    expect((await grant({ token: (await loginOptions()).token })).body.error).toBe('invalid_grant');
    // The key-update token of the settings page does not log in.
    const update = await api(user, 'POST', '/webauthn/assertion-options', secretOf(user));
    expect((await grant({ token: update.body.token, deviceResponse: key.assert(update.body.options, { userHandle: handleOf(user) }) })).body.error).toBe('invalid_request');
  });

  it('logs in without an unlock option with a passkey that holds no keys, and refuses a disabled account', async () => {
    const user = await createUser(server);
    const key = new SoftAuthenticator(ORIGIN);
    expect((await register(user, key, { supportsPrf: false })).body.prfStatus).toBe(2);
    const ok = await passkeyLogin(user, key);
    expect(ok.status).toBe(200);
    expect(ok.body.UserDecryptionOptions).not.toHaveProperty('WebAuthnPrfOption');
    expect((await server.request('GET', '/api/sync', { token: ok.body.access_token })).body.userDecryption).not.toHaveProperty('webAuthnPrfOptions');

    await server.database.db.updateTable('users').set({ disabled: true }).where('id', '=', user.userId).execute();
    const disabled = await passkeyLogin(user, key);
    expect(disabled.body.error_description).toBe('This account has been disabled. Contact your administrator.');
  });
});

describe('the client version of a passkey login', () => {
  it('holds a version-2 account to clients of 2025.11.0 or later, as a password login, and not a version-1 account', async () => {
    const user = await createUser(server);
    const key = new SoftAuthenticator(ORIGIN);
    expect((await register(user, key)).status).toBe(200);
    expect((await passkeyLogin(user, key)).status).toBe(200);
    // The columns that make an account version-2 (accounts/account-keys.ts hasV2Keys).
    await server.database.db.updateTable('users').set({ wrapped_signing_key: '7.AAAA', verifying_key: 'AAAA', security_state: 'AAAA', security_version: 2 }).where('id', '=', user.userId).execute();
    const failedBefore = (await eventsOf(server, EventType.User_FailedLogIn)).filter((e) => e.user_id === user.userId).length;

    const silent = await passkeyLogin(user, key);
    expect(silent.status).toBe(400);
    expect(silent.body.error).toBe('version_header_missing');
    const old = await passkeyLogin(user, key, {}, { 'bitwarden-client-version': '2025.10.1' });
    expect(old.body).toMatchObject({ error: 'invalid_client_version', ErrorModel: { Message: 'Please update your app to continue using Bitwarden' } });
    expect((await eventsOf(server, EventType.User_FailedLogIn)).filter((e) => e.user_id === user.userId)).toHaveLength(failedBefore + 2);
    expect((await passkeyLogin(user, key, {}, { 'bitwarden-client-version': '2025.11.0' })).status).toBe(200);
  });
});

describe('wrapping the vault keys for a passkey', () => {
  it('stores the keys after an assertion by one of the caller\'s PRF passkeys, once per token', async () => {
    const user = await createUser(server);
    const key = new SoftAuthenticator(ORIGIN);
    const saved = await register(user, key, { supportsPrf: true });
    expect(saved.body.prfStatus).toBe(1);
    const started = await api(user, 'POST', '/webauthn/assertion-options', secretOf(user));
    expect(started.body).toMatchObject({ object: 'webAuthnLoginAssertionOptions', options: { rpId: 'vault.example.com', userVerification: 'required' } });
    const deviceResponse = JSON.parse(key.assert(started.body.options, { userHandle: handleOf(user) })) as unknown;
    const other = await createUser(server);
    expect((await api(other, 'PUT', '/webauthn', { deviceResponse, token: started.body.token, ...KEY_SET })).body.validationErrors).toHaveProperty('token');
    const put = await api(user, 'PUT', '/webauthn', { deviceResponse, token: started.body.token, ...KEY_SET });
    expect(put.status, put.text).toBe(200);
    expect((await api(user, 'GET', '/webauthn')).body.data).toMatchObject([{ prfStatus: 0, encryptedUserKey: KEY_SET.encryptedUserKey }]);
    expect((await api(user, 'PUT', '/webauthn', { deviceResponse, token: started.body.token, ...KEY_SET })).status).toBe(400);
    expect((await passkeyLogin(user, key)).body.UserDecryptionOptions.WebAuthnPrfOption.CredentialId).toBe(key.id);
  });

  it('refuses a passkey without PRF and a missing key', async () => {
    const user = await createUser(server);
    const key = new SoftAuthenticator(ORIGIN);
    expect((await register(user, key, { supportsPrf: false })).status).toBe(200);
    const started = await api(user, 'POST', '/webauthn/assertion-options', secretOf(user));
    const deviceResponse = JSON.parse(key.assert(started.body.options, { userHandle: handleOf(user) })) as unknown;
    const missing = await api(user, 'PUT', '/webauthn', { deviceResponse, token: started.body.token, encryptedUserKey: KEY_SET.encryptedUserKey, encryptedPublicKey: ENC });
    expect(missing.status).toBe(400);
    expect(JSON.stringify(missing.body.validationErrors)).toMatch(/encryptedPrivateKey/i);
    const refused = await api(user, 'PUT', '/webauthn', { deviceResponse, token: started.body.token, ...KEY_SET });
    expect(refused.body.validationErrors).toEqual({ deviceResponse: ['Unable to update credential.'] });
    expect((await api(user, 'GET', '/webauthn')).body.data).toMatchObject([{ prfStatus: 2, encryptedUserKey: null }]);
  });
});

describe('the anonymous login options', () => {
  it('are limited per address by the identity IP rules, like the other identity routes', async () => {
    // A still clock: no bucket refills while the requests go.
    const limited = await startTestServer({ env: { PUBLIC_URL: ORIGIN, DEPLOYMENT: 'cloud', IP_RATE_LIMITING: '' }, clock: testClock() });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) statuses.push((await limited.request('GET', '/identity/accounts/webauthn/assertion-options')).status);
      // The identity service's rule of 5 a second for any route.
      expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    } finally {
      await limited.close();
    }
  });
});
