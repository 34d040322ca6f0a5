import type { Executor } from '../../db/database.js';
import { sendAhead } from '../../db/postgres-driver.js';
import type { UserRow } from '../../platform/auth/users.repository.js';
import { rowChange } from '../vault/ciphers.repository.js';
import { EmergencyAccessStatus } from '../emergency-access/emergency-access-status.js';
import type { GrantKeyRow, RecoveryEnrollmentRow } from './key-rotation.schemas.js';

/**
 * Locks what a rotation rewrites (passkeys included) for the rest of its transaction (`for update` on PostgreSQL; on
 * SQLite the transaction holds the database's write lock from its start and the clause is left
 * out), then answers the user's row as it is now. The user's row is locked last: every item,
 * folder or Send write locks its row and then the user's (touchVault), and taking them in the
 * same order keeps a rotation and an item edit from deadlocking. A password change or another
 * rotation updates the user's row, so it waits for this rotation or committed before, and the
 * answered row shows which.
 */
export async function lockForRotation(executor: Executor, userId: string): Promise<UserRow | undefined> {
  await sendAhead(executor, executor.selectFrom('ciphers').select('id').where('user_id', '=', userId).where('organization_id', 'is', null).forUpdate());
  await sendAhead(executor, executor.selectFrom('folders').select('id').where('user_id', '=', userId).forUpdate());
  await sendAhead(executor, executor.selectFrom('sends').select('id').where('user_id', '=', userId).forUpdate());
  await sendAhead(executor, executor.selectFrom('emergency_access').select('id').where('grantor_id', '=', userId).forUpdate());
  await sendAhead(executor, executor.selectFrom('organization_users').select('id').where('user_id', '=', userId).forUpdate());
  await sendAhead(executor, executor.selectFrom('webauthn_credentials').select('id').where('user_id', '=', userId).forUpdate());
  return executor.selectFrom('users').selectAll().where('id', '=', userId).forUpdate().executeTakeFirst();
}

/** The user's personal items (trashed and archived too), with what a rotation keeps of them. */
export async function personalItems(executor: Executor, userId: string): Promise<{ id: string; type: number; key: string | null; attachments: string | null }[]> {
  return executor.selectFrom('ciphers').select(['id', 'type', 'key', 'attachments']).where('user_id', '=', userId).where('organization_id', 'is', null).execute();
}

/** The grants the user gave that hold the user key (the official filter: a key is set). */
export async function grantsWithKey(executor: Executor, grantorId: string): Promise<(GrantKeyRow & { status: number })[]> {
  return executor
    .selectFrom('emergency_access as ea')
    .leftJoin('users as u', 'u.id', 'ea.grantee_id')
    .select(['ea.id', 'ea.status', 'ea.grantee_id', 'u.name as grantee_name', 'u.email as grantee_email', 'u.public_key as grantee_public_key'])
    .where('ea.grantor_id', '=', grantorId)
    .where('ea.key_encrypted', 'is not', null)
    .execute();
}

/** The user's memberships enrolled in account recovery, with the organization's public key. */
export async function recoveryEnrollments(executor: Executor, userId: string): Promise<RecoveryEnrollmentRow[]> {
  return executor
    .selectFrom('organization_users as ou')
    .innerJoin('organizations as o', 'o.id', 'ou.organization_id')
    .select(['ou.organization_id', 'o.name', 'o.public_key'])
    .where('ou.user_id', '=', userId)
    .where('ou.reset_password_key', 'is not', null)
    .where('ou.reset_password_key', '!=', '')
    .execute();
}

/**
 * A re-wrapped grant. A grant in recovery goes back to confirmed: the grantor acting on the
 * account ends a pending or granted emergency access, and the grantee must ask again.
 */
export async function rewrapGrant(executor: Executor, grantorId: string, id: string, keyEncrypted: string, status: number, now: string): Promise<void> {
  const inRecovery = [EmergencyAccessStatus.RecoveryInitiated, EmergencyAccessStatus.RecoveryApproved].includes(status);
  await sendAhead(
    executor,
    executor
      .updateTable('emergency_access')
      .set({ key_encrypted: keyEncrypted, revision_date: now, ...(inRecovery ? { status: EmergencyAccessStatus.Confirmed, recovery_initiated_date: null } : {}) })
      .where('id', '=', id)
      .where('grantor_id', '=', grantorId),
  );
}

export async function rewrapRecoveryKey(executor: Executor, userId: string, organizationId: string, resetPasswordKey: string, now: string): Promise<void> {
  await sendAhead(
    executor,
    executor
      .updateTable('organization_users')
      .set({ reset_password_key: resetPasswordKey, revision_date: now })
      .where('user_id', '=', userId)
      .where('organization_id', '=', organizationId),
  );
}

/** A Send re-encrypted, updated only while it is still the user's (as the official `WHERE [UserId] = @UserId`). */
export async function rewriteSend(executor: Executor, userId: string, id: string, values: { key: string; data: string; revision_date: string }): Promise<void> {
  await sendAhead(executor, executor.updateTable('sends').set(values).where('id', '=', id).where('user_id', '=', userId));
}

/** A folder's re-encrypted name, updated only while it is still the user's. */
export async function rewriteFolder(executor: Executor, userId: string, id: string, name: string, now: string): Promise<void> {
  await sendAhead(executor, executor.updateTable('folders').set({ name, revision_date: now }).where('id', '=', id).where('user_id', '=', userId));
}

/**
 * What a rotation writes of a personal item: only what the new key re-encrypts, as the official
 * UpdateForKeyRotation (data, attachments, key, revision date); its type, re-prompt, folder and
 * favorite are not the rotation's to change.
 */
export interface RotatedCipher {
  data: string;
  key: string | null;
  attachments: string | null;
  revision_date: string;
}

/** A personal item re-encrypted, updated only while it is still the user's and not an organization's. */
export async function rewriteCipher(executor: Executor, userId: string, id: string, values: RotatedCipher): Promise<void> {
  await sendAhead(
    executor,
    executor.updateTable('ciphers').set({ ...values, ...rowChange }).where('id', '=', id).where('user_id', '=', userId).where('organization_id', 'is', null),
  );
}
