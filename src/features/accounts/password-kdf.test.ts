import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, loginAccount, type LoggedInUser } from '../../../test/support/accounts.js';
import { freshEmail } from '../../../test/support/admin.js';
import { newMasterPassword, type KdfBody, type NewMasterPassword } from '../../../test/support/master-password-kdf.js';
import { recordingPushes } from '../../../test/support/pushes.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { EventType } from '../../platform/audit/event-type.js';
import { PushType } from '../../platform/push/pushes.js';

/**
 * The master password change in both bodies and the KDF change, through the real routes with
 * keys derived as the clients derive them (PBKDF2, Argon2id). One server for the file; each test
 * makes its own accounts.
 */
const pushes = recordingPushes();
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ pushes });
});
afterAll(async () => server.close());

const PBKDF2: KdfBody = { kdfType: 0, iterations: 600_000, memory: null, parallelism: null };
const ARGON2: KdfBody = { kdfType: 1, iterations: 2, memory: 16, parallelism: 1 };

const post = (user: LoggedInUser, path: string, json: unknown) => server.request('POST', `/api/accounts/${path}`, { token: user.accessToken, json });
const userRow = (userId: string) => server.database.db.selectFrom('users').selectAll().where('id', '=', userId).executeTakeFirstOrThrow();
const eventsOf = (userId: string, type: EventType) =>
  server.database.db.selectFrom('events').select(['type', 'acting_user_id']).where('user_id', '=', userId).where('type', '=', type).execute();
const refresh = (token: string) => server.request('POST', '/identity/connect/token', { form: { grant_type: 'refresh_token', client_id: 'cli', refresh_token: token } });
const logOutsOf = (userId: string) => pushes.of(PushType.LogOut).filter((p) => (p.payload as { UserId: string }).UserId === userId);

const NO_FORM = 'Must provide either new payloads (UnlockData/AuthenticationData) or legacy payloads (NewMasterPasswordHash/Key).';

/** The 2026 web vault's body: the current hash, the two objects and the hint. */
const body2026 = (user: LoggedInUser, next: NewMasterPassword, hint: string | null = null) => ({
  masterPasswordHash: user.account.masterPasswordHash,
  authenticationData: next.authenticationData,
  unlockData: next.unlockData,
  masterPasswordHint: hint,
});

/** The old session is over and only the new hash logs in. */
async function onlyNewPasswordWorks(user: LoggedInUser, next: NewMasterPassword): Promise<void> {
  expect((await server.request('GET', '/api/accounts/profile', { token: user.accessToken })).status).toBe(401);
  expect((await refresh(user.refreshToken)).status).toBe(400);
  await expect(loginAccount(server, user.account)).rejects.toThrow(/400/);
  const again = await loginAccount(server, { ...user.account, masterPasswordHash: next.masterPasswordHash });
  expect((await server.request('GET', '/api/accounts/profile', { token: again.accessToken })).body.key).toBe(next.wrappedUserKey);
}

