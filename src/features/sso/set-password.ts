import { Type, type Static } from 'typebox';
import type { Clock } from '../../shared/clock.js';
import type { Db } from '../../db/database.js';
import { isBase64, isEncString } from '../../http/enc-string.js';
import { BadRequest, NotFound } from '../../http/errors.js';
import type { UserCaller } from '../../http/request-context.js';
import { Nullable } from '../../http/schemas.js';
import type { AuditLog } from '../../platform/audit/audit-log.js';
import { EventType } from '../../platform/audit/event-type.js';
import { OrganizationUserStatusType } from '../../platform/access/roles.js';
import { findMembershipOfUser, type OrganizationRow } from '../../platform/access/memberships.js';
import { validateKdf } from '../../platform/auth/kdf.js';
import {
  agreedMasterPassword,
  MasterPasswordAuthenticationBody,
  MasterPasswordUnlockBody,
  setMasterPassword,
  type AgreedMasterPassword,
} from '../../platform/auth/master-password.js';
import type { PasswordHasher } from '../../platform/auth/password-hasher.js';
import { findUserById, touchAccountRevision, updateUser, type UserRow } from '../../platform/auth/users.repository.js';
import { AccountKeysRequest, accountKeysColumns, accountKeysOfRequest, type AccountKeys } from '../accounts/account-keys.js';
import { endGrantsOnJoin } from '../emergency-access/emergency-access-joins.js';
import { joinPolicyError } from '../members/member-rules.js';

const OptionalInt = Type.Optional(Nullable(Type.Integer()));

/**
 * The official SetInitialPasswordRequestModel: the 2026 objects (masterPasswordAuthentication,
 * masterPasswordUnlock, accountKeys; without accountKeys for an account that unlocks with trusted
 * devices and already has its keys), or the obsolete flat fields with `keys`.
 */
export const SetPasswordBody = Type.Object({
  masterPasswordAuthentication: Type.Optional(Nullable(MasterPasswordAuthenticationBody)),
  masterPasswordUnlock: Type.Optional(Nullable(MasterPasswordUnlockBody)),
  accountKeys: Type.Optional(Nullable(AccountKeysRequest)),
  masterPasswordHash: Type.Optional(Nullable(Type.String({ maxLength: 300 }))),
  key: Type.Optional(Nullable(Type.String({ maxLength: 10_000 }))),
  keys: Type.Optional(Nullable(Type.Object({ publicKey: Type.String({ minLength: 1, maxLength: 10_000 }), encryptedPrivateKey: Type.String({ minLength: 1, maxLength: 20_000 }) }))),
  kdf: OptionalInt,
  kdfIterations: OptionalInt,
  kdfMemory: OptionalInt,
  kdfParallelism: OptionalInt,
  masterPasswordHint: Type.Optional(Nullable(Type.String({ maxLength: 50 }))),
  orgIdentifier: Type.String({ minLength: 1, maxLength: 300 }),
});
export type SetPasswordBody = Static<typeof SetPasswordBody>;

const ALREADY_SET = 'User already has a master password set.';

/** The new password of a body in either shape, checked; the KDF may be the client's choice (the account had no password). */
function newPasswordOf(user: UserRow, body: SetPasswordBody): AgreedMasterPassword {
  if (body.masterPasswordAuthentication && body.masterPasswordUnlock) {
    return agreedMasterPassword(user, body.masterPasswordAuthentication, body.masterPasswordUnlock, {
      authentication: 'masterPasswordAuthentication',
      unlock: 'masterPasswordUnlock',
      kdfMayChange: true,
    });
  }
  if (!body.masterPasswordHash) throw BadRequest.field('masterPasswordHash', 'MasterPasswordHash must be supplied.');
  if (!body.key || !isEncString(body.key)) throw BadRequest.field('key', 'Key must be supplied as an encrypted string.');
  if (body.kdf == null) throw BadRequest.field('kdf', 'Kdf must be supplied.');
  if (body.kdfIterations == null) throw BadRequest.field('kdfIterations', 'KdfIterations must be supplied.');
  const kdf = validateKdf({ kdf: body.kdf, iterations: body.kdfIterations, memory: body.kdfMemory ?? null, parallelism: body.kdfParallelism ?? null });
  return { kdf, authenticationHash: body.masterPasswordHash, wrappedUserKey: body.key };
}

/**
 * The keys to store: an account without keys must send them (the account keys, or the obsolete
 * `keys` pair); an account that has them (trusted devices) keeps them, and a body naming other
 * ones is refused rather than silently replacing what its devices decrypt with.
 */
