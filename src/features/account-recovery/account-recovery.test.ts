import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { passwordGrantForm, seedAccount, type LoggedInUser } from '../../../test/support/accounts.js';
import { freshEmail } from '../../../test/support/admin.js';
import {
  decryptEncString,
  deriveMasterKey,
  encryptToEncString,
  generateRsaKeyPair,
  generateSymmetricKey,
  masterPasswordHash,
  rsaDecryptEncString,
  rsaEncryptToEncString,
  stretchMasterKey,
  symmetricKeyFrom,
  type SymmetricKey,
} from '../../../test/support/bw-crypto.js';
import { memberEventTypes, memberOf, memberRow, seedPolicy, type SeededMember } from '../../../test/support/members.js';
import { seedMembership, seedOrganization } from '../../../test/support/orgs.js';
import { recordingPushes } from '../../../test/support/pushes.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { OrganizationUserStatusType as Status, OrganizationUserType as Role } from '../../platform/access/roles.js';
import { EventType } from '../../platform/audit/event-type.js';
import { PolicyType } from '../policies/policy-type.js';
import { MemberDecryptionType, saveSsoConfig, SsoType } from '../sso/sso-config.repository.js';
import { PushType } from '../../platform/push/pushes.js';
import type * as NewPassword from './new-password.js';

/** What runs after the server hashed a new password and before its transaction: the races' other side. */
const afterHash = vi.hoisted(() => ({ run: async (): Promise<void> => undefined }));
vi.mock('./new-password.js', async (importOriginal) => {
  const actual = await importOriginal<typeof NewPassword>();
  return {
    ...actual,
    prepareNewPassword: async (...args: Parameters<typeof actual.prepareNewPassword>) => {
      const prepared = await actual.prepareNewPassword(...args);
      await afterHash.run();
      return prepared;
    },
  };
});

// Real key derivation (600,000 PBKDF2 iterations) for every new password; a busy machine needs the room.
vi.setConfig({ testTimeout: 120_000 });

let server: TestServer;
const pushes = recordingPushes();
beforeAll(async () => {
  server = await startTestServer({ pushes });
});
afterAll(async () => server.close());

const users = (orgId: string) => `/api/organizations/${orgId}/users`;

/**
 * An organization with a real key pair (private key wrapped with the organization key) and an
 * owner and an admin who hold the organization key RSA-wrapped with their own public keys, as
 * confirmation leaves it; the account recovery policy on unless told otherwise.
 */
async function recoveryOrg(opts: { policy?: boolean; autoEnroll?: boolean } = {}) {
  const orgKey = generateSymmetricKey();
  const pair = generateRsaKeyPair();
  const orgId = await seedOrganization(server, { overrides: { public_key: pair.publicKeyB64, private_key: encryptToEncString(pair.privateKeyDer, orgKey) } });
  const withKey = async (type: Role, permissions?: Record<string, boolean>) => {
    const member = await memberOf(server, orgId, { type, ...(permissions ? { permissions } : {}) });
    await server.database.db
      .updateTable('organization_users')
      .set({ key: rsaEncryptToEncString(orgKey.raw, member.account.publicKeyB64) })
      .where('id', '=', member.memberId)
      .execute();
    return member;
  };
  const owner = await withKey(Role.Owner);
  const admin = await withKey(Role.Admin);
  if (opts.policy !== false) await seedPolicy(server, orgId, PolicyType.ResetPassword);
  if (opts.autoEnroll) await server.database.db.updateTable('policies').set({ data: JSON.stringify({ autoEnrollEnabled: true }) }).where('organization_id', '=', orgId).execute();
  return { orgId, orgPublicKey: pair.publicKeyB64, owner, admin, withKey };
}

/** The member's enrollment, as the web vault builds it: the user key wrapped with the organization's public key. */
function enrollment(member: LoggedInUser, orgPublicKey: string) {
  return { resetPasswordKey: rsaEncryptToEncString(member.account.userKey.raw, orgPublicKey), masterPasswordHash: member.account.masterPasswordHash };
}

async function enroll(orgId: string, member: SeededMember, orgPublicKey: string) {
  const res = await server.request('PUT', `${users(orgId)}/${member.userId}/reset-password-enrollment`, { token: member.accessToken, json: enrollment(member, orgPublicKey) });
  expect(res.status, res.text).toBe(200);
}

