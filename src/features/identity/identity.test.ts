import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify, SignJWT, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, loginAccount, registerAccount, TEST_DEVICE, testAccount } from '../../../test/support/accounts.js';
import { freshEmail } from '../../../test/support/admin.js';
import { testClock } from '../../../test/support/clock.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';

// One server for the file, and one on a test clock for the tests that move time (each moves it
// forward from tokens it made itself); each test makes its own accounts (fresh emails). Tests with
// limits of their own start a server of their own.
let server: TestServer;
const clock = testClock();
let clocked: TestServer;
beforeAll(async () => {
  server = await startTestServer();
  clocked = await startTestServer({ clock });
});
afterAll(async () => {
  await server.close();
  await clocked.close();
});

/** What `s` logged since `from` (a count of lines): the lines this test caused. */
const logsSince = (s: TestServer, from: number) => s.logs.lines.slice(from).join('\n');

function passwordForm(username: string, password: string, extra: Record<string, string> = {}) {
  return { grant_type: 'password', username, password, scope: 'api offline_access', client_id: 'cli', ...TEST_DEVICE, ...extra };
}

describe('password grant', () => {
  it('returns a JWT and every field the official clients require', async () => {
    const email = freshEmail('alice');
    const account = await registerAccount(server, { email, name: 'Alice' });
    const res = await server.request('POST', '/identity/connect/token', { form: passwordForm(email.replace('alice', 'Alice').replace('example', 'Example'), account.masterPasswordHash) });
    expect(res.status).toBe(200);
    const body = res.body;
    expect(body).toMatchObject({
      expires_in: 3600,
      token_type: 'Bearer',
      scope: 'api offline_access',
      Key: account.encryptedUserKey,
      PrivateKey: account.encryptedPrivateKey,
      Kdf: 0,
      KdfIterations: account.iterations,
      ForcePasswordReset: false,
      ResetMasterPassword: false,
      MasterPasswordPolicy: { Object: 'masterPasswordPolicy' },
      AccountKeys: {
        publicKeyEncryptionKeyPair: { wrappedPrivateKey: account.encryptedPrivateKey, publicKey: account.publicKeyB64, object: 'publicKeyEncryptionKeyPair' },
        object: 'privateKeys',
      },
      UserDecryptionOptions: {
        HasMasterPassword: true,
        MasterPasswordUnlock: {
          Kdf: { KdfType: 0, Iterations: account.iterations },
          MasterKeyEncryptedUserKey: account.encryptedUserKey,
          MasterKeyWrappedUserKey: account.encryptedUserKey,
          Salt: email,
        },
        Object: 'userDecryptionOptions',
      },
    });
    expect(body.refresh_token).toEqual(expect.any(String));
    expect(body).not.toHaveProperty('KdfMemory');

    expect(decodeProtectedHeader(body.access_token)).toMatchObject({ alg: 'RS256', typ: 'at+jwt' });
    const claims = decodeJwt(body.access_token);
    expect(claims).toMatchObject({
      email,
      name: 'Alice',
      email_verified: false,
      premium: true,
      device: TEST_DEVICE.deviceIdentifier,
      client_id: 'cli',
      scope: ['api', 'offline_access'],
      amr: ['Application'],
    });
    expect(claims.sub).toMatch(/^[0-9a-f-]{36}$/);
    expect(claims.sstamp).toEqual(expect.any(String));
    expect((claims.exp ?? 0) - (claims.iat ?? 0)).toBe(3600);
  });

  it('answers a wrong password and an unknown account alike, as the clients expect', async () => {
    const account = await registerAccount(server, { email: freshEmail('bob') });
    for (const form of [passwordForm(account.email, 'bm90IHRoZSBoYXNo'), passwordForm('nobody@example.com', account.masterPasswordHash)]) {
      const res = await server.request('POST', '/identity/connect/token', { form });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        error: 'invalid_grant',
        error_description: 'invalid_username_or_password',
        ErrorModel: { Message: 'Username or password is incorrect. Try again.', Object: 'error' },
      });
    }
  });

  it('requires device information', async () => {
    const account = await registerAccount(server);
    const form: Record<string, string> = passwordForm(account.email, account.masterPasswordHash);
    delete form.deviceIdentifier;
    const res = await server.request('POST', '/identity/connect/token', { form });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'device_error', error_description: 'No device information provided' });
  });

  it('takes the device type by its enum name as the official server does, and refuses an unknown one', async () => {
    // The clients' SDK login sends the name (deviceType=SDK); the official server parses either.
    const account = await registerAccount(server);
    const named = await server.request('POST', '/identity/connect/token', { form: passwordForm(account.email, account.masterPasswordHash, { deviceType: 'SDK' }) });
    expect(named.status).toBe(200);
    const device = await server.database.db.selectFrom('devices').select('type').where('user_id', '=', decodeJwt(named.body.access_token).sub as string).executeTakeFirstOrThrow();
    expect(device.type).toBe(21);
    for (const deviceType of ['Sdk', 'Nonsense', '256', '-1']) {
      const res = await server.request('POST', '/identity/connect/token', { form: passwordForm(account.email, account.masterPasswordHash, { deviceType }) });
      expect(res.status, deviceType).toBe(400);
      expect(res.body.error, deviceType).toBe('device_error');
    }
  });

  it('refuses unknown clients, scopes and grant types, and a missing grant type', async () => {
    const account = await registerAccount(server);
    const post = (form: Record<string, string>) => server.request('POST', '/identity/connect/token', { form });
    expect((await post(passwordForm(account.email, account.masterPasswordHash, { client_id: 'evil' }))).body.error).toBe('invalid_client');
    expect((await post(passwordForm(account.email, account.masterPasswordHash, { scope: 'api.secrets' }))).body.error).toBe('invalid_scope');
    expect((await post({ grant_type: 'implicit' })).body.error).toBe('unsupported_grant_type');
    // The SSO code grant is served (docs/sso.md); without its fields it is a bad request.
    expect((await post({ grant_type: 'authorization_code' })).body.error).toBe('invalid_request');
    const missing = await post({});
    expect(missing.status).toBe(400);
    expect(missing.body.error).toBe('invalid_request');
  });

  it('throttles repeated failures per account with a clear 429, even for the right password', async () => {
    // A limit of its own, which only this test uses.
    const s = await startTestServer({ env: { LOGIN_ATTEMPTS_PER_ACCOUNT: '3' } });
    try {
      const account = await registerAccount(s);
      for (let i = 0; i < 3; i++) {
        expect((await s.request('POST', '/identity/connect/token', { form: passwordForm(account.email, 'd3Jvbmc=') })).status).toBe(400);
      }
      const blocked = await s.request('POST', '/identity/connect/token', { form: passwordForm(account.email, account.masterPasswordHash) });
      expect(blocked.status).toBe(429);
      expect(blocked.body.error).toBe('invalid_grant');
      expect(blocked.body.ErrorModel.Message).toMatch(/Try again in \d+ seconds/);
      expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    } finally {
      await s.close();
    }
  });

  it('lets a throttled account in again once the window has passed', async () => {
    // A limit and a window of its own, which only this test uses.
    const windowClock = testClock();
    const s = await startTestServer({ clock: windowClock, env: { LOGIN_ATTEMPTS_PER_ACCOUNT: '2', LOGIN_ATTEMPT_WINDOW_SECONDS: '60' } });
    try {
      const account = await registerAccount(s);
      for (let i = 0; i < 2; i++) await s.request('POST', '/identity/connect/token', { form: passwordForm(account.email, 'd3Jvbmc=') });
      expect((await s.request('POST', '/identity/connect/token', { form: passwordForm(account.email, account.masterPasswordHash) })).status).toBe(429);
      windowClock.advance(61_000);
      expect((await s.request('POST', '/identity/connect/token', { form: passwordForm(account.email, account.masterPasswordHash) })).status).toBe(200);
    } finally {
      await s.close();
    }
  });

  it('throttles per client IP across accounts', async () => {
    // Fresh: once throttled, the tests' only address (127.0.0.1) could not log in to it again.
    const s = await startTestServer({ env: { LOGIN_ATTEMPTS_PER_IP: '2' } });
    try {
      const a = await registerAccount(s);
      const b = await registerAccount(s);
      await s.request('POST', '/identity/connect/token', { form: passwordForm(a.email, 'd3Jvbmc=') });
      await s.request('POST', '/identity/connect/token', { form: passwordForm('ghost@example.com', 'd3Jvbmc=') });
      expect((await s.request('POST', '/identity/connect/token', { form: passwordForm(b.email, b.masterPasswordHash) })).status).toBe(429);
    } finally {
      await s.close();
    }
  });

  it('records successful and failed logins as audit events', async () => {
    const account = await registerAccount(server);
    await server.request('POST', '/identity/connect/token', { form: passwordForm(account.email, 'd3Jvbmc=') });
    const user = await loginAccount(server, account);
    const events = await server.database.db.selectFrom('events').selectAll().where('user_id', '=', user.userId).orderBy('seq').execute();
    expect(events.map((e) => [e.type, e.user_id, e.device_type])).toEqual([
      [1005, user.userId, 25],
      [1000, user.userId, 25],
    ]);
    expect(events[0]?.ip_address).toBe('127.0.0.1');
  });
});

