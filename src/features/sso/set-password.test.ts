import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedAccount, TEST_DEVICE, type LoggedInUser } from '../../../test/support/accounts.js';
import { decryptEncString, deriveMasterKey, encryptToEncString, generateSymmetricKey, stretchMasterKey, symmetricKeyFrom, type SymmetricKey } from '../../../test/support/bw-crypto.js';
import { newMasterPassword, type KdfBody } from '../../../test/support/master-password-kdf.js';
import { orgWithOwner } from '../../../test/support/members.js';
import { seedMembership } from '../../../test/support/orgs.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { EventType } from '../../platform/audit/event-type.js';
import { OrganizationUserStatusType as Status } from '../../platform/access/roles.js';
import { PolicyType } from '../policies/policy-type.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server.close());

const PASSWORD = 'a brand new master password';
const KDF: KdfBody = { kdfType: 0, iterations: 600_000 };

interface SsoAccount extends LoggedInUser {
  orgId: string;
  identifier: string;
  ownerToken: string;
  memberId: string;
}

/**
 * An account as SSO provisions it: a membership of an organization with an SSO identifier, and no
 * master password, no user key and (unless `keepKeys`, as trusted devices leave them) no key pair,
 * made by clearing them in the database. Its session is the one it had before.
 */
async function ssoAccount(opts: { status?: Status; keepKeys?: boolean } = {}): Promise<SsoAccount> {
  const { orgId, owner } = await orgWithOwner(server);
  const identifier = `Acme-${orgId.slice(0, 8)}`;
  await server.database.db.updateTable('organizations').set({ identifier }).where('id', '=', orgId).execute();
  const user = await seedAccount(server, { email: `jit-${randomUUID().slice(0, 8)}@example.com` });
  const memberId = await seedMembership(server, { organizationId: orgId, userId: user.userId, status: opts.status ?? Status.Accepted });
  await server.database.db
    .updateTable('users')
    .set({ master_password_hash: null, key: null, ...(opts.keepKeys ? {} : { public_key: null, private_key: null }) })
    .where('id', '=', user.userId)
    .execute();
  return { ...user, orgId, identifier, ownerToken: owner.accessToken, memberId };
}

/** The 2026 body a client sends: a fresh user key wrapped by the new master key, and a key pair wrapped by the user key. */
async function v2Body(who: SsoAccount, userKey: SymmetricKey, extra: Record<string, unknown> = {}) {
  const next = await newMasterPassword(who.account.email, PASSWORD, KDF, userKey);
  return {
    next,
    body: {
      masterPasswordAuthentication: next.authenticationData,
      masterPasswordUnlock: next.unlockData,
      accountKeys: { accountPublicKey: who.account.publicKeyB64, userKeyEncryptedAccountPrivateKey: encryptToEncString(who.account.privateKeyDer, userKey) },
      masterPasswordHint: 'the new one',
      orgIdentifier: who.identifier.toLowerCase(),
      ...extra,
    },
  };
}

const setPassword = (who: LoggedInUser, json: unknown) => server.request('POST', '/api/accounts/set-password', { token: who.accessToken, json });
const userRow = (id: string) => server.database.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const passwordLogin = (email: string, hash: string) =>
  server.request('POST', '/identity/connect/token', { form: { grant_type: 'password', username: email, password: hash, scope: 'api offline_access', client_id: 'web', ...TEST_DEVICE } });