interface NewPassword {
  password: string;
  masterKey: Buffer;
  hash: string;
  body: Record<string, unknown>;
}

/**
 * What the admin's web vault does: reads the member's recovery details, unwraps the organization
 * key with the admin's private key, the organization private key with it, and the member's user
 * key with that; then wraps the user key with the master key of a new password.
 */
async function adminBuildsNewPassword(orgId: string, admin: SeededMember, memberId: string, password: string): Promise<NewPassword & { userKey: SymmetricKey }> {
  const details = await server.request('GET', `${users(orgId)}/${memberId}/reset-password-details`, { token: admin.accessToken });
  expect(details.status).toBe(200);
  const adminRow = await memberRow(server, admin.memberId);
  const orgKey = symmetricKeyFrom(rsaDecryptEncString(adminRow?.key ?? '', admin.account.privateKeyDer));
  const orgPrivateKey = decryptEncString(details.body.encryptedPrivateKey, orgKey);
  const userKey = symmetricKeyFrom(rsaDecryptEncString(details.body.resetPasswordKey, orgPrivateKey));
  return { ...newPassword(details.body.masterPasswordSalt, details.body.kdfIterations, userKey, password), userKey };
}

/** A new master password for `salt` in the 2026 form (authentication and unlock objects). */
function newPassword(salt: string, iterations: number, userKey: SymmetricKey, password: string): NewPassword {
  const masterKey = deriveMasterKey(password, salt, iterations);
  const hash = masterPasswordHash(masterKey, password);
  const kdf = { kdfType: 0, iterations, memory: null, parallelism: null };
  const wrapped = encryptToEncString(userKey.raw, stretchMasterKey(masterKey));
  return {
    password,
    masterKey,
    hash,
    body: { authenticationData: { salt, kdf, masterPasswordAuthenticationHash: hash }, unlockData: { salt, kdf, masterKeyWrappedUserKey: wrapped } },
  };
}

const login = (email: string, hash: string) => server.request('POST', '/identity/connect/token', { form: { ...passwordGrantForm({ email } as never), password: hash } });

const userRow = (id: string) => server.database.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

async function eventTypes(orgId: string, userId: string): Promise<number[]> {
  const rows = await server.database.db
    .selectFrom('events')
    .select('type')
    .where((eb) => eb.or([eb('organization_id', '=', orgId), eb.and([eb('user_id', '=', userId), eb('type', '=', EventType.User_UpdatedTempPassword)])]))
    .where('type', 'in', [1506, 1507, 1508, 1519, 1008])
    .orderBy('seq')
    .execute();
  return rows.map((r) => r.type);
}

