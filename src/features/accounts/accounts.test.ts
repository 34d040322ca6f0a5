import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, loginAccount, registerAccount, testAccount } from '../../../test/support/accounts.js';
import { freshEmail } from '../../../test/support/admin.js';
import { registerFinishBody } from '../../../test/support/bw-crypto.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';

// One server for the file: each test makes its own accounts (fresh emails) and reads back only
// those.
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server.close());

const finish = (s: TestServer, body: unknown) => s.request('POST', '/identity/accounts/register/finish', { json: body });
const allUserIds = async () => (await server.database.db.selectFrom('users').select('id').orderBy('id').execute()).map((r) => r.id);

describe('registration', () => {
  it('stores the account with a server-side re-hash of the master password hash', async () => {
    const email = freshEmail('Carol').replace('example', 'Example');
    const account = await registerAccount(server, { email, name: 'Carol' });
    const row = await server.database.db.selectFrom('users').selectAll().where('email', '=', email.toLowerCase()).executeTakeFirstOrThrow();
    expect(row).toMatchObject({
      email: email.toLowerCase(),
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
    const a = testAccount(freshEmail('same1'), 'same password');
    const b = testAccount(freshEmail('same2'), 'same password');
    await finish(server, registerFinishBody(a));
    await finish(server, registerFinishBody({ ...b, masterPasswordHash: a.masterPasswordHash }));
    const rows = await server.database.db.selectFrom('users').select('master_password_hash').where('email', 'in', [a.email, b.email]).execute();
    expect(rows[0]?.master_password_hash).not.toBe(rows[1]?.master_password_hash);
  });

  it('keeps emails unique regardless of letter case', async () => {
    const email = freshEmail('dave');
    await registerAccount(server, { email });
    const again = testAccount(email.replace('dave', 'DAVE'));
    const res = await finish(server, registerFinishBody(again));
    expect(res.status).toBe(400);
    expect(res.body.validationErrors).toEqual({ email: [`Email '${email}' is already taken.`] });
  });

  it('refuses weak or inconsistent KDF settings and foreign salts, writing nothing', async () => {
    const account = testAccount(freshEmail('erin'));
    const body = registerFinishBody(account);
    const cases: [unknown, string][] = [
      [{ ...body, kdfIterations: 5000, masterPasswordAuthentication: undefined, masterPasswordUnlock: undefined }, 'kdfIterations'],
      [{ ...body, kdf: 1, kdfIterations: 3, kdfMemory: 4, kdfParallelism: 1, masterPasswordAuthentication: undefined, masterPasswordUnlock: undefined }, 'kdfMemory'],
      [{ ...body, kdfIterations: 700_000 }, 'kdf'],
      [{ ...body, masterPasswordUnlock: { ...(body.masterPasswordUnlock as object), salt: 'someone@else.com' } }, 'masterPasswordUnlock.salt'],
      // The salt is compared as the account will answer it in prelogin: no case or space folding.
      [{ ...body, masterPasswordUnlock: { ...(body.masterPasswordUnlock as object), salt: account.email.toUpperCase() } }, 'masterPasswordUnlock.salt'],
      [{ ...body, masterPasswordAuthentication: { ...(body.masterPasswordAuthentication as object), salt: ` ${account.email}` } }, 'masterPasswordAuthentication.salt'],
      [{ ...body, masterPasswordUnlock: { ...(body.masterPasswordUnlock as object), masterKeyWrappedUserKey: 'not encrypted' } }, 'key'],
      [{ ...body, userAsymmetricKeys: { publicKey: account.publicKeyB64, encryptedPrivateKey: 'plain' } }, 'encryptedPrivateKey'],
      [{ ...body, email: 'not-an-email' }, 'email'],
    ];
    for (const [payload, field] of cases) {
      const res = await finish(server, payload);
      expect(res.status, field).toBe(400);
      expect(Object.keys(res.body.validationErrors ?? {}), JSON.stringify(res.body)).toContain(field);
    }
    expect(await server.database.db.selectFrom('users').selectAll().where('email', 'in', [account.email, 'not-an-email']).execute()).toEqual([]);
  });

  it('accepts the spec\'s /api/accounts/register with the flat shape', async () => {
    const account = testAccount(freshEmail('frank'));
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
    const account = testAccount(freshEmail('gina'));
    const start = await server.request('POST', '/identity/accounts/register/send-verification-email', { json: { email: account.email, name: 'Gina' } });
    expect(start.status).toBe(200);
    expect(typeof start.body).toBe('string');
    const body = { ...registerFinishBody(account), emailVerificationToken: start.body };
    delete (body as Record<string, unknown>).name;
    expect((await finish(server, body)).status).toBe(200);
    const row = await server.database.db.selectFrom('users').select('name').where('email', '=', account.email).executeTakeFirstOrThrow();
    expect(row.name).toBe('Gina');
    const forged = await finish(server, { ...registerFinishBody(testAccount(freshEmail('hal'))), emailVerificationToken: start.body });
    expect(forged.status).toBe(400);
  });

  it('refuses email addresses with control characters, writing nothing', async () => {
    // Every account, before and after: an address stored despite the refusal might not read as
    // sent, and the file's tests run one at a time.
    const before = await allUserIds();
    for (const email of ['a\u0000b@example.com', 'bell\u0007@example.com', 'esc@exam\u001bple.com']) {
      const res = await finish(server, { ...registerFinishBody(testAccount(freshEmail('clean'))), email });
      expect(res.status, JSON.stringify(email)).toBe(400);
      expect(res.body.validationErrors, JSON.stringify(email)).toHaveProperty('email');
      const start = await server.request('POST', '/identity/accounts/register/send-verification-email', { json: { email } });
      expect(start.status, JSON.stringify(email)).toBe(400);
    }
    expect(await allUserIds()).toEqual(before);
  });

  it('can be closed by a setting', async () => {
    // Closed registration is a configuration of its own, which only this test needs.
    const closed = await startTestServer({ env: { REGISTRATION_ENABLED: 'false' } });
    try {
      const res = await finish(closed, registerFinishBody(testAccount(freshEmail('ivy'))));
      expect(res.status).toBe(400);
      expect(res.body.message).toBe('Open registration has been disabled by the system administrator.');
      const config = await closed.request('GET', '/api/config');
      expect(config.body.settings.disableUserRegistration).toBe(true);
    } finally {
      await closed.close();
    }
  });
});

describe('prelogin', () => {
  it('returns the account\'s KDF settings in both shapes on both paths', async () => {
    const email = freshEmail('jack');
    await registerAccount(server, { email });
    for (const path of ['/identity/accounts/prelogin/password', '/identity/accounts/prelogin']) {
      const res = await server.request('POST', path, { json: { email: ` ${email.replace('jack', 'Jack').replace('example', 'Example')} ` } });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        kdf: 0,
        kdfIterations: 600000,
        kdfMemory: null,
        kdfParallelism: null,
        kdfSettings: { kdfType: 0, iterations: 600000, memory: null, parallelism: null },
        salt: email,
      });
    }
  });

  it('answers an unknown email with plausible defaults rather than an error', async () => {
    const res = await server.request('POST', '/identity/accounts/prelogin/password', { json: { email: 'Nobody@Example.com' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ kdf: 0, kdfIterations: 600000, salt: 'nobody@example.com' });
  });
});

describe('account routes', () => {
  it('read and update the profile', async () => {
    const email = freshEmail('kim');
    const user = await createUser(server, { email, name: 'Kim' });
    const profile = await server.request('GET', '/api/accounts/profile', { token: user.accessToken });
    expect(profile.body).toMatchObject({
      object: 'profile',
      id: user.userId,
      name: 'Kim',
      email,
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
    const user = await createUser(server);
    const before = await server.request('GET', '/api/accounts/revision-date', { token: user.accessToken });
    expect(typeof before.body).toBe('number');
    await new Promise((r) => setTimeout(r, 5));
    await server.request('PUT', '/api/accounts/profile', { token: user.accessToken, json: { name: 'New' } });
    const after = await server.request('GET', '/api/accounts/revision-date', { token: user.accessToken });
    expect(after.body).toBeGreaterThan(before.body);
  });

  it('change the master password: old tokens and the old password stop working', async () => {
    const email = freshEmail('leo');
    const user = await createUser(server, { email });
    const next = testAccount(email, 'a brand new passphrase');
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
    const events = await server.database.db.selectFrom('events').select('type').where('type', '=', 1001).where('user_id', '=', user.userId).execute();
    expect(events).toHaveLength(1);
  });

  it('set the key pair once and read the keys', async () => {
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
    const user = await createUser(server);
    const secret = { masterPasswordHash: user.account.masterPasswordHash };
    const first = await server.request('POST', '/api/accounts/api-key', { token: user.accessToken, json: secret });
    const rotated = await server.request('POST', '/api/accounts/rotate-api-key', { token: user.accessToken, json: secret });
    expect(rotated.body.apiKey).not.toBe(first.body.apiKey);
    expect((await server.request('POST', '/api/accounts/api-key', { token: user.accessToken, json: secret })).body.apiKey).toBe(rotated.body.apiKey);
    expect((await server.request('POST', '/api/accounts/api-key', { token: user.accessToken, json: {} })).status).toBe(400);
  });

  it('store the user key id', async () => {
    const user = await createUser(server);
    const res = await server.request('POST', '/api/accounts/key-management/user-key-id', {
      token: user.accessToken,
      json: { userKeyId: user.account.userKeyId },
    });
    expect(res.status).toBe(200);
    expect(res.text).toBe('');
    const row = await server.database.db.selectFrom('users').select('user_key_id').where('id', '=', user.userId).executeTakeFirstOrThrow();
    expect(row.user_key_id).toBe(user.account.userKeyId);
    const bad = await server.request('POST', '/api/accounts/key-management/user-key-id', { token: user.accessToken, json: { userKeyId: 'xyz' } });
    expect(bad.status).toBe(400);
  });

  it('delete the account only with the master password hash, ending its tokens', async () => {
    const user = await createUser(server);
    const refused = await server.request('DELETE', '/api/accounts', { token: user.accessToken, json: { masterPasswordHash: 'd3Jvbmc=' } });
    expect(refused.status).toBe(400);
    const res = await server.request('DELETE', '/api/accounts', { token: user.accessToken, json: { masterPasswordHash: user.account.masterPasswordHash } });
    expect(res.status).toBe(200);
    expect((await server.request('GET', '/api/accounts/profile', { token: user.accessToken })).status).toBe(401);
    expect(await server.database.db.selectFrom('users').selectAll().where('id', '=', user.userId).execute()).toEqual([]);
    const events = await server.database.db.selectFrom('events').select(['type', 'acting_user_id']).where('user_id', '=', user.userId).where('type', '=', 9002).execute();
    expect(events).toEqual([{ type: 9002, acting_user_id: user.userId }]);
  });

  it('publish a user\'s public key to other users', async () => {
    const a = await createUser(server);
    const b = await createUser(server);
    const res = await server.request('GET', `/api/users/${b.userId}/public-key`, { token: a.accessToken });
    expect(res.body).toEqual({ object: 'userKey', userId: b.userId, publicKey: b.account.publicKeyB64 });
    expect((await server.request('GET', '/api/users/00000000-0000-0000-0000-000000000000/public-key', { token: a.accessToken })).status).toBe(404);
  });
});

describe('server config', () => {
  it('answers anonymously with the fields the clients read', async () => {
    const res = await server.request('GET', '/api/config');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      object: 'config',
      version: expect.stringMatching(/^\d{4}\.\d+\.\d+$/),
      featureStates: expect.any(Object),
      push: { pushTechnology: 1, vapidPublicKey: expect.stringMatching(/^[A-Za-z0-9_-]{87}$/) },
      environment: { api: `${server.config.publicUrl}/api`, identity: `${server.config.publicUrl}/identity` },
    });
  });
});