describe('access tokens', () => {
  it('authorize API calls and are refused when tampered with, forged or expired', async () => {
    const user = await createUser(clocked);
    expect((await clocked.request('GET', '/api/accounts/profile', { token: user.accessToken })).status).toBe(200);

    const [header, payload, signature] = user.accessToken.split('.');
    const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString());
    const tampered = `${header}.${Buffer.from(JSON.stringify({ ...claims, sub: '00000000-0000-0000-0000-000000000000' })).toString('base64url')}.${signature}`;
    expect((await clocked.request('GET', '/api/accounts/profile', { token: tampered })).status).toBe(401);

    const { privateKey } = await generateKeyPair('RS256');
    const forged = await new SignJWT(claims).setProtectedHeader({ alg: 'RS256', typ: 'at+jwt' }).sign(privateKey);
    expect((await clocked.request('GET', '/api/accounts/profile', { token: forged })).status).toBe(401);
    expect((await clocked.request('GET', '/api/accounts/profile', { token: 'not-a-jwt' })).status).toBe(401);
    expect((await clocked.request('GET', '/api/accounts/profile')).status).toBe(401);

    clock.advance(3601_000);
    expect((await clocked.request('GET', '/api/accounts/profile', { token: user.accessToken })).status).toBe(401);
  });

  it('verify against the published JWKS and OpenID configuration', async () => {
    const user = await createUser(server);
    const discovery = await server.request('GET', '/identity/.well-known/openid-configuration');
    expect(discovery.status).toBe(200);
    expect(discovery.body).toMatchObject({
      issuer: server.config.identityUrl,
      token_endpoint: `${server.config.identityUrl}/connect/token`,
      grant_types_supported: expect.arrayContaining(['password', 'refresh_token', 'client_credentials']),
    });
    const jwks = await server.request('GET', '/identity/.well-known/openid-configuration/jwks');
    const { payload } = await jwtVerify(user.accessToken, createLocalJWKSet(jwks.body), { issuer: discovery.body.issuer });
    expect(payload.sub).toBe(user.userId);
    expect(JSON.stringify(jwks.body)).not.toMatch(/"d"|"p"|"q"/);
  });

  it('are signed by one persisted key shared by every instance on the database', async () => {
    const user = await createUser(server);
    const second = await startTestServer({ databaseUrl: server.config.databaseUrl });
    try {
      // SQLite in memory is private to each server; the shared-key case needs a shared database.
      if (server.database.engine === 'postgres') {
        expect((await second.request('GET', '/api/accounts/profile', { token: user.accessToken })).status).toBe(200);
      }
      const keys = await server.database.db.selectFrom('server_keys').selectAll().execute();
      expect(keys).toHaveLength(1);
    } finally {
      await second.close();
    }
  });
});