describe('account recovery', () => {
  it('recovers an enrolled member with real keys; the member logs in, replaces the temporary password and logs in again', async () => {
    const { orgId, orgPublicKey, admin } = await recoveryOrg();
    const member = await memberOf(server, orgId, { email: freshEmail('recovered') });
    await enroll(orgId, member, orgPublicKey);
    expect((await memberRow(server, member.memberId))?.reset_password_key).toMatch(/^4\./);

    const temporary = await adminBuildsNewPassword(orgId, admin, member.memberId, 'temporary password from the admin');
    expect(temporary.userKey.raw.equals(member.account.userKey.raw)).toBe(true);
    const logsFrom = server.logs.lines.length;
    const res = await server.request('PUT', `${users(orgId)}/${member.memberId}/recover-account`, {
      token: admin.accessToken,
      json: { resetMasterPassword: true, resetTwoFactor: false, ...temporary.body },
    });
    expect(res.status, res.text).toBe(200);
    // The old token, refresh token and password no longer work.
    expect((await server.request('GET', '/api/accounts/profile', { token: member.accessToken })).status).toBe(401);
    expect((await server.request('POST', '/identity/connect/token', { form: { grant_type: 'refresh_token', client_id: 'cli', refresh_token: member.refreshToken } })).status).toBe(400);
    expect((await login(member.account.email, member.account.masterPasswordHash)).status).toBe(400);
    // The member is mailed (logged: no mail server in tests).
    const mailed = server.logs.lines.slice(logsFrom).join('\n');
    expect(mailed).toContain('Your account was recovered');
    expect(mailed).toContain(member.account.email);

    const first = await login(member.account.email, temporary.hash);
    expect(first.status, first.text).toBe(200);
    expect(first.body.ForcePasswordReset).toBe(true);
    expect(decryptEncString(first.body.Key, stretchMasterKey(temporary.masterKey)).equals(member.account.userKey.raw)).toBe(true);
    const sync = await server.request('GET', '/api/sync', { token: first.body.access_token });
    expect(sync.body.profile.forcePasswordReset).toBe(true);

    // The member's own new password, in the obsolete form older clients send.
    const own = newPassword(member.account.email, 600_000, member.account.userKey, 'my own new password');
    const wrapped = (own.body.unlockData as { masterKeyWrappedUserKey: string }).masterKeyWrappedUserKey;
    const update = await server.request('PUT', '/api/accounts/update-temp-password', {
      token: first.body.access_token,
      json: { newMasterPasswordHash: own.hash, key: wrapped, masterPasswordHint: 'mine' },
    });
    expect(update.status, update.text).toBe(200);
    expect((await login(member.account.email, temporary.hash)).status).toBe(400);
    const second = await login(member.account.email, own.hash);
    expect(second.status).toBe(200);
    expect(second.body.ForcePasswordReset).toBe(false);
    expect(decryptEncString(second.body.Key, stretchMasterKey(own.masterKey)).equals(member.account.userKey.raw)).toBe(true);
    expect((await userRow(member.userId)).master_password_hint).toBe('mine');
    // Only while a temporary password is set.
    const again = await server.request('PUT', '/api/accounts/update-temp-password', { token: second.body.access_token, json: { newMasterPasswordHash: own.hash, key: wrapped } });
    expect(again.status).toBe(400);
    expect(again.body.message).toBe('User does not have a temporary password to update.');

    expect(await eventTypes(orgId, member.userId)).toEqual([EventType.OrganizationUser_ResetPassword_Enroll, EventType.OrganizationUser_AdminResetPassword, EventType.User_UpdatedTempPassword]);
  });

  it('resets the password through the deprecated route, and turns two-step login off on request', async () => {
    const { orgId, orgPublicKey, owner, admin } = await recoveryOrg();
    const member = await memberOf(server, orgId, { type: Role.Admin });
    await enroll(orgId, member, orgPublicKey);
    const temporary = await adminBuildsNewPassword(orgId, owner, member.memberId, 'older web vault');
    const legacy = { newMasterPasswordHash: temporary.hash, key: (temporary.body.unlockData as { masterKeyWrappedUserKey: string }).masterKeyWrappedUserKey };
    const res = await server.request('PUT', `${users(orgId)}/${member.memberId}/reset-password`, { token: owner.accessToken, json: legacy });
    expect(res.status, res.text).toBe(200);
    expect((await login(member.account.email, temporary.hash)).body.ForcePasswordReset).toBe(true);

    const now = new Date().toISOString();
    await server.database.db.insertInto('two_factor_providers').values({ user_id: member.userId, type: 0, enabled: true, metadata: '{}', creation_date: now, revision_date: now, last_used_step: null }).execute();
    const before = await userRow(member.userId);
    const twoFactor = await server.request('PUT', `${users(orgId)}/${member.memberId}/recover-account`, { token: admin.accessToken, json: { resetMasterPassword: false, resetTwoFactor: true } });
    expect(twoFactor.status, twoFactor.text).toBe(200);
    expect(await server.database.db.selectFrom('two_factor_providers').select('type').where('user_id', '=', member.userId).execute()).toEqual([]);
    // The password stays as it was.
    expect((await userRow(member.userId)).master_password_hash).toBe(before.master_password_hash);
    expect(await eventTypes(orgId, member.userId)).toEqual([
      EventType.OrganizationUser_ResetPassword_Enroll,
      EventType.OrganizationUser_AdminResetPassword,
      EventType.OrganizationUser_AdminResetTwoFactor,
    ]);
  });

  it('refuses recoveries the official server refuses, and changes nothing', async () => {
    const { orgId, orgPublicKey, owner, admin, withKey } = await recoveryOrg();
    const other = await recoveryOrg();
    const enrolled = await memberOf(server, orgId);
    await enroll(orgId, enrolled, orgPublicKey);
    const notEnrolled = await memberOf(server, orgId);
    await enroll(orgId, owner, orgPublicKey);
    const custom = await withKey(Role.Custom, { manageUsers: true });
    const recoverer = await withKey(Role.Custom, { manageResetPassword: true });
    const temporary = await adminBuildsNewPassword(orgId, admin, enrolled.memberId, 'never used');
    const recover = (token: string, id: string, body: Record<string, unknown> = { resetMasterPassword: true, ...temporary.body }, org = orgId) =>
      server.request('PUT', `${users(org)}/${id}/recover-account`, { token, json: body });
    const db = server.database.db;
    const snapshot = async () => ({
      users: await db.selectFrom('users').select(['id', 'master_password_hash', 'key', 'security_stamp', 'force_password_reset']).orderBy('id').execute(),
      providers: await db.selectFrom('two_factor_providers').select(['user_id', 'type']).orderBy('user_id').execute(),
      enrollments: await db.selectFrom('organization_users').select(['id', 'reset_password_key', 'status']).where('organization_id', '=', orgId).orderBy('id').execute(),
    });
    // Two-step login on for every member a refused request names, so a refused turn-off would show.
    const now = new Date().toISOString();
    for (const userId of [enrolled.userId, notEnrolled.userId, owner.userId, admin.userId]) {
      await db.insertInto('two_factor_providers').values({ user_id: userId, type: 0, enabled: true, metadata: '{}', creation_date: now, revision_date: now, last_used_step: null }).execute();
    }
    const before = await snapshot();

    const notValid = await recover(admin.accessToken, notEnrolled.memberId);
    expect([notValid.status, notValid.body.message]).toEqual([400, 'Organization User not valid.']);
    const ownerByAdmin = await recover(admin.accessToken, owner.memberId);
    expect([ownerByAdmin.status, ownerByAdmin.body.message]).toEqual([400, "You are not permitted to recover this user's account."]);
    const adminByCustom = await recover(recoverer.accessToken, admin.memberId);
    expect([adminByCustom.status, adminByCustom.body.message]).toEqual([400, "You are not permitted to recover this user's account."]);
    expect((await recover(custom.accessToken, enrolled.memberId)).status).toBe(403);
    expect((await recover(enrolled.accessToken, enrolled.memberId)).status).toBe(403);
    // An admin of another organization: not a member here (404), and the member is not theirs (404).
    expect((await recover(other.admin.accessToken, enrolled.memberId)).status).toBe(404);
    expect((await recover(other.admin.accessToken, enrolled.memberId, undefined, other.orgId)).status).toBe(404);
    const none = await recover(admin.accessToken, enrolled.memberId, { resetMasterPassword: false, resetTwoFactor: false });
    expect([none.status, none.body.validationErrors]).toEqual([400, { resetMasterPassword: ['At least one recovery action must be requested.'] }]);
    const missing = await recover(admin.accessToken, enrolled.memberId, { resetMasterPassword: true });
    expect(missing.body.validationErrors).toHaveProperty('newMasterPasswordHash');
    const badKey = await recover(admin.accessToken, enrolled.memberId, { resetMasterPassword: true, newMasterPasswordHash: temporary.hash, key: 'not an encrypted string' });
    expect([badKey.status, Object.keys(badKey.body.validationErrors ?? {})]).toEqual([400, ['key']]);
    const wrongSalt = structuredClone(temporary.body) as { authenticationData: { salt: string }; unlockData: { salt: string } };
    wrongSalt.authenticationData.salt = wrongSalt.unlockData.salt = 'someone@else.example';
    expect((await recover(admin.accessToken, enrolled.memberId, { resetMasterPassword: true, ...wrongSalt })).body.validationErrors).toHaveProperty(['unlockData.salt']);

    // Nor do they read the escrowed key of a higher role: 404 alone, left out of a list.
    expect((await server.request('GET', `${users(orgId)}/${owner.memberId}/reset-password-details`, { token: admin.accessToken })).status).toBe(404);
    expect((await server.request('GET', `${users(orgId)}/${admin.memberId}/reset-password-details`, { token: recoverer.accessToken })).status).toBe(404);
    const listed = await server.request('POST', `${users(orgId)}/account-recovery-details`, { token: recoverer.accessToken, json: { ids: [owner.memberId, admin.memberId, enrolled.memberId] } });
    expect((listed.body.data as { organizationUserId: string }[]).map((d) => d.organizationUserId)).toEqual([enrolled.memberId]);
    expect((await server.request('GET', `${users(orgId)}/${owner.memberId}/reset-password-details`, { token: owner.accessToken })).body.resetPasswordKey).toMatch(/^4\./);

    // Two-step login alone is refused the same way.
    const twoStep = { resetTwoFactor: true };
    expect((await recover(admin.accessToken, notEnrolled.memberId, twoStep)).body.message).toBe('Organization User not valid.');
    expect((await recover(admin.accessToken, owner.memberId, twoStep)).body.message).toBe("You are not permitted to recover this user's account.");
    expect((await recover(recoverer.accessToken, admin.memberId, twoStep)).body.message).toBe("You are not permitted to recover this user's account.");
    expect((await recover(custom.accessToken, enrolled.memberId, twoStep)).status).toBe(403);
    expect((await recover(other.admin.accessToken, enrolled.memberId, twoStep)).status).toBe(404);

    // With the policy off, nobody recovers anyone.
    await server.database.db.updateTable('policies').set({ enabled: false }).where('organization_id', '=', orgId).execute();
    const policyOff = await recover(admin.accessToken, enrolled.memberId);
    expect([policyOff.status, policyOff.body.message]).toEqual([400, 'Organization does not have the password reset policy enabled.']);
    expect((await recover(admin.accessToken, enrolled.memberId, twoStep)).body.message).toBe('Organization does not have the password reset policy enabled.');

    expect(await snapshot()).toEqual(before);
    const events = await eventTypes(orgId, enrolled.userId);
    expect(events).not.toContain(EventType.OrganizationUser_AdminResetPassword);
    expect(events).not.toContain(EventType.OrganizationUser_AdminResetTwoFactor);
  });
});

