import { randomUUID } from 'node:crypto';
import type { Clock } from '../../shared/clock.js';
import type { Db, Executor } from '../../db/database.js';
import { BadRequest, NotFound } from '../../http/errors.js';
import { isEncString } from '../../http/enc-string.js';
import type { ClientContext } from '../../http/request-context.js';
import type { AuditLog } from '../../platform/audit/audit-log.js';
import { EventType } from '../../platform/audit/event-type.js';
import type { FileStore } from '../../platform/storage/file-store.js';
import { fileFoldersOf, removeFolders } from '../../platform/storage/orphans.js';
import { deleteRefreshTokensOfUser } from '../../platform/auth/tokens.repository.js';
import { deleteUser, findUserById, updateUser, type UserRow } from '../../platform/auth/users.repository.js';
import { releaseDefaultCollections } from '../../platform/access/memberships.js';
import { logOutPush } from '../../platform/push/push-messages.js';
import type { Pushes } from '../../platform/push/pushes.js';

/**
 * What the account's own use cases (registration, profile) and the operator's share: the
 * verification token's marks, the key and API-key rules, and the one writer each of deleting an
 * account and ending its sessions, which the user and the operator both cause.
 */

/** Says whether a user is the only confirmed owner of some organization. */
export type SoleOwnerCheck = (db: Executor, userId: string) => Promise<boolean>;

/** The `typ` of the signed token that finishes a registration (public or an operator's invitation). */
export const VERIFICATION_TYP = 'strongroom-email-verification';
/**
 * The claim that marks a verification token as an operator's invitation. Only
 * `operatorInvitationToken` sets it; the public send-verification-email route signs the email
 * and name alone, so its tokens never open closed registration.
 */
export const OPERATOR_INVITATION_CLAIM = 'srv_inv';

export function requireEnc(value: string | null | undefined, field: string): string {
  if (!value || !isEncString(value)) throw BadRequest.field(field, `The ${field} field is not a valid encrypted string.`);
  return value;
}

/** The web vault's page that finishes a registration started by mail (its finish-signup route). */
export function finishSignupLink(publicUrl: string, token: string, email: string): string {
  const params = new URLSearchParams({ token, email, fromEmail: 'true' });
  return `${publicUrl}/#/finish-signup?${params.toString()}`;
}

export async function userOrThrow(db: Executor, userId: string): Promise<UserRow> {
  const user = await findUserById(db, userId);
  if (!user) throw new NotFound();
  return user;
}

/** What ending an account, or its sessions, touches besides its row. */
export interface AccountEnds {
  db: Db;
  clock: Clock;
  isSoleOwner: SoleOwnerCheck;
  pushes: Pushes;
  /** Where attachment and Send files live: an account's go after its deletion commits. */
  files: FileStore;
  audit: AuditLog;
}

/** Who deletes an account, for its User_Deleted event: the user's own client, or none for the operator. */
export interface Deleter {
  client: ClientContext | null;
  actingUserId: string | null;
}

/** A deletion allowed only while the account's security stamp is still the one it was asked with. */
export interface StampCheck {
  securityStamp: string;
  /** What to throw when the stamp has changed since. */
  refusal: () => BadRequest;
}

/**
 * Deletes the account and, through the foreign keys, its devices, tokens, vault and
 * memberships, and records User_Deleted with it. Refused while it is the only confirmed owner
 * of an organization, as the official server refuses it, so no organization is left without an
 * owner. Takes the id, or the row a caller has just read. With `stamp`, the stamp is read again
 * under the row's lock in the deleting transaction, so a password change or "log out
 * everywhere" that commits after the caller's read still voids the deletion.
 */
export async function removeAccount(deps: AccountEnds, target: UserRow | string, by: Deleter, stamp?: StampCheck): Promise<void> {
  const { db } = deps;
  const userId = (typeof target === 'string' ? await userOrThrow(db, target) : target).id;
  const folders = await db.transaction().execute(async (tx) => {
    if (stamp) {
      const row = await tx.selectFrom('users').select('security_stamp').where('id', '=', userId).forUpdate().executeTakeFirst();
      if (row?.security_stamp !== stamp.securityStamp) throw stamp.refusal();
    }
    if (await deps.isSoleOwner(tx, userId)) {
      throw new BadRequest(
        'Cannot delete this user because it is the sole owner of at least one organization. Please delete these organizations or upgrade another user.',
      );
    }
    const owned = await fileFoldersOf(tx, { userId });
    // The memberships go with the account; their "My Items" collections stay, shared, as officially.
    const memberships = await tx.selectFrom('organization_users').select('id').where('user_id', '=', userId).execute();
    await releaseDefaultCollections(tx, memberships.map((m) => m.id), deps.clock.now().toISOString());
    await deleteUser(tx, userId);
    await deps.audit.record(tx, by.client, { type: EventType.User_Deleted, userId, actingUserId: by.actingUserId });
    return owned;
  });
  await removeFolders(deps.files, folders);
  deps.pushes.send(logOutPush(userId));
}

/** A new security stamp and no refresh tokens: every token issued so far stops working, on every instance. */
export async function endSessions(deps: AccountEnds, userId: string): Promise<void> {
  const now = deps.clock.now().toISOString();
  await deps.db.transaction().execute(async (tx) => {
    await updateUser(tx, userId, { security_stamp: randomUUID(), revision_date: now, account_revision_date: now });
    await deleteRefreshTokensOfUser(tx, userId);
  });
  deps.pushes.send(logOutPush(userId));
}