describe('refresh tokens', () => {
  const refreshOn = (s: TestServer, token: string, clientId = 'cli') =>
    s.request('POST', '/identity/connect/token', { form: { grant_type: 'refresh_token', client_id: clientId, refresh_token: token } });
  const refreshWith = (token: string, clientId = 'cli') => refreshOn(server, token, clientId);

  it('rotate: a used token stays good for the grace window, then its reuse revokes the family', async () => {
    const logsFrom = clocked.logs.lines.length;
    const user = await createUser(clocked);
    const other = await loginAccount(clocked, user.account, { deviceIdentifier: 'b2c3d4e5-0000-4000-8000-000000000000' });
    const first = await refreshOn(clocked, user.refreshToken);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ token_type: 'Bearer', expires_in: 3600, Key: user.account.encryptedUserKey });
    expect(first.body.refresh_token).not.toBe(user.refreshToken);
    expect((await clocked.request('GET', '/api/accounts/profile', { token: first.body.access_token })).status).toBe(200);
    expect((await refreshOn(clocked, user.refreshToken, 'web')).status).toBe(400);

    // A retry inside the window (a lost answer) gets a working successor of its own.
    clock.advance(59_000);
    const retry = await refreshOn(clocked, user.refreshToken);
    expect(retry.status).toBe(200);
    const second = await refreshOn(clocked, first.body.refresh_token);
    expect(second.status).toBe(200);

    // Past the window the old token is a replay: every token of that login goes, the other login stays.
    clock.advance(2_000);
    const replay = await refreshOn(clocked, user.refreshToken);
    expect(replay.status).toBe(400);
    expect(replay.body.error).toBe('invalid_grant');
    for (const token of [second.body.refresh_token, retry.body.refresh_token, first.body.refresh_token]) {
      expect((await refreshOn(clocked, token)).body.error).toBe('invalid_grant');
    }
    expect(logsSince(clocked, logsFrom)).toContain('refresh token reused after rotation');
    expect((await refreshOn(clocked, other.refreshToken)).status).toBe(200);
  });

  it('two refreshes with one token at once both succeed, and both successors work', async () => {
    const user = await createUser(server);
    const answers = await Promise.all([refreshWith(user.refreshToken), refreshWith(user.refreshToken)]);
    expect(answers.map((res) => res.status)).toEqual([200, 200]);
    const [a, b] = answers.map((res) => res.body as { access_token: string; refresh_token: string });
    expect(a!.refresh_token).not.toBe(b!.refresh_token);
    for (const body of [a!, b!]) {
      expect((await server.request('GET', '/api/accounts/profile', { token: body.access_token })).status).toBe(200);
      expect((await refreshWith(body.refresh_token)).status).toBe(200);
    }
  });

  it('a password change ends every refresh token, used or not, inside the grace window too', async () => {
    const email = freshEmail('rita');
    const user = await createUser(server, { email });
    const used = await refreshWith(user.refreshToken);
    expect(used.status).toBe(200);
    const next = testAccount(email, 'another long passphrase');
    const changed = await server.request('POST', '/api/accounts/password', {
      token: used.body.access_token,
      json: { masterPasswordHash: user.account.masterPasswordHash, newMasterPasswordHash: next.masterPasswordHash, key: next.encryptedUserKey },
    });
    expect(changed.status).toBe(200);
    for (const token of [user.refreshToken, used.body.refresh_token]) {
      expect((await refreshWith(token)).body.error).toBe('invalid_grant');
    }
  });

  it('expire after their lifetime', async () => {
    // A lifetime of its own, which only this test uses.
    const lifetimeClock = testClock();
    const s = await startTestServer({ clock: lifetimeClock, env: { REFRESH_TOKEN_LIFETIME_DAYS: '1' } });
    try {
      const user = await createUser(s);
      lifetimeClock.advance(86_401_000);
      const res = await s.request('POST', '/identity/connect/token', {
        form: { grant_type: 'refresh_token', client_id: 'cli', refresh_token: user.refreshToken },
      });
      expect(res.body.error).toBe('invalid_grant');
    } finally {
      await s.close();
    }
  });

  it('and access tokens stop working at once when the security stamp changes', async () => {
    const user = await createUser(server);
    const other = await loginAccount(server, user.account, { deviceIdentifier: 'b2c3d4e5-0000-4000-8000-000000000000' });
    const rotated = await server.request('POST', '/api/accounts/security-stamp', {
      token: user.accessToken,
      json: { masterPasswordHash: user.account.masterPasswordHash },
    });
    expect(rotated.status).toBe(200);
    for (const token of [user.accessToken, other.accessToken]) {
      expect((await server.request('GET', '/api/accounts/profile', { token })).status).toBe(401);
    }
    for (const token of [user.refreshToken, other.refreshToken]) {
      const res = await server.request('POST', '/identity/connect/token', { form: { grant_type: 'refresh_token', client_id: 'cli', refresh_token: token } });
      expect(res.body.error).toBe('invalid_grant');
    }
  });
});

