import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, passwordGrantForm, type LoggedInUser } from '../../../test/support/accounts.js';
import { eventsOf } from '../../../test/support/admin.js';
import { SoftAuthenticator, type Options } from '../../../test/support/soft-authenticator.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { EventType } from '../../platform/audit/event-type.js';

/**
 * WebAuthn as a second factor through the official routes, with a software authenticator
 * (test/support/soft-authenticator.ts); webauthn.browser.test.ts does it with Chromium's.
 */
const ORIGIN = 'https://vault.example.com';
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ env: { PUBLIC_URL: ORIGIN } });
});
afterAll(async () => {
  await server.close();
});

const api = (user: LoggedInUser, method: string, path: string, json: unknown) => server.request(method, `/api${path}`, { token: user.accessToken, json });
const login = (user: LoggedInUser, extra: Record<string, string> = {}) =>
  server.request('POST', '/identity/connect/token', { form: { ...passwordGrantForm(user.account), ...extra } });
const secretOf = (user: LoggedInUser) => ({ masterPasswordHash: user.account.masterPasswordHash });

async function challengeOptions(user: LoggedInUser): Promise<Options> {
  const read = await api(user, 'POST', '/two-factor/get-webauthn', secretOf(user));
  expect(read.status).toBe(200);
  const started = await api(user, 'POST', '/two-factor/get-webauthn-challenge', { userVerificationToken: read.body.userVerificationToken });
  expect(started.status, started.text).toBe(200);
  return started.body.options as Options;
}

async function register(user: LoggedInUser, key: SoftAuthenticator, id: number, name = `Key ${id}`) {
  const options = await challengeOptions(user);
  return api(user, 'PUT', '/two-factor/webauthn', { ...secretOf(user), id, name, deviceResponse: key.register(options) });
}

/** The assertion options the password grant's challenge carries for provider 7. */
async function loginOptions(user: LoggedInUser): Promise<Options & { allowCredentials: { id: string }[] }> {
  const challenged = await login(user);
  expect(challenged.status).toBe(400);
  expect(challenged.body.error_description).toBe('Two factor required.');
  return challenged.body.TwoFactorProviders2['7'] as Options & { allowCredentials: { id: string }[] };
}

const INVALID = 'Two-step token is invalid. Try again.';

