import { sql } from 'kysely';
import type { Executor } from '../../db/database.js';
import { BadRequest } from '../../http/errors.js';

/*
 * The storage quota that stored files count against (users' and organizations' storage_bytes):
 * item attachments and Send files alike, so it sits below both features.
 */

const GB = 1024 * 1024 * 1024;

/** Who stored files count against: an item's owner or its organization, a Send's user. */
export interface StorageOwner {
  user_id: string | null;
  organization_id: string | null;
}

/**
 * Counts `bytes` against the owner's storage, refusing (with Bitwarden's messages) when it would
 * pass the quota: the user's ATTACHMENT_USER_QUOTA_MB, the organization's plan storage. The check
 * and the count are one conditional update, so two uploads racing cannot both pass the limit.
 */
export async function reserveStorage(executor: Executor, owner: StorageOwner, bytes: number, userQuotaBytes: number): Promise<void> {
  if (owner.organization_id) {
    const { limit } = await organizationStorage(executor, owner.organization_id);
    const done = await executor
      .updateTable('organizations')
      .set({ storage_bytes: sql`storage_bytes + ${bytes}` })
      .where('id', '=', owner.organization_id)
      .where(sql<boolean>`storage_bytes + ${bytes} <= ${limit}`)
      .executeTakeFirst();
    if (Number(done.numUpdatedRows) !== 1) throw new BadRequest(ORGANIZATION_FULL);
    return;
  }
  if (!owner.user_id) return;
  const done = await executor
    .updateTable('users')
    .set({ storage_bytes: sql`storage_bytes + ${bytes}` })
    .where('id', '=', owner.user_id)
    .where(sql<boolean>`storage_bytes + ${bytes} <= ${userQuotaBytes}`)
    .executeTakeFirst();
  if (Number(done.numUpdatedRows) !== 1) throw new BadRequest(USER_FULL);
}

/**
 * Refuses (with Bitwarden's messages) when the organization cannot take `bytes` more: no storage
 * in its plan, or not that much left. A check without counting (a share re-upload is counted when
 * the item moves, through reserveStorage).
 */
export async function assertOrganizationRoom(executor: Executor, organizationId: string, bytes: number): Promise<void> {
  const { limit, used } = await organizationStorage(executor, organizationId);
  if (used + bytes > limit) throw new BadRequest(ORGANIZATION_FULL);
}

const ORGANIZATION_FULL = 'Not enough storage available for this organization.';
const USER_FULL = 'Not enough storage available.';

/**
 * Refuses, as reserveStorage would, when the owner's storage cannot take `bytes` more, without
 * counting them: checked before an upload's bytes are written, counted once they are stored.
 */
export async function assertStorageRoom(executor: Executor, owner: StorageOwner, bytes: number, userQuotaBytes: number): Promise<void> {
  if (owner.organization_id) return assertOrganizationRoom(executor, owner.organization_id, bytes);
  if (!owner.user_id) return;
  const user = await executor.selectFrom('users').select('storage_bytes').where('id', '=', owner.user_id).executeTakeFirst();
  if (Number(user?.storage_bytes ?? 0) + bytes > userQuotaBytes) throw new BadRequest(USER_FULL);
}

/** The organization's storage limit and use in bytes; refuses one whose plan has no storage. */
async function organizationStorage(executor: Executor, organizationId: string): Promise<{ limit: number; used: number }> {
  const org = await executor.selectFrom('organizations').select(['max_storage_gb', 'storage_bytes']).where('id', '=', organizationId).executeTakeFirst();
  if (!org || org.max_storage_gb === null) throw new BadRequest('This organization cannot use attachments.');
  return { limit: Number(org.max_storage_gb) * GB, used: Number(org.storage_bytes) };
}

/** Gives `bytes` back to the owner's storage (never below zero). */
export async function releaseStorage(executor: Executor, owner: StorageOwner, bytes: number): Promise<void> {
  if (bytes <= 0) return;
  const table = owner.organization_id ? 'organizations' : 'users';
  const id = owner.organization_id ?? owner.user_id;
  if (!id) return;
  await executor
    .updateTable(table)
    .set({ storage_bytes: sql`case when storage_bytes > ${bytes} then storage_bytes - ${bytes} else 0 end` })
    .where('id', '=', id)
    .execute();
}