describe('enrollment', () => {
  it('enrolls with the master password, withdraws, and refuses what the official server refuses', async () => {
    const { orgId, orgPublicKey, admin } = await recoveryOrg();
    const member = await memberOf(server, orgId);
    const put = (as: LoggedInUser, userId: string, json: Record<string, unknown>, org = orgId) =>
      server.request('PUT', `${users(org)}/${userId}/reset-password-enrollment`, { token: as.accessToken, json });

    const wrongPassword = await put(member, member.userId, { ...enrollment(member, orgPublicKey), masterPasswordHash: 'wrong' });
    expect([wrongPassword.status, wrongPassword.body.validationErrors]).toEqual([400, { masterPasswordHash: ['Incorrect password'] }]);
    const badKey = await put(member, member.userId, { resetPasswordKey: 'plain text', masterPasswordHash: member.account.masterPasswordHash });
    expect(Object.keys(badKey.body.validationErrors ?? {})).toEqual(['resetPasswordKey']);
    // Only for oneself: an admin cannot enroll a member, nor a member someone else.
    const byAdmin = await put(admin, member.userId, enrollment(admin, orgPublicKey));
    expect([byAdmin.status, byAdmin.body.message]).toEqual([400, 'User not valid.']);
    const stranger = await seedAccount(server);
    expect((await put(stranger, stranger.userId, enrollment(stranger, orgPublicKey))).body.message).toBe('User not valid.');
    expect((await memberRow(server, member.memberId))?.reset_password_key).toBeNull();

    expect((await put(member, member.userId, enrollment(member, orgPublicKey))).status).toBe(200);
    expect((await put(member, member.userId, { resetPasswordKey: null })).status).toBe(200);
    expect((await memberRow(server, member.memberId))?.reset_password_key).toBeNull();
    expect(await eventTypes(orgId, member.userId)).toEqual([EventType.OrganizationUser_ResetPassword_Enroll, EventType.OrganizationUser_ResetPassword_Withdraw]);

    const off = await recoveryOrg({ policy: false });
    const offMember = await memberOf(server, off.orgId);
    const refused = await put(offMember, offMember.userId, enrollment(offMember, off.orgPublicKey), off.orgId);
    expect([refused.status, refused.body.message]).toEqual([400, 'Organization does not have the password reset policy enabled.']);
  });

  it('refuses withdrawal where the policy enrolls automatically', async () => {
    const { orgId, orgPublicKey } = await recoveryOrg({ autoEnroll: true });
    const member = await memberOf(server, orgId, { status: Status.Confirmed });
    await enroll(orgId, member, orgPublicKey);
    const res = await server.request('PUT', `${users(orgId)}/${member.userId}/reset-password-enrollment`, { token: member.accessToken, json: { resetPasswordKey: null } });
    expect([res.status, res.body.validationErrors]).toEqual([400, { resetPasswordKey: ['Due to an Enterprise policy, you are not allowed to withdraw from account recovery.'] }]);
    expect((await memberRow(server, member.memberId))?.reset_password_key).not.toBeNull();
  });

  it('takes the key without a master password where SSO is on with trusted devices, as officially, and nowhere else', async () => {
    const { orgId, orgPublicKey } = await recoveryOrg({ autoEnroll: true });
    // A member made just in time by an SSO login: no master password at all.
    const member = await memberOf(server, orgId, { status: Status.Accepted });
    await server.database.db.updateTable('users').set({ master_password_hash: null, key: null }).where('id', '=', member.userId).execute();
    const put = () => server.request('PUT', `${users(orgId)}/${member.userId}/reset-password-enrollment`, { token: member.accessToken, json: { resetPasswordKey: enrollment(member, orgPublicKey).resetPasswordKey, masterPasswordHash: null } });
    const sso = (enabled: boolean, memberDecryptionType: number) => {
      const now = new Date().toISOString();
      return saveSsoConfig(server.database.db, { organizationId: orgId, enabled, data: { configType: SsoType.OpenIdConnect, memberDecryptionType, authority: 'https://idp.example', clientId: 'c', clientSecret: '' }, creationDate: now, revisionDate: now });
    };

    expect((await put()).body.validationErrors).toEqual({ masterPasswordHash: ['Incorrect password'] });
    await sso(true, MemberDecryptionType.MasterPassword);
    expect((await put()).status).toBe(400);
    // Trusted devices chosen but SSO off: the official rule asks for both.
    await sso(false, MemberDecryptionType.TrustedDeviceEncryption);
    expect((await put()).status).toBe(400);
    expect((await memberRow(server, member.memberId))?.reset_password_key).toBeNull();

    await sso(true, MemberDecryptionType.TrustedDeviceEncryption);
    const res = await put();
    expect(res.status, res.text).toBe(200);
    const escrowed = (await memberRow(server, member.memberId))?.reset_password_key ?? '';
    expect(escrowed).toMatch(/^4\./);
    expect(await eventTypes(orgId, member.userId)).toEqual([EventType.OrganizationUser_ResetPassword_Enroll]);
  });
});