describe('WebAuthn registration', () => {
  it('answers the keys, options for the configured relying party, and registers a key once per challenge', async () => {
    const user = await createUser(server);
    const read = await api(user, 'POST', '/two-factor/get-webauthn', secretOf(user));
    expect(read.body).toMatchObject({ object: 'twoFactorWebAuthn', webAuthn: { enabled: false, keys: [] } });
    expect(typeof read.body.userVerificationToken).toBe('string');
    const wrong = await api(user, 'POST', '/two-factor/get-webauthn', { masterPasswordHash: 'd3Jvbmc=' });
    expect(wrong.status).toBe(400);
    expect(wrong.body.validationErrors).toEqual({ masterPasswordHash: ['User verification failed.'] });

    const options = await challengeOptions(user);
    expect(options).toMatchObject({ rp: { id: 'vault.example.com' }, attestation: 'none', status: 'ok' });
    const key = new SoftAuthenticator(ORIGIN);
    const saved = await api(user, 'PUT', '/two-factor/webauthn', { ...secretOf(user), id: 1, name: 'Desk key', deviceResponse: key.register(options) });
    expect(saved.status, saved.text).toBe(200);
    expect(saved.body).toEqual({ object: 'twoFactorWebAuthnUpdate', webAuthn: { enabled: true, keys: [{ name: 'Desk key', id: 1, migrated: false }] } });
    expect((await eventsOf(server, EventType.User_Updated2fa)).some((e) => e.user_id === user.userId)).toBe(true);
    expect((await api(user, 'GET', '/two-factor', undefined)).body.data).toEqual([{ object: 'twoFactorProvider', type: 7, enabled: true }]);

    // The challenge is spent: the same response does not register again.
    const replay = await api(user, 'PUT', '/two-factor/webauthn', { ...secretOf(user), id: 2, name: 'Again', deviceResponse: key.register(options) });
    expect(replay.status).toBe(400);
    expect(replay.body.message).toBe('Unable to complete WebAuthn registration.');
  });

  it('refuses malformed responses, another challenge, another origin, bad verification and bad slots with a 400', async () => {
    const user = await createUser(server);
    const key = new SoftAuthenticator(ORIGIN);
    const failures: [string, unknown][] = [];
    const attempt = async (body: Record<string, unknown>) => {
      const response = await api(user, 'PUT', '/two-factor/webauthn', { ...secretOf(user), id: 1, name: 'Key', ...body });
      failures.push([JSON.stringify(body).slice(0, 60), response.status]);
      return response;
    };
    let options = await challengeOptions(user);
    const garbled = await attempt({ deviceResponse: { ...key.register(options), response: { AttestationObject: 'AAAA', clientDataJson: 'AAAA' } } });
    expect(garbled.body.message).toBe('Unable to complete WebAuthn registration.');
    options = await challengeOptions(user);
    await attempt({ deviceResponse: key.register(options, { challenge: 'c29tZS1vdGhlci1jaGFsbGVuZ2U' }) });
    options = await challengeOptions(user);
    await attempt({ deviceResponse: key.register(options, { origin: 'https://evil.example.com' }) });
    // No pending challenge at all.
    await attempt({ deviceResponse: key.register(options) });
    // Schema errors name the field.
    const noResponse = await attempt({ deviceResponse: { id: key.id } });
    expect(JSON.stringify(noResponse.body.validationErrors)).toContain('response');
    const badSlot = await attempt({ id: 9, deviceResponse: key.register(options) });
    expect(JSON.stringify(badSlot.body.validationErrors)).toContain('id');
    await attempt({ deviceResponse: 'not an object' });
    options = await challengeOptions(user);
    const unverified = await api(user, 'PUT', '/two-factor/webauthn', { masterPasswordHash: 'd3Jvbmc=', id: 1, name: 'Key', deviceResponse: key.register(options) });
    expect(unverified.status).toBe(400);
    expect(unverified.body.validationErrors).toEqual({ masterPasswordHash: ['User verification failed.'] });
    const noSecret = await api(user, 'POST', '/two-factor/get-webauthn-challenge', { userVerificationToken: 'nonsense' });
    expect(noSecret.body.validationErrors).toEqual({ userVerificationToken: ['User verification failed.'] });

    expect(failures.every(([, status]) => status === 400)).toBe(true);
    // Nothing was saved.
    expect((await api(user, 'POST', '/two-factor/get-webauthn', secretOf(user))).body.webAuthn).toEqual({ enabled: false, keys: [] });
    expect((await login(user)).status).toBe(200);
  });

  it('keeps up to five keys, refuses the same key twice, and removes any but the last', async () => {
    const user = await createUser(server);
    const keys = Array.from({ length: 5 }, () => new SoftAuthenticator(ORIGIN));
    for (const [i, key] of keys.entries()) expect((await register(user, key, i + 1)).status).toBe(200);
    const full = await api(user, 'POST', '/two-factor/get-webauthn-challenge', secretOf(user));
    expect(full.status).toBe(400);
    expect(full.body.message).toBe('Maximum allowed WebAuthn credential count exceeded.');

    for (const id of [2, 3, 4]) expect((await api(user, 'DELETE', '/two-factor/webauthn', { ...secretOf(user), id })).status).toBe(200);
    const twice = await register(user, keys[0] as SoftAuthenticator, 2);
    expect(twice.status).toBe(400);
    expect(twice.body.message).toBe('This security key is already registered.');

    const unknown = await api(user, 'DELETE', '/two-factor/webauthn', { ...secretOf(user), id: 3 });
    expect(unknown.status).toBe(400);
    expect(unknown.body.message).toBe('Unable to delete WebAuthn credential.');
    const removed = await api(user, 'DELETE', '/two-factor/webauthn', { ...secretOf(user), id: 5 });
    expect(removed.body).toEqual({ object: 'twoFactorWebAuthnDelete', webAuthn: { enabled: true, keys: [{ name: 'Key 1', id: 1, migrated: false }] } });
    // The last key stays; the provider is turned off instead.
    const last = await api(user, 'DELETE', '/two-factor/webauthn', { ...secretOf(user), id: 1 });
    expect(last.status).toBe(400);
    expect(last.body.message).toBe('Unable to delete WebAuthn credential.');
    expect((await loginOptions(user)).allowCredentials.map((c) => c.id)).toEqual([(keys[0] as SoftAuthenticator).id]);
    const off = await api(user, 'PUT', '/two-factor/disable', { ...secretOf(user), type: 7 });
    expect(off.body).toEqual({ object: 'twoFactorProvider', enabled: false, type: 7 });
    expect((await eventsOf(server, EventType.User_Disabled2fa)).some((e) => e.user_id === user.userId)).toBe(true);
    expect((await login(user)).status).toBe(200);
  });
});

