import { BadRequest } from '../../http/errors.js';
import type { UserCaller } from '../../http/request-context.js';
import type { AuditLog } from '../../platform/audit/audit-log.js';
import { setUserKeyIdIfUnset, updateUser } from '../../platform/auth/users.repository.js';
import type { PasswordHasher } from '../../platform/auth/password-hasher.js';
import { userPush } from '../../platform/push/push-messages.js';
import { PushType } from '../../platform/push/pushes.js';
import { requireMasterPassword, requireSecret, type SecretVerificationBody } from '../../platform/auth/secret-verification.js';
import { endSessions, removeAccount, requireEnc, userOrThrow, type AccountEnds } from './account-rules.js';
import { randomApiKey } from '../../platform/auth/api-keys.js';
import { usersWithTwoFactor } from '../../platform/auth/two-factor-state.js';
import { toKeysResponse, toProfileResponse, toVerifiedPasswordPolicy, type KeysBody } from './accounts.schemas.js';
import { accountKeysColumns, accountKeysOfRequest, v2KeyColumns, type AccountKeys } from './account-keys.js';
import type { UserRow } from '../../platform/auth/users.repository.js';
import { OrganizationUserStatusType } from '../../platform/access/roles.js';
import type { MasterPasswordPolicyResponse } from '../policies/policies.service.js';

/** The caller's organizations as the profile shows them, each with its membership status (the organizations feature reads them). */
export type ProfileOrganizations = (userId: string) => Promise<Array<{ status: number }>>;

/**
 * The signed-in user's own account: the profile, the key pair, the master password, the API
 * key, logging out everywhere and deleting the account (password and KDF changes: password.service.ts).
 */