describe('the new master password', () => {
  const MISSING = 'Must provide either new payloads (UnlockData/AuthenticationData) or legacy payloads (NewMasterPasswordHash/Key).';
  const missingEverywhere = { authenticationData: [MISSING], unlockData: [MISSING], newMasterPasswordHash: [MISSING], key: [MISSING] };
  const wrappedOf = (body: Record<string, unknown>) => (body.unlockData as { masterKeyWrappedUserKey: string }).masterKeyWrappedUserKey;

  it('takes either form, prefers the objects when both come, and refuses neither form complete or a malformed wrapped key', async () => {
    const { orgId, orgPublicKey, owner, admin } = await recoveryOrg();
    const member = await memberOf(server, orgId);
    await enroll(orgId, member, orgPublicKey);
    const objects = await adminBuildsNewPassword(orgId, admin, member.memberId, 'the objects win');
    const legacy = newPassword(member.account.email, 600_000, member.account.userKey, 'the obsolete pair');
    const legacyPair = { newMasterPasswordHash: legacy.hash, key: wrappedOf(legacy.body) };
    const recover = (json: Record<string, unknown>, id = member.memberId, org = orgId) => server.request('PUT', `${users(org)}/${id}/recover-account`, { token: admin.accessToken, json });
    const before = await userRow(member.userId);

    // One object alone is no password; the body is refused before the caller's right to the member, or the policy, is weighed.
    const unlockOnly = await recover({ resetMasterPassword: true, unlockData: objects.body.unlockData });
    expect([unlockOnly.status, unlockOnly.body.validationErrors]).toEqual([400, missingEverywhere]);
    expect((await recover({ resetMasterPassword: true, authenticationData: objects.body.authenticationData, key: legacyPair.key }, owner.memberId)).body.validationErrors).toEqual(missingEverywhere);
    const off = await recoveryOrg({ policy: false });
    const offMember = await memberOf(server, off.orgId);
    const offMissing = await server.request('PUT', `${users(off.orgId)}/${offMember.memberId}/recover-account`, { token: off.admin.accessToken, json: { resetMasterPassword: true } });
    expect([offMissing.status, offMissing.body.validationErrors]).toEqual([400, missingEverywhere]);
    const malformed = structuredClone(objects.body) as { unlockData: { masterKeyWrappedUserKey: string } };
    malformed.unlockData.masterKeyWrappedUserKey = 'not an encrypted string';
    const badWrapped = await recover({ resetMasterPassword: true, ...malformed });
    expect([badWrapped.status, Object.keys(badWrapped.body.validationErrors ?? {})]).toEqual([400, ['unlockData.masterKeyWrappedUserKey']]);
    const after = await userRow(member.userId);
    expect([after.master_password_hash, after.key, after.security_stamp]).toEqual([before.master_password_hash, before.key, before.security_stamp]);

    // An incomplete object beside the complete obsolete pair: the pair is the password.
    expect((await recover({ resetMasterPassword: true, unlockData: objects.body.unlockData, ...legacyPair })).status).toBe(200);
    expect((await login(member.account.email, legacy.hash)).status).toBe(200);
    expect((await login(member.account.email, objects.hash)).status).toBe(400);
    // Both complete, naming different passwords: the objects, as the official server prefers them.
    expect((await recover({ resetMasterPassword: true, ...objects.body, ...legacyPair })).status).toBe(200);
    const first = await login(member.account.email, objects.hash);
    expect(first.status).toBe(200);
    expect((await login(member.account.email, legacy.hash)).status).toBe(400);

    // The member's own replacement reads the same way.
    const own = await server.request('PUT', '/api/accounts/update-temp-password', { token: first.body.access_token, json: { unlockData: objects.body.unlockData } });
    expect([own.status, own.body.validationErrors]).toEqual([400, missingEverywhere]);
  });
});