describe('POST /api/accounts/password', () => {
  it('takes the 2026 body: stores the new password, ends every session, pushes LogOut, records 1001', async () => {
    const user = await createUser(server, { email: freshEmail('pw26') });
    const next = await newMasterPassword(user.account.email, 'a brand new passphrase', PBKDF2, user.account.userKey);
    const changedBefore = (await userRow(user.userId)).last_password_change_date;
    const res = await post(user, 'password', body2026(user, next, 'the new hint'));
    expect(res.status).toBe(200);
    await onlyNewPasswordWorks(user, next);
    expect((await userRow(user.userId)).last_password_change_date).not.toBe(changedBefore);
    expect(await userRow(user.userId)).toMatchObject({ key: next.wrappedUserKey, master_password_hint: 'the new hint', kdf: 0, kdf_iterations: 600_000 });
    expect(await eventsOf(user.userId, EventType.User_ChangedPassword)).toEqual([{ type: 1001, acting_user_id: user.userId }]);
    expect(logOutsOf(user.userId)).toHaveLength(1);
  });

  it('takes the 2025 body, with the flat fields beside the objects, and the older flat one alone', async () => {
    const user = await createUser(server, { email: freshEmail('pw25') });
    const next = await newMasterPassword(user.account.email, 'second passphrase', PBKDF2, user.account.userKey);
    const both = { ...body2026(user, next), newMasterPasswordHash: next.masterPasswordHash, key: next.wrappedUserKey };
    expect((await post(user, 'password', both)).status).toBe(200);
    await onlyNewPasswordWorks(user, next);

    const older = await createUser(server, { email: freshEmail('pwold') });
    const third = await newMasterPassword(older.account.email, 'third passphrase', PBKDF2, older.account.userKey);
    const flat = { masterPasswordHash: older.account.masterPasswordHash, newMasterPasswordHash: third.masterPasswordHash, key: third.wrappedUserKey };
    expect((await post(older, 'password', flat)).status).toBe(200);
    await onlyNewPasswordWorks(older, third);
  });

  it('uses the flat fields when only one object comes with them, as the official validator does', async () => {
    const user = await createUser(server, { email: freshEmail('pwone') });
    const next = await newMasterPassword(user.account.email, 'flat wins', PBKDF2, user.account.userKey);
    const ignored = await newMasterPassword(user.account.email, 'lone object', PBKDF2, user.account.userKey);
    const body = { masterPasswordHash: user.account.masterPasswordHash, newMasterPasswordHash: next.masterPasswordHash, key: next.wrappedUserKey, authenticationData: ignored.authenticationData };
    expect((await post(user, 'password', body)).status).toBe(200);
    await onlyNewPasswordWorks(user, next);
  });

  it('refuses bad bodies with 400 naming the field, changing nothing', async () => {
    const user = await createUser(server, { email: freshEmail('pwbad') });
    const email = user.account.email;
    const next = await newMasterPassword(email, 'never stored', PBKDF2, user.account.userKey);
    const otherKdf = await newMasterPassword(email, 'never stored', { ...PBKDF2, iterations: 700_000 }, user.account.userKey);
    const good = body2026(user, next);
    const { authenticationData, unlockData } = good;
    const cases: [string, unknown, string][] = [
      ['wrong current hash', { ...good, masterPasswordHash: 'd3Jvbmcgd3Jvbmcgd3Jvbmc=' }, 'masterPasswordHash'],
      ['no current hash', { authenticationData, unlockData }, 'masterPasswordHash'],
      ['authentication object alone', { ...good, unlockData: undefined }, 'unlockData'],
      ['unlock object alone', { ...good, authenticationData: undefined }, 'authenticationData'],
      ['neither form', { masterPasswordHash: user.account.masterPasswordHash, key: next.wrappedUserKey }, 'newMasterPasswordHash'],
      ['flat form without key', { masterPasswordHash: user.account.masterPasswordHash, newMasterPasswordHash: next.masterPasswordHash }, 'key'],
      ['flat key not an EncString', { masterPasswordHash: user.account.masterPasswordHash, newMasterPasswordHash: next.masterPasswordHash, key: 'not-encrypted' }, 'key'],
      ['salts differ between the objects', { ...good, unlockData: { ...unlockData, salt: 'other@example.com' } }, 'unlockData.salt'],
      ['salt not the account\'s', { ...good, authenticationData: { ...authenticationData, salt: 'x@example.com' }, unlockData: { ...unlockData, salt: 'x@example.com' } }, 'unlockData.salt'],
      ['KDFs differ between the objects', { ...good, unlockData: otherKdf.unlockData }, 'unlockData.kdf'],
      ['a KDF other than the account\'s', body2026(user, otherKdf), 'unlockData.kdf'],
      ['a KDF below the minimum', { ...good, authenticationData: { ...authenticationData, kdf: { ...PBKDF2, iterations: 100_000 } }, unlockData: { ...unlockData, kdf: { ...PBKDF2, iterations: 100_000 } } }, 'unlockData.kdfIterations'],
      ['flat hash contradicting the object', { ...good, newMasterPasswordHash: otherKdf.masterPasswordHash }, 'newMasterPasswordHash'],
      ['wrapped key not an EncString', { ...good, unlockData: { ...unlockData, masterKeyWrappedUserKey: 'plain' } }, 'unlockData.masterKeyWrappedUserKey'],
      ["a contained key id other than the account's", { ...good, unlockData: { ...unlockData, containedKeyId: '0'.repeat(32) } }, 'unlockData.containedKeyId'],
    ];
    // The account's key id, as the clients report it after unlocking: the unlock data's must match it.
    expect((await post(user, 'key-management/user-key-id', { userKeyId: 'eac33bab6fc1714c9e984e959f174806' })).status).toBe(200);
    const before = await userRow(user.userId);
    for (const [what, json, field] of cases) {
      const res = await post(user, 'password', json);
      expect(res.status, what).toBe(400);
      expect(Object.keys(res.body.validationErrors ?? {}), what).toContain(field);
    }
    const lone = await post(user, 'password', { ...good, unlockData: undefined });
    expect(lone.body.validationErrors).toMatchObject({ authenticationData: [NO_FORM], unlockData: [NO_FORM], newMasterPasswordHash: [NO_FORM], key: [NO_FORM] });
    expect(await userRow(user.userId)).toEqual(before);
    expect(await eventsOf(user.userId, EventType.User_ChangedPassword)).toEqual([]);
    expect(logOutsOf(user.userId)).toEqual([]);
    expect((await server.request('GET', '/api/accounts/profile', { token: user.accessToken })).status).toBe(200);
  });
});