export function createProfileService(
  deps: AccountEnds & {
    hasher: PasswordHasher;
    audit: AuditLog;
    /** Confirmed and Accepted memberships, for `profile.organizationsNew`. */
    profileOrganizationsNew: ProfileOrganizations;
    /** The strictest master password policy of the user's organizations (the policies feature reads it). */
    masterPasswordPolicy: (userId: string) => Promise<MasterPasswordPolicyResponse>;
  },
) {
  const { db, clock, hasher } = deps;
  const getUser = (userId: string) => userOrThrow(db, userId);

  /** The profile as the clients read it: the account, its organizations and whether two-step login is on. */
  async function profileOf(userId: string) {
    const user = await getUser(userId);
    const organizationsNew = await deps.profileOrganizationsNew(userId);
    // One read serves both lists, as in sync: `organizations` is the Confirmed part of `organizationsNew`.
    const organizations = organizationsNew.filter((o) => o.status === (OrganizationUserStatusType.Confirmed as number));
    return toProfileResponse(user, organizations, (await usersWithTwoFactor(db, [userId])).has(userId), organizationsNew);
  }

  return {
    getUser,

    profile: ({ userId }: UserCaller) => profileOf(userId),

    /** The account's revision date in milliseconds: the CLI compares it to decide whether to sync. */
    async revisionDate({ userId }: UserCaller): Promise<number> {
      return new Date((await getUser(userId)).account_revision_date).getTime();
    },

    keys: async ({ userId }: UserCaller) => toKeysResponse(await getUser(userId)),

    async updateProfile({ userId }: UserCaller, changes: { name?: string | null; culture?: string | null; masterPasswordHint?: string | null; avatarColor?: string | null }) {
      const now = clock.now().toISOString();
      await updateUser(db, userId, {
        ...(changes.name !== undefined ? { name: changes.name?.trim() || null } : {}),
        ...(changes.culture ? { culture: changes.culture } : {}),
        ...(changes.masterPasswordHint !== undefined ? { master_password_hint: changes.masterPasswordHint || null } : {}),
        ...(changes.avatarColor !== undefined ? { avatar_color: changes.avatarColor } : {}),
        revision_date: now,
        account_revision_date: now,
      });
      return profileOf(userId);
    },

    /** `PUT /accounts/avatar`: the avatar colour (null: the default); the user's other apps sync settings. */
    async updateAvatar({ userId }: UserCaller, avatarColor: string | null) {
      const now = clock.now().toISOString();
      await updateUser(db, userId, { avatar_color: avatarColor, revision_date: now, account_revision_date: now });
      deps.pushes.send(userPush(PushType.SyncSettings, userId, new Date(now)));
      return profileOf(userId);
    },

    /**
     * Sets the account's key pair once; replacing it would make everything shared with it
     * unreadable. `accountKeys`, as on the official server, only for a set of version-2 keys.
     */
    async setKeys({ userId }: UserCaller, body: KeysBody) {
      const user = await getUser(userId);
      const keys = body.accountKeys
        ? accountKeysOfRequest(body.accountKeys, 'accountKeys')
        : { publicKey: body.publicKey, wrappedPrivateKey: requireEnc(body.encryptedPrivateKey, 'encryptedPrivateKey'), v2: null };
      if (body.accountKeys && !keys.v2) throw BadRequest.field('accountKeys', 'AccountKeys are only supported for V2 encryption.');
      const userKeyId = body.userKeyId?.toLowerCase() ?? null;
      if (user.public_key || user.private_key) {
        if (user.public_key !== keys.publicKey || user.private_key !== keys.wrappedPrivateKey) throw new BadRequest('The account already has a key pair.');
        // A repeat answers 200 only when all it sends is already stored; an upgrade to version-2
        // keys comes through key rotation, so a 200 here never hides keys left unstored.
        if (keys.v2 && !sameV2Keys(user, keys)) throw BadRequest.field('accountKeys', 'The account already has a key pair; version-2 keys are set by key rotation.');
        if (userKeyId && userKeyId !== user.user_key_id) throw BadRequest.field('userKeyId', 'The account already has a key pair; its user key id is not changed here.');
        return toKeysResponse(user);
      }
      const now = clock.now().toISOString();
      await updateUser(db, userId, {
        ...accountKeysColumns(keys),
        // As at registration: the key id names the user key, so it is recorded whenever the client sends one.
        ...(userKeyId && !user.user_key_id ? { user_key_id: userKeyId } : {}),
        revision_date: now,
        account_revision_date: now,
      });
      return toKeysResponse(await getUser(userId));
    },

    /** "Log out of all sessions": every token issued so far stops working. */
    async rotateSecurityStamp({ userId }: UserCaller, secret: SecretVerificationBody): Promise<void> {
      const user = await getUser(userId);
      await requireSecret(db, hasher, clock, user, secret);
      await endSessions(deps, user.id);
    },

    async apiKey({ userId }: UserCaller, secret: SecretVerificationBody, rotate: boolean) {
      const user = await getUser(userId);
      await requireSecret(db, hasher, clock, user, secret);
      if (!rotate) return { object: 'apiKey' as const, apiKey: user.api_key, revisionDate: user.revision_date };
      const apiKey = randomApiKey();
      const now = clock.now().toISOString();
      await updateUser(db, userId, { api_key: apiKey, revision_date: now });
      return { object: 'apiKey' as const, apiKey, revisionDate: now };
    },

    /** Whether logins from new devices need a mailed code (used by the identity service when the setting is on). */
    async setVerifyDevices({ userId }: UserCaller, secret: SecretVerificationBody, verifyDevices: boolean): Promise<void> {
      const user = await getUser(userId);
      await requireSecret(db, hasher, clock, user, secret);
      await updateUser(db, userId, { verify_devices: verifyDevices, revision_date: clock.now().toISOString() });
    },

    /**
     * Dialogs that ask for the master password again (the web vault's export) check it here
     * first; the answer is the strictest master password policy of the user's organizations.
     */
    async verifyPassword({ userId }: UserCaller, masterPasswordHash: string | null | undefined) {
      await requireMasterPassword(hasher, await getUser(userId), masterPasswordHash);
      return toVerifiedPasswordPolicy(await deps.masterPasswordPolicy(userId));
    },

    async deleteAccount({ userId, client }: UserCaller, secret: SecretVerificationBody): Promise<void> {
      const user = await getUser(userId);
      await requireSecret(db, hasher, clock, user, secret);
      await removeAccount(deps, user, { client, actingUserId: userId });
    },

    /**
     * The key-id backfill the 2026 clients run after unlocking: the id of the current user key,
     * recorded once (as the official SetUserKeyIdCommand), since cipher writes and unlock data are
     * then checked against it; a new key brings its own id through the rotation. The same id again
     * (a retried request) is answered as the first.
     */
    async setUserKeyId({ userId }: UserCaller, userKeyId: string): Promise<void> {
      const id = userKeyId.toLowerCase();
      const user = await getUser(userId);
      if (user.user_key_id === id) return;
      if (user.user_key_id) throw new BadRequest('User key id is already set.');
      // Only where none is set yet: a backfill racing another cannot replace the id it recorded.
      if (!(await setUserKeyIdIfUnset(db, userId, id))) throw new BadRequest('User key id is already set.');
    },

    /** Any account's public key, by id: admins encrypt the organization key to it when confirming a member. */
    async publicKey(_caller: UserCaller, userId: string) {
      const user = await getUser(userId);
      return { object: 'userKey' as const, userId: user.id, publicKey: user.public_key };
    },
  };
}

export type ProfileService = ReturnType<typeof createProfileService>;

/** Whether the stored version-2 columns are exactly those the set would write. */
function sameV2Keys(user: UserRow, keys: AccountKeys): boolean {
  const columns = v2KeyColumns(keys.v2);
  return (Object.keys(columns) as (keyof typeof columns)[]).every((column) => user[column] === columns[column]);
}