describe('a change committed while the new password is hashed', () => {
  afterEach(() => {
    afterHash.run = async () => undefined;
  });

  const recoverWhile = async (change: (member: SeededMember) => Promise<unknown>, as: 'owner' | 'admin' = 'admin') => {
    const org = await recoveryOrg();
    const member = await memberOf(server, org.orgId);
    await enroll(org.orgId, member, org.orgPublicKey);
    const temporary = await adminBuildsNewPassword(org.orgId, org[as], member.memberId, 'raced');
    afterHash.run = async () => {
      await change(member);
    };
    const res = await server.request('PUT', `${users(org.orgId)}/${member.memberId}/recover-account`, { token: org[as].accessToken, json: { resetMasterPassword: true, resetTwoFactor: true, ...temporary.body } });
    return { res, member, temporary };
  };
  const setMember = (member: SeededMember, changes: Record<string, unknown>) => server.database.db.updateTable('organization_users').set(changes).where('id', '=', member.memberId).execute();

  it('refuses the recovery when the member withdrew, was made an owner or changed their password meanwhile, and writes nothing', async () => {
    const withdrew = await recoverWhile((member) => setMember(member, { reset_password_key: null }));
    const promoted = await recoverWhile((member) => setMember(member, { type: Role.Owner }));
    const removed = await recoverWhile((member) => setMember(member, { status: Status.Invited }));
    for (const { res, member, temporary } of [withdrew, promoted, removed]) {
      expect([res.status, res.body.message]).toEqual([400, 'Organization User not valid.']);
      expect((await login(member.account.email, member.account.masterPasswordHash)).status).toBe(200);
      expect((await login(member.account.email, temporary.hash)).status).toBe(400);
      expect(await eventTypes((await memberRow(server, member.memberId))?.organization_id ?? '', member.userId)).toEqual([EventType.OrganizationUser_ResetPassword_Enroll]);
    }
    // The member's own password change lands first: it stays, with its stamp.
    const stamp = 'stamp of a password change';
    const changed = await recoverWhile((member) => server.database.db.updateTable('users').set({ security_stamp: stamp }).where('id', '=', member.userId).execute());
    expect([changed.res.status, changed.res.body.message]).toEqual([400, 'Organization User not valid.']);
    const row = await userRow(changed.member.userId);
    expect([row.security_stamp, Boolean(row.force_password_reset)]).toEqual([stamp, false]);
  });

  it('refuses a second replacement of the temporary password once the first has landed', async () => {
    const { orgId, orgPublicKey, admin } = await recoveryOrg();
    const member = await memberOf(server, orgId);
    await enroll(orgId, member, orgPublicKey);
    const temporary = await adminBuildsNewPassword(orgId, admin, member.memberId, 'temporary');
    expect((await server.request('PUT', `${users(orgId)}/${member.memberId}/recover-account`, { token: admin.accessToken, json: { resetMasterPassword: true, ...temporary.body } })).status).toBe(200);
    const token = (await login(member.account.email, temporary.hash)).body.access_token as string;
    const first = newPassword(member.account.email, 600_000, member.account.userKey, 'first replacement');
    const second = newPassword(member.account.email, 600_000, member.account.userKey, 'second replacement');
    afterHash.run = async () => {
      afterHash.run = async () => undefined;
      const res = await server.request('PUT', '/api/accounts/update-temp-password', { token, json: first.body });
      expect(res.status, res.text).toBe(200);
    };
    const res = await server.request('PUT', '/api/accounts/update-temp-password', { token, json: second.body });
    expect([res.status, res.body.message]).toEqual([400, 'User does not have a temporary password to update.']);
    expect((await login(member.account.email, first.hash)).status).toBe(200);
    expect((await login(member.account.email, second.hash)).status).toBe(400);
  });
});

