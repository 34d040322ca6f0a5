import { afterEach, describe, expect, it } from 'vitest';
import { createUser, loginAccount, registerAccount, testAccount } from '../../../test/support/accounts.js';
import { registerFinishBody } from '../../../test/support/bw-crypto.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const finish = (s: TestServer, body: unknown) => s.request('POST', '/identity/accounts/register/finish', { json: body });

describe('registration', () => {
  it('stores the account with a server-side re-hash of the master password hash', async () => {
    server = await startTestServer();
    const account = await registerAccount(server, { email: 'Carol@Example.com', name: 'Carol' });
    const row = await server.database.db.selectFrom('users').selectAll().executeTakeFirstOrThrow();
    expect(row).toMatchObject({
      email: 'carol@example.com',
      name: 'Carol',
      key: account.encryptedUserKey,
      public_key: account.publicKeyB64,
      private_key: account.encryptedPrivateKey,
      kdf: 0,
      kdf_iterations: 600_000,
      kdf_memory: null,
    });
    expect(row.master_password_hash).not.toContain(account.masterPasswordHash);
    expect(row.master_password_hash).toMatch(/^pbkdf2-sha256\$100000\$[A-Za-z0-9+/=]{24}\$[A-Za-z0-9+/=]{44}$/);
  });

  it('salts each re-hash differently', async () => {
    server = await startTestServer();
    const a = testAccount('same1@example.com', 'same password');
    const b = testAccount('same2@example.com', 'same password');
    await finish(server, registerFinishBody(a));
    await finish(server, registerFinishBody({ ...b, masterPasswordHash: a.masterPasswordHash }));
    const rows = await server.database.db.selectFrom('users').select('master_password_hash').execute();
    expect(rows[0]?.master_password_hash).not.toBe(rows[1]?.master_password_hash);
  });

  it('keeps emails unique regardless of letter case', async () => {
    server = await startTestServer();
    await registerAccount(server, { email: 'dave@example.com' });
    const again = testAccount('DAVE@example.com');
    const res = await finish(server, registerFinishBody(again));
    expect(res.status).toBe(400);
    expect(res.body.validationErrors).toEqual({ email: ["Email 'dave@example.com' is already taken."] });
  });

  it('refuses weak or inconsistent KDF settings and foreign salts, writing nothing', async () => {
    server = await startTestServer();
    const account = testAccount('erin@example.com');
    const body = registerFinishBody(account);
    const cases: [unknown, string][] = [
      [{ ...body, kdfIterations: 5000, masterPasswordAuthentication: undefined, masterPasswordUnlock: undefined }, 'kdfIterations'],
      [{ ...body, kdf: 1, kdfIterations: 3, kdfMemory: 4, kdfParallelism: 1, masterPasswordAuthentication: undefined, masterPasswordUnlock: undefined }, 'kdfMemory'],
      [{ ...body, kdfIterations: 700_000 }, 'kdf'],
      [{ ...body, masterPasswordUnlock: { ...(body.masterPasswordUnlock as object), salt: 'someone@else.com' } }, 'masterPasswordUnlock.salt'],
      [{ ...body, masterPasswordUnlock: { ...(body.masterPasswordUnlock as object), masterKeyWrappedUserKey: 'not encrypted' } }, 'key'],
      [{ ...body, userAsymmetricKeys: { publicKey: account.publicKeyB64, encryptedPrivateKey: 'plain' } }, 'encryptedPrivateKey'],
      [{ ...body, email: 'not-an-email' }, 'email'],
    ];
    for (const [payload, field] of cases) {
      const res = await finish(server, payload);
      expect(res.status, field).toBe(400);
      expect(Object.keys(res.body.validationErrors ?? {}), JSON.stringify(res.body)).toContain(field);
    }
    expect(await server.database.db.selectFrom('users').selectAll().execute()).toEqual([]);
  });

  it('accepts the spec\'s /api/accounts/register with the flat shape', async () => {
    server = await startTestServer();
    const account = testAccount('frank@example.com');
    const res = await server.request('POST', '/api/accounts/register', {
      json: {
        email: account.email,
        name: 'Frank',
        masterPasswordHash: account.masterPasswordHash,
        key: account.encryptedUserKey,
        keys: { publicKey: account.publicKeyB64, encryptedPrivateKey: account.encryptedPrivateKey },
        kdf: 0,
        kdfIterations: account.iterations,
      },
    });
    expect(res.status).toBe(200);
    await loginAccount(server, account);
  });

  it('finishes with a verification token from send-verification-email, which carries the name', async () => {
    server = await startTestServer();
    const account = testAccount('gina@example.com');
    const start = await server.request('POST', '/identity/accounts/register/send-verification-email', { json: { email: account.email, name: 'Gina' } });
    expect(start.status).toBe(200);
    expect(typeof start.body).toBe('string');
    const body = { ...registerFinishBody(account), emailVerificationToken: start.body };
    delete (body as Record<string, unknown>).name;
    expect((await finish(server, body)).status).toBe(200);
    const row = await server.database.db.selectFrom('users').select('name').executeTakeFirstOrThrow();
    expect(row.name).toBe('Gina');
    const forged = await finish(server, { ...registerFinishBody(testAccount('hal@example.com')), emailVerificationToken: start.body });
    expect(forged.status).toBe(400);
  });

  it('refuses email addresses with control characters, writing nothing', async () => {
    server = await startTestServer();
    for (const email of ['a\u0000b@example.com', 'bell\u0007@example.com', 'esc@exam\u001bple.com']) {
      const res = await finish(server, { ...registerFinishBody(testAccount('clean@example.com')), email });
      expect(res.status, JSON.stringify(email)).toBe(400);
      expect(res.body.validationErrors, JSON.stringify(email)).toHaveProperty('email');
      const start = await server.request('POST', '/identity/accounts/register/send-verification-email', { json: { email } });
      expect(start.status, JSON.stringify(email)).toBe(400);
    }
    expect(await server.database.db.selectFrom('users').select('id').execute()).toEqual([]);
  });

  it('can be closed by a setting', async () => {
    server = await startTestServer({ env: { REGISTRATION_ENABLED: 'false' } });
    const res = await finish(server, registerFinishBody(testAccount('ivy@example.com')));
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('Open registration has been disabled by the system administrator.');
    const config = await server.request('GET', '/api/config');
    expect(config.body.settings.disableUserRegistration).toBe(true);
  });
});