describe('POST /accounts/set-password', () => {
  it('sets the first master password of an SSO account: it logs in with it and unlocks its keys', async () => {
    const who = await ssoAccount();
    // The set-password page reads the organization's master password policy first.
    const policy = { minComplexity: 2, minLength: 14, requireUpper: false, requireLower: false, requireNumbers: false, requireSpecial: false, enforceOnLogin: false };
    expect((await server.request('PUT', `/api/organizations/${who.orgId}/policies/${PolicyType.MasterPassword}`, { token: who.ownerToken, json: { enabled: true, data: policy } })).status).toBe(200);
    const read = await server.request('GET', `/api/organizations/${who.orgId}/policies/master-password`, { token: who.accessToken });
    expect(read.status).toBe(200);
    expect(read.body.data).toEqual(policy);

    const userKey = generateSymmetricKey();
    const { next, body } = await v2Body(who, userKey);
    const res = await setPassword(who, body);
    expect(res.status).toBe(200);

    // The session that set it goes on.
    expect((await server.request('GET', '/api/accounts/profile', { token: who.accessToken })).status).toBe(200);
    const row = await userRow(who.userId);
    expect(row).toMatchObject({ key: next.wrappedUserKey, kdf: 0, kdf_iterations: 600_000, master_password_hint: 'the new one', public_key: who.account.publicKeyB64 });
    const events = await server.database.db.selectFrom('events').select(['type', 'acting_user_id']).where('user_id', '=', who.userId).where('type', '=', EventType.User_ChangedPassword).execute();
    expect(events).toEqual([{ type: EventType.User_ChangedPassword, acting_user_id: who.userId }]);

    // A client logging in derives the master key from the password and opens the user key and the private key.
    const login = await passwordLogin(who.account.email, next.masterPasswordHash);
    expect(login.status).toBe(200);
    const unlock = login.body.UserDecryptionOptions.MasterPasswordUnlock;
    expect(unlock.Kdf).toMatchObject({ KdfType: 0, Iterations: 600_000 });
    const masterKey = deriveMasterKey(PASSWORD, unlock.Salt, unlock.Kdf.Iterations);
    const opened = symmetricKeyFrom(decryptEncString(unlock.MasterKeyEncryptedUserKey, stretchMasterKey(masterKey)));
    expect(opened.raw.equals(userKey.raw)).toBe(true);
    expect(decryptEncString(login.body.PrivateKey, opened).equals(who.account.privateKeyDer)).toBe(true);

    const again = await setPassword(who, body);
    expect(again.status).toBe(400);
    expect(again.body.message).toBe('User already has a master password set.');
  });

  it('refuses an account that has a master password', async () => {
    const user = await seedAccount(server);
    const res = await setPassword(user, { masterPasswordHash: 'aGFzaA==', key: '2.aXY=|ZGF0YQ==|bWFj', kdf: 0, kdfIterations: 600_000, orgIdentifier: 'anything' });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('User already has a master password set.');
  });

  it('keeps the keys of an account that unlocks with trusted devices (no accountKeys), and refuses others in their place', async () => {
    const who = await ssoAccount({ keepKeys: true });
    const before = await userRow(who.userId);
    const userKey = generateSymmetricKey();
    const { body } = await v2Body(who, userKey);
    const other = await setPassword(who, { ...body, accountKeys: { accountPublicKey: 'b3RoZXI=', userKeyEncryptedAccountPrivateKey: body.accountKeys.userKeyEncryptedAccountPrivateKey } });
    expect(other.status).toBe(400);
    expect(Object.keys(other.body.validationErrors)).toEqual(['accountKeys']);
    const { accountKeys: _none, ...tde } = body;
    expect((await setPassword(who, tde)).status).toBe(200);
    const after = await userRow(who.userId);
    expect([after.public_key, after.private_key]).toEqual([before.public_key, before.private_key]);
  });

  it('accepts an invited membership, with the obsolete flat body', async () => {
    const who = await ssoAccount({ status: Status.Invited });
    const masterKey = deriveMasterKey(PASSWORD, who.account.email, 600_000);
    const userKey = generateSymmetricKey();
    const res = await setPassword(who, {
      masterPasswordHash: (await newMasterPassword(who.account.email, PASSWORD, KDF, userKey)).masterPasswordHash,
      key: encryptToEncString(userKey.raw, stretchMasterKey(masterKey)),
      keys: { publicKey: who.account.publicKeyB64, encryptedPrivateKey: encryptToEncString(who.account.privateKeyDer, userKey) },
      kdf: 0,
      kdfIterations: 600_000,
      orgIdentifier: who.identifier,
    });
    expect(res.status).toBe(200);
    const member = await server.database.db.selectFrom('organization_users').select(['status', 'email']).where('id', '=', who.memberId).executeTakeFirstOrThrow();
    expect(member).toEqual({ status: Status.Accepted, email: null });
  });

  it.each([
    ['an unknown organization', { orgIdentifier: 'nobody-has-this' }, 'orgIdentifier', 'Organization SSO identifier is invalid.'],
    ['an empty organization identifier', { orgIdentifier: '' }, 'orgIdentifier', null],
    ['no account keys for an account without them', { accountKeys: null }, 'accountKeys', 'Account keys are required.'],
    ['another salt', 'salt', 'masterPasswordUnlock.salt', null],
    ['a KDF below the minimum', 'kdf', 'masterPasswordUnlock.kdf', null],
    ['no password at all', 'none', 'masterPasswordHash', null],
  ] as const)('refuses %s with a 400 naming the field, and writes nothing', async (_case, change, field, message) => {
    const who = await ssoAccount();
    const { body } = await v2Body(who, generateSymmetricKey());
    let sent: Record<string, unknown> = { ...body };
    if (change === 'salt') sent = { ...body, masterPasswordAuthentication: { ...body.masterPasswordAuthentication, salt: 'x' }, masterPasswordUnlock: { ...body.masterPasswordUnlock, salt: 'x' } };
    else if (change === 'kdf') {
      const low = { kdfType: 0, iterations: 1000 };
      sent = { ...body, masterPasswordAuthentication: { ...body.masterPasswordAuthentication, kdf: low }, masterPasswordUnlock: { ...body.masterPasswordUnlock, kdf: low } };
    } else if (change === 'none') sent = { orgIdentifier: who.identifier };
    else sent = { ...body, ...change };
    const res = await setPassword(who, sent);
    expect(res.status).toBe(400);
    expect(Object.keys(res.body.validationErrors ?? {}).some((key) => key.toLowerCase().startsWith(field.toLowerCase()))).toBe(true);
    if (message) expect(Object.values(res.body.validationErrors).flat()).toContain(message);
    const row = await userRow(who.userId);
    expect([row.master_password_hash, row.key, row.public_key]).toEqual([null, null, null]);
  });

  it("refuses an account that is not a member of the organization", async () => {
    const who = await ssoAccount();
    const { orgId: other } = await orgWithOwner(server);
    await server.database.db.updateTable('organizations').set({ identifier: `other-${other.slice(0, 8)}` }).where('id', '=', other).execute();
    const { body } = await v2Body(who, generateSymmetricKey(), { orgIdentifier: `other-${other.slice(0, 8)}` });
    const res = await setPassword(who, body);
    expect(res.status).toBe(400);
    expect(res.body.validationErrors.orgIdentifier).toEqual(['User not found within organization.']);
  });
});