function keysToStore(user: UserRow, body: SetPasswordBody): AccountKeys | null {
  const sent = body.accountKeys
    ? accountKeysOfRequest(body.accountKeys, 'accountKeys')
    : body.keys
      ? { publicKey: body.keys.publicKey, wrappedPrivateKey: body.keys.encryptedPrivateKey, v2: null }
      : null;
  const field = body.accountKeys ? 'accountKeys' : 'keys';
  if (!body.accountKeys && body.keys) {
    if (!isEncString(body.keys.encryptedPrivateKey)) throw BadRequest.field('keys.encryptedPrivateKey', 'The private key is not a valid encrypted string.');
    if (!isBase64(body.keys.publicKey)) throw BadRequest.field('keys.publicKey', 'The public key is not base64.');
  }
  if (user.public_key && user.private_key) {
    if (sent && sent.publicKey !== user.public_key) throw BadRequest.field(field, 'Cannot replace existing key(s) with new key(s).');
    return null;
  }
  if (!sent) throw BadRequest.field('accountKeys', 'Account keys are required.');
  return sent;
}

/**
 * `POST /accounts/set-password`: an account made without a master password (provisioned by SSO,
 * or unlocking with trusted devices) sets its first one, as the official
 * FinishSsoJitProvisionMasterPassword, TdeSetPassword and SetInitialMasterPasswordV1 commands do:
 * refused once the account has one; the organization named by its SSO identifier must hold a
 * membership of the account; the password, its KDF and salt are checked as registration checks
 * them, the keys are stored if the account has none, User_ChangedPassword (1001) is recorded and
 * an invited membership is accepted, all in one transaction. The session that set it goes on.
 */
export function createSetPassword(deps: { db: Db; clock: Clock; hasher: PasswordHasher; audit: AuditLog }) {
  const { db, clock } = deps;
  return {
    async setPassword({ userId, client }: UserCaller, body: SetPasswordBody): Promise<void> {
      const user = await findUserById(db, userId);
      if (!user) throw new NotFound();
      if (user.master_password_hash !== null || user.key !== null) throw new BadRequest(ALREADY_SET);
      const next = newPasswordOf(user, body);
      const keys = keysToStore(user, body);
      const org = await organizationBySsoIdentifier(db, body.orgIdentifier);
      if (!org) throw BadRequest.field('orgIdentifier', 'Organization SSO identifier is invalid.');
      const membership = await findMembershipOfUser(db, org.id, userId);
      if (!membership) throw BadRequest.field('orgIdentifier', 'User not found within organization.');
      const accepting = membership.status === (OrganizationUserStatusType.Invited as number);
      if (accepting) {
        const refusal = await joinPolicyError(db, org, membership, userId, 'accept');
        if (refusal) throw new BadRequest(refusal);
      }
      const containedKeyId = body.masterPasswordUnlock?.containedKeyId?.toLowerCase() ?? null;
      const serverHash = await deps.hasher.hash(next.authenticationHash);
      const now = clock.now().toISOString();
      await db.transaction().execute(async (tx) => {
        // Only one first password: a racing request that set it meanwhile wins.
        const fresh = await tx.selectFrom('users').select(['master_password_hash', 'key']).where('id', '=', userId).executeTakeFirst();
        if (!fresh || fresh.master_password_hash !== null || fresh.key !== null) throw new BadRequest(ALREADY_SET);
        await setMasterPassword(tx, userId, {
          serverHash,
          key: next.wrappedUserKey,
          kdf: next.kdf,
          hint: body.masterPasswordHint ?? null,
          forcePasswordReset: false,
          keepSessions: true,
          now,
        });
        if (keys || containedKeyId) await updateUser(tx, userId, { ...(keys ? accountKeysColumns(keys) : {}), ...(containedKeyId ? { user_key_id: containedKeyId } : {}) });
        await deps.audit.record(tx, client, { type: EventType.User_ChangedPassword, userId, actingUserId: userId });
        // As the official command: an invited member joins (accepts) once the password is set.
        if (accepting) {
          await tx.updateTable('organization_users').set({ status: OrganizationUserStatusType.Accepted, email: null, revision_date: now }).where('id', '=', membership.id).execute();
          await touchAccountRevision(tx, userId, now);
          await endGrantsOnJoin(tx, deps.audit, client, org, [userId], { actingUserId: userId });
        }
      });
    },
  };
}

export type SetPassword = ReturnType<typeof createSetPassword>;

/** The organization whose SSO identifier this is, matched case-insensitively as the sign-in page does. */
async function organizationBySsoIdentifier(db: Db, identifier: string): Promise<OrganizationRow | undefined> {
  return db
    .selectFrom('organizations')
    .selectAll()
    .where((eb) => eb(eb.fn('lower', ['identifier']), '=', identifier.trim().toLowerCase()))
    .executeTakeFirst();
}