describe('POST /api/accounts/kdf', () => {
  it('moves the account to Argon2id: prelogin answers it, only the new hash logs in, LogOut to every device, records 9000', async () => {
    const user = await createUser(server, { email: freshEmail('kdf') });
    const next = await newMasterPassword(user.account.email, user.account.password, ARGON2, user.account.userKey);
    const { master_password_hint: hintBefore, last_password_change_date: changedBefore } = await userRow(user.userId);
    // Clients of 2025 also send the flat fields, which the KDF change does not read; nor a hint.
    const flat = { newMasterPasswordHash: next.masterPasswordHash, key: next.wrappedUserKey, kdf: 1, kdfIterations: 2, kdfMemory: 16, kdfParallelism: 1, masterPasswordHint: 'not stored' };
    const res = await post(user, 'kdf', { ...body2026(user, next), ...flat });
    expect(res.status).toBe(200);
    await onlyNewPasswordWorks(user, next);
    expect(await userRow(user.userId)).toMatchObject({ kdf: 1, kdf_iterations: 2, kdf_memory: 16, kdf_parallelism: 1, key: next.wrappedUserKey, master_password_hint: hintBefore });
    // The password is the same: its change date stays, as the official ChangeKdfCommand leaves it.
    expect((await userRow(user.userId)).last_password_change_date).toBe(changedBefore);
    for (const path of ['/identity/accounts/prelogin/password', '/identity/accounts/prelogin']) {
      const prelogin = await server.request('POST', path, { json: { email: user.account.email } });
      expect(prelogin.body, path).toMatchObject({ kdf: 1, kdfIterations: 2, kdfMemory: 16, kdfParallelism: 1, kdfSettings: { kdfType: 1, iterations: 2, memory: 16, parallelism: 1 } });
    }
    expect(await eventsOf(user.userId, EventType.User_ChangedKdf)).toEqual([{ type: 9000, acting_user_id: user.userId }]);
    expect(logOutsOf(user.userId).map((p) => p.contextId)).toEqual([null]);

    // And back to PBKDF2, signed in with the Argon2id hash.
    const session = await loginAccount(server, { ...user.account, masterPasswordHash: next.masterPasswordHash });
    const back = await newMasterPassword(user.account.email, user.account.password, PBKDF2, user.account.userKey);
    const res2 = await post(session, 'kdf', { ...body2026(session, back), masterPasswordHash: next.masterPasswordHash });
    expect(res2.status).toBe(200);
    expect(await userRow(user.userId)).toMatchObject({ kdf: 0, kdf_iterations: 600_000, kdf_memory: null, kdf_parallelism: null });
  });

  it('refuses bad bodies with 400 naming the field, changing nothing', async () => {
    const user = await createUser(server, { email: freshEmail('kdfbad') });
    const email = user.account.email;
    const next = await newMasterPassword(email, user.account.password, ARGON2, user.account.userKey);
    const pbkdf2 = await newMasterPassword(email, user.account.password, { ...PBKDF2, iterations: 650_000 }, user.account.userKey);
    const good = body2026(user, next);
    const { authenticationData, unlockData } = good;
    const argon = (kdf: Partial<Extract<KdfBody, { kdfType: 1 }>>) => ({ ...good, authenticationData: { ...authenticationData, kdf: { ...ARGON2, ...kdf } }, unlockData: { ...unlockData, kdf: { ...ARGON2, ...kdf } } });
    const cases: [string, unknown, string][] = [
      ['wrong current hash', { ...good, masterPasswordHash: 'd3Jvbmcgd3Jvbmcgd3Jvbmc=' }, 'masterPasswordHash'],
      ['the flat form alone', { masterPasswordHash: user.account.masterPasswordHash, newMasterPasswordHash: next.masterPasswordHash, key: next.wrappedUserKey, kdf: 1, kdfIterations: 2 }, 'authenticationData'],
      ['authentication object alone', { ...good, unlockData: undefined }, 'unlockData'],
      ['unlock object alone, with the flat fields', { ...good, authenticationData: undefined, newMasterPasswordHash: next.masterPasswordHash, key: next.wrappedUserKey }, 'authenticationData'],
      ['a changed salt', { ...good, authenticationData: { ...authenticationData, salt: 'new@example.com' }, unlockData: { ...unlockData, salt: 'new@example.com' } }, 'unlockData.salt'],
      ['salts differ between the objects', { ...good, authenticationData: { ...authenticationData, salt: 'new@example.com' } }, 'unlockData.salt'],
      ['KDFs differ between the objects', { ...good, unlockData: pbkdf2.unlockData }, 'unlockData.kdf'],
      ['Argon2id memory below 15 MiB', argon({ memory: 8 }), 'unlockData.kdfMemory'],
      ['Argon2id with one iteration', argon({ iterations: 1 }), 'unlockData.kdfIterations'],
      ['Argon2id parallelism above 16', argon({ parallelism: 17 }), 'unlockData.kdfParallelism'],
      ['PBKDF2 below 600,000', { ...good, authenticationData: { ...authenticationData, kdf: { ...PBKDF2, iterations: 5000 } }, unlockData: { ...unlockData, kdf: { ...PBKDF2, iterations: 5000 } } }, 'unlockData.kdfIterations'],
      ['an unknown KDF', { ...good, authenticationData: { ...authenticationData, kdf: { ...PBKDF2, kdfType: 7 } }, unlockData: { ...unlockData, kdf: { ...PBKDF2, kdfType: 7 } } }, 'unlockData.kdf'],
      ['wrapped key not an EncString', { ...good, unlockData: { ...unlockData, masterKeyWrappedUserKey: 'plain' } }, 'unlockData.masterKeyWrappedUserKey'],
      ["a contained key id other than the account's", { ...good, unlockData: { ...unlockData, containedKeyId: '0'.repeat(32) } }, 'unlockData.containedKeyId'],
    ];
    // The account's key id, as the clients report it after unlocking: the unlock data's must match it.
    expect((await post(user, 'key-management/user-key-id', { userKeyId: 'eac33bab6fc1714c9e984e959f174806' })).status).toBe(200);
    const before = await userRow(user.userId);
    for (const [what, json, field] of cases) {
      const res = await post(user, 'kdf', json);
      expect(res.status, what).toBe(400);
      expect(Object.keys(res.body.validationErrors ?? {}), what).toContain(field);
    }
    expect(await userRow(user.userId)).toEqual(before);
    expect(await eventsOf(user.userId, EventType.User_ChangedKdf)).toEqual([]);
    expect(logOutsOf(user.userId)).toEqual([]);
    const prelogin = await server.request('POST', '/identity/accounts/prelogin/password', { json: { email } });
    expect(prelogin.body).toMatchObject({ kdf: 0, kdfIterations: 600_000 });
  });
});