describe('personal API key (client_credentials)', () => {
  it('logs in with user.<id> and the API key, without a refresh token', async () => {
    const user = await createUser(server);
    const key = await server.request('POST', '/api/accounts/api-key', { token: user.accessToken, json: { masterPasswordHash: user.account.masterPasswordHash } });
    expect(key.body).toMatchObject({ object: 'apiKey', apiKey: expect.stringMatching(/^[A-Za-z0-9]{30}$/) });
    const form = { grant_type: 'client_credentials', scope: 'api', client_id: `user.${user.userId}`, client_secret: key.body.apiKey, ...TEST_DEVICE };
    const res = await server.request('POST', '/identity/connect/token', { form });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ token_type: 'Bearer', scope: 'api', Key: user.account.encryptedUserKey, Kdf: 0 });
    expect(res.body).not.toHaveProperty('refresh_token');
    expect(decodeJwt(res.body.access_token)).toMatchObject({ sub: user.userId, client_id: `user.${user.userId}`, scope: ['api'] });
    expect((await server.request('GET', '/api/accounts/profile', { token: res.body.access_token })).status).toBe(200);

    const wrong = await server.request('POST', '/identity/connect/token', { form: { ...form, client_secret: 'x'.repeat(30) } });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toBe('invalid_client');
    const badId = await server.request('POST', '/identity/connect/token', { form: { ...form, client_id: 'user.nope' } });
    expect(badId.body.error).toBe('invalid_client');
  });
});