describe('WebAuthn at login', () => {
  it('offers assertion options for the keys and logs in once per challenge, storing the sign counter', async () => {
    const user = await createUser(server);
    const key = new SoftAuthenticator(ORIGIN);
    expect((await register(user, key, 1)).status).toBe(200);
    const challenged = await login(user);
    expect(challenged.body.TwoFactorProviders).toEqual(['7']);
    const options = challenged.body.TwoFactorProviders2['7'];
    expect(options).toMatchObject({ rpId: 'vault.example.com', userVerification: 'discouraged', allowCredentials: [{ id: key.id, type: 'public-key' }] });

    const token = key.assert(options);
    const ok = await login(user, { twoFactorToken: token, twoFactorProvider: '7' });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.access_token).toBeTruthy();
    // The challenge is spent: the same assertion fails (and is a failed login).
    const again = await login(user, { twoFactorToken: token, twoFactorProvider: '7' });
    expect(again.status).toBe(400);
    expect(again.body.ErrorModel.Message).toBe(INVALID);
    expect((await eventsOf(server, EventType.User_FailedLogIn2fa)).some((e) => e.user_id === user.userId)).toBe(true);

    // A cloned key (its counter behind the stored one) is refused; the real one goes on.
    const stale = await login(user, { twoFactorToken: key.assert(await loginOptions(user), { counter: 1 }), twoFactorProvider: '7' });
    expect(stale.body.ErrorModel.Message).toBe(INVALID);
    key.counter = 1;
    expect((await login(user, { twoFactorToken: key.assert(await loginOptions(user)), twoFactorProvider: '7' })).status).toBe(200);
    expect((await login(user, { twoFactorToken: key.assert(await loginOptions(user), { counter: 2 }), twoFactorProvider: '7' })).body.ErrorModel.Message).toBe(INVALID);
  });

  it('refuses malformed tokens, unknown keys, another challenge or origin, and tokens without a challenge', async () => {
    const user = await createUser(server);
    const key = new SoftAuthenticator(ORIGIN);
    expect((await register(user, key, 1)).status).toBe(200);
    const stranger = new SoftAuthenticator(ORIGIN);
    const tries: ((o: Options) => string)[] = [
      () => 'not json',
      () => '{"id":"x"}',
      () => JSON.stringify([1, 2]),
      (o) => stranger.assert(o),
      (o) => key.assert(o, { challenge: 'c29tZS1vdGhlci1jaGFsbGVuZ2U' }),
      (o) => key.assert(o, { origin: 'https://evil.example.com' }),
      (o) => key.assert({ ...o, rpId: 'evil.example.com' }),
    ];
    for (const make of tries) {
      const response = await login(user, { twoFactorToken: make(await loginOptions(user)), twoFactorProvider: '7' });
      expect(response.status).toBe(400);
      expect(response.body.ErrorModel.Message).toBe(INVALID);
    }
    // A valid assertion whose challenge was already spent by a failure does not log in.
    const options = await loginOptions(user);
    await login(user, { twoFactorToken: 'not json', twoFactorProvider: '7' });
    expect((await login(user, { twoFactorToken: key.assert(options), twoFactorProvider: '7' })).body.ErrorModel.Message).toBe(INVALID);
    // And a fresh one does.
    expect((await login(user, { twoFactorToken: key.assert(await loginOptions(user)), twoFactorProvider: '7' })).status).toBe(200);
  });
});