describe('prelogin', () => {
  it('returns the account\'s KDF settings in both shapes on both paths', async () => {
    server = await startTestServer();
    await registerAccount(server, { email: 'jack@example.com' });
    for (const path of ['/identity/accounts/prelogin/password', '/identity/accounts/prelogin']) {
      const res = await server.request('POST', path, { json: { email: ' Jack@Example.com ' } });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        kdf: 0,
        kdfIterations: 600000,
        kdfMemory: null,
        kdfParallelism: null,
        kdfSettings: { kdfType: 0, iterations: 600000, memory: null, parallelism: null },
        salt: 'jack@example.com',
      });
    }
  });

  it('answers an unknown email with plausible defaults rather than an error', async () => {
    server = await startTestServer();
    const res = await server.request('POST', '/identity/accounts/prelogin/password', { json: { email: 'Nobody@Example.com' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ kdf: 0, kdfIterations: 600000, salt: 'nobody@example.com' });
  });
});

describe('account routes', () => {
  it('read and update the profile', async () => {
    server = await startTestServer();
    const user = await createUser(server, { email: 'kim@example.com', name: 'Kim' });
    const profile = await server.request('GET', '/api/accounts/profile', { token: user.accessToken });
    expect(profile.body).toMatchObject({
      object: 'profile',
      id: user.userId,
      name: 'Kim',
      email: 'kim@example.com',
      premium: true,
      key: user.account.encryptedUserKey,
      privateKey: user.account.encryptedPrivateKey,
      accountKeys: { publicKeyEncryptionKeyPair: { publicKey: user.account.publicKeyB64 } },
      organizations: [],
    });
    const updated = await server.request('PUT', '/api/accounts/profile', { token: user.accessToken, json: { name: 'Kimberly', culture: 'de-DE' } });
    expect(updated.body).toMatchObject({ name: 'Kimberly', culture: 'de-DE' });
    const tooLong = await server.request('PUT', '/api/accounts/profile', { token: user.accessToken, json: { name: 'x'.repeat(51) } });
    expect(tooLong.status).toBe(400);
    expect(Object.keys(tooLong.body.validationErrors)).toEqual(['name']);
  });

  it('report the account revision date as a number that moves with changes', async () => {
    server = await startTestServer();
    const user = await createUser(server);
    const before = await server.request('GET', '/api/accounts/revision-date', { token: user.accessToken });
    expect(typeof before.body).toBe('number');
    await new Promise((r) => setTimeout(r, 5));
    await server.request('PUT', '/api/accounts/profile', { token: user.accessToken, json: { name: 'New' } });
    const after = await server.request('GET', '/api/accounts/revision-date', { token: user.accessToken });
    expect(after.body).toBeGreaterThan(before.body);
  });

  it('change the master password: old tokens and the old password stop working', async () => {
    server = await startTestServer();
    const user = await createUser(server, { email: 'leo@example.com' });
    const next = testAccount('leo@example.com', 'a brand new passphrase');
    const wrong = await server.request('POST', '/api/accounts/password', {
      token: user.accessToken,
      json: { masterPasswordHash: 'd3Jvbmc=', newMasterPasswordHash: next.masterPasswordHash, key: next.encryptedUserKey },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.validationErrors).toEqual({ masterPasswordHash: ['Invalid password.'] });

    const res = await server.request('POST', '/api/accounts/password', {
      token: user.accessToken,
      json: { masterPasswordHash: user.account.masterPasswordHash, newMasterPasswordHash: next.masterPasswordHash, key: next.encryptedUserKey },
    });
    expect(res.status).toBe(200);
    expect((await server.request('GET', '/api/accounts/profile', { token: user.accessToken })).status).toBe(401);
    await expect(loginAccount(server, user.account)).rejects.toThrow(/400/);
    const again = await loginAccount(server, next);
    expect((await server.request('GET', '/api/accounts/profile', { token: again.accessToken })).body.key).toBe(next.encryptedUserKey);
    const events = await server.database.db.selectFrom('events').select('type').where('type', '=', 1001).execute();
    expect(events).toHaveLength(1);
  });

  it('set the key pair once and read the keys', async () => {
    server = await startTestServer();
    const user = await createUser(server);
    const keys = await server.request('GET', '/api/accounts/keys', { token: user.accessToken });
    expect(keys.body).toMatchObject({ object: 'keys', key: user.account.encryptedUserKey, publicKey: user.account.publicKeyB64 });
    const replace = await server.request('POST', '/api/accounts/keys', {
      token: user.accessToken,
      json: { publicKey: 'TUlJQg==', encryptedPrivateKey: user.account.encryptedUserKey },
    });
    expect(replace.status).toBe(400);
  });

  it('rotate the personal API key with the master password hash', async () => {
    server = await startTestServer();
    const user = await createUser(server);
    const secret = { masterPasswordHash: user.account.masterPasswordHash };
    const first = await server.request('POST', '/api/accounts/api-key', { token: user.accessToken, json: secret });
    const rotated = await server.request('POST', '/api/accounts/rotate-api-key', { token: user.accessToken, json: secret });
    expect(rotated.body.apiKey).not.toBe(first.body.apiKey);
    expect((await server.request('POST', '/api/accounts/api-key', { token: user.accessToken, json: secret })).body.apiKey).toBe(rotated.body.apiKey);
    expect((await server.request('POST', '/api/accounts/api-key', { token: user.accessToken, json: {} })).status).toBe(400);
  });

  it('store the user key id', async () => {
    server = await startTestServer();
    const user = await createUser(server);
    const res = await server.request('POST', '/api/accounts/key-management/user-key-id', {
      token: user.accessToken,
      json: { userKeyId: user.account.userKeyId },
    });
    expect(res.status).toBe(200);
    expect(res.text).toBe('');
    const row = await server.database.db.selectFrom('users').select('user_key_id').executeTakeFirstOrThrow();
    expect(row.user_key_id).toBe(user.account.userKeyId);
    const bad = await server.request('POST', '/api/accounts/key-management/user-key-id', { token: user.accessToken, json: { userKeyId: 'xyz' } });
    expect(bad.status).toBe(400);
  });

  it('delete the account only with the master password hash, ending its tokens', async () => {
    server = await startTestServer();
    const user = await createUser(server);
    const refused = await server.request('DELETE', '/api/accounts', { token: user.accessToken, json: { masterPasswordHash: 'd3Jvbmc=' } });
    expect(refused.status).toBe(400);
    const res = await server.request('DELETE', '/api/accounts', { token: user.accessToken, json: { masterPasswordHash: user.account.masterPasswordHash } });
    expect(res.status).toBe(200);
    expect((await server.request('GET', '/api/accounts/profile', { token: user.accessToken })).status).toBe(401);
    expect(await server.database.db.selectFrom('users').selectAll().execute()).toEqual([]);
  });

  it('publish a user\'s public key to other users', async () => {
    server = await startTestServer();
    const a = await createUser(server);
    const b = await createUser(server);
    const res = await server.request('GET', `/api/users/${b.userId}/public-key`, { token: a.accessToken });
    expect(res.body).toEqual({ object: 'userKey', userId: b.userId, publicKey: b.account.publicKeyB64 });
    expect((await server.request('GET', '/api/users/00000000-0000-0000-0000-000000000000/public-key', { token: a.accessToken })).status).toBe(404);
  });
});

describe('server config', () => {
  it('answers anonymously with the fields the clients read and no feature flags', async () => {
    server = await startTestServer();
    const res = await server.request('GET', '/api/config');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      object: 'config',
      version: expect.stringMatching(/^\d{4}\.\d+\.\d+$/),
      featureStates: {},
      push: { pushTechnology: 0 },
      environment: { api: `${server.config.publicUrl}/api`, identity: `${server.config.publicUrl}/identity` },
    });
  });
});