describe('turning two-step login off', () => {
  it('clears every provider, the recovery code and the remember tokens, revokes where a two-step policy binds, and keeps the password and the sessions', async () => {
    const { orgId, orgPublicKey, admin } = await recoveryOrg();
    const member = await memberOf(server, orgId);
    await enroll(orgId, member, orgPublicKey);
    // Elsewhere, an organization whose two-step login policy binds the member.
    const strict = await seedOrganization(server, { overrides: { use_policies: true } });
    await seedPolicy(server, strict, PolicyType.TwoFactorAuthentication);
    const bound = await seedMembership(server, { organizationId: strict, userId: member.userId, type: Role.User, status: Status.Confirmed, key: '4.aGVsbG8=' });
    const db = server.database.db;
    const now = new Date().toISOString();
    const before = await userRow(member.userId);
    await db.insertInto('two_factor_providers').values({ user_id: member.userId, type: 0, enabled: true, metadata: '{}', creation_date: now, revision_date: now, last_used_step: null }).execute();
    await db.insertInto('two_factor_recovery').values({ user_id: member.userId, code_hash: 'a recovery code hash', creation_date: now }).execute();
    const device = await db.selectFrom('devices').select('id').where('user_id', '=', member.userId).executeTakeFirstOrThrow();
    await db
      .insertInto('two_factor_remember_tokens')
      .values({ token_hash: 'a remember token hash', user_id: member.userId, device_id: device.id, security_stamp: before.security_stamp, expiration_date: new Date(Date.now() + 86_400_000).toISOString(), creation_date: now })
      .execute();
    pushes.clear();
    const logsFrom = server.logs.lines.length;

    const res = await server.request('PUT', `${users(orgId)}/${member.memberId}/recover-account`, { token: admin.accessToken, json: { resetTwoFactor: true } });
    expect(res.status, res.text).toBe(200);
    // The mail says what happened, and no more: the sessions did not end.
    const mailed = server.logs.lines.slice(logsFrom).join('\n');
    expect(mailed).toContain('turned two-step login off for your account');
    expect(mailed).not.toContain('logged out everywhere');
    for (const table of ['two_factor_providers', 'two_factor_recovery', 'two_factor_remember_tokens'] as const) {
      expect(await db.selectFrom(table).select('user_id').where('user_id', '=', member.userId).execute(), table).toEqual([]);
    }
    expect((await memberRow(server, bound))?.status).toBe(Status.Revoked);
    expect(await memberEventTypes(server, [strict])).toEqual([EventType.OrganizationUser_Revoked_TwoFactorNonCompliance]);
    expect(await eventTypes(orgId, member.userId)).toEqual([EventType.OrganizationUser_ResetPassword_Enroll, EventType.OrganizationUser_AdminResetTwoFactor]);
    const to = (type: PushType) => pushes.of(type).map((p) => p.payload.UserId);
    expect([to(PushType.LogOut), to(PushType.SyncSettings), to(PushType.SyncOrgKeys)]).toEqual([[member.userId], [member.userId], [member.userId]]);

    // The password, the stamp and the sessions stay, as on the official server: the LogOut push alone signs the apps out.
    const after = await userRow(member.userId);
    expect([after.master_password_hash, after.key, after.security_stamp, Boolean(after.force_password_reset)]).toEqual([before.master_password_hash, before.key, before.security_stamp, false]);
    expect((await login(member.account.email, member.account.masterPasswordHash)).status).toBe(200);
    expect((await server.request('GET', '/api/accounts/profile', { token: member.accessToken })).status).toBe(200);
  });
});
