import { randomUUID } from 'node:crypto';
import { sql, type Insertable, type RawBuilder, type Selectable } from 'kysely';
import { chunks } from '../../db/chunks.js';
import { sendAhead } from '../../db/postgres-driver.js';
import type { CiphersTable, CipherUserSettingsTable } from '../../db/schema.js';
import type { Executor } from '../../db/database.js';
import type { ItemAccess } from '../../platform/access/grants.js';

/** An item as one user sees it: the shared row plus that user's folder, favorite and archive. */
export interface CipherRow extends Omit<Selectable<CiphersTable>, 'version' | 'change'> {
  folder_id: string | null;
  favorite: number | boolean | null;
  archived_date: string | null;
  /** What the user may do with an organization item and where they see it; absent for personal items. */
  access?: ItemAccess;
}

/** An item row as the routes answer it: the item (`c`) and the user's own settings for it (`s`). */
const ROW_COLUMNS = [
  'c.id',
  'c.user_id',
  'c.organization_id',
  'c.type',
  'c.data',
  'c.key',
  'c.reprompt',
  'c.attachments',
  'c.creation_date',
  'c.revision_date',
  'c.deleted_date',
  's.folder_id',
  's.favorite',
  's.archived_date',
] as const;

export function viewOf(executor: Executor, userId: string) {
  return executor
    .selectFrom('ciphers as c')
    .leftJoin('cipher_user_settings as s', (join) => join.onRef('s.cipher_id', '=', 'c.id').on('s.user_id', '=', userId))
    .select(ROW_COLUMNS);
}

/**
 * An item in a sync listing: what says whether its encoded shared part is current (id and
 * version, see item-json-cache.ts), its type, and the user's own part (settings, rights).
 */
export interface ItemVersion {
  id: string;
  version: number;
  type: number;
  folder_id: string | null;
  favorite: number | boolean | null;
  archived_date: string | null;
  access?: ItemAccess;
}

/** Ids, versions and the user's settings of every personal item of a user, without the item contents. */
export async function listPersonalVersions(executor: Executor, userId: string): Promise<ItemVersion[]> {
  return executor
    .selectFrom('ciphers as c')
    .leftJoin('cipher_user_settings as s', (join) => join.onRef('s.cipher_id', '=', 'c.id').on('s.user_id', '=', userId))
    .select(['c.id', 'c.version', 'c.type', 's.folder_id', 's.favorite', 's.archived_date'])
    .where('c.user_id', '=', userId)
    .execute();
}

/**
 * A user's personal items written since the mark `since` (their `change` is above it, see
 * migration 0020 and changeMark), with the user's settings, and how many personal items the user has now:
 * one statement, so both come from the same moment. A section built at `since` holding
 * `total` items less the new ones among `rows` lost none since; otherwise some item left the
 * vault (deleted for good, shared to an organization) without a row to say so.
 */
export async function personalChangesSince(executor: Executor, userId: string, since: number): Promise<{ total: number; rows: (CipherRow & { version: number })[] }> {
  const found = await executor
    .selectFrom((eb) => eb.selectFrom('ciphers').select((e) => e.fn.countAll<number | string>().as('total')).where('user_id', '=', userId).as('t'))
    .leftJoin('ciphers as c', (join) => join.on('c.user_id', '=', userId).on('c.change', '>', since))
    .leftJoin('cipher_user_settings as s', (join) => join.onRef('s.cipher_id', '=', 'c.id').on('s.user_id', '=', userId))
    .select(['t.total', 'c.version', ...ROW_COLUMNS])
    .execute();
  // Without changes, the one row of the count with nulls for the item.
  const rows = found.flatMap(({ total: _, ...row }) => (row.id === null ? [] : [row as CipherRow & { version: number }]));
  return { total: Number(found[0]?.total ?? 0), rows };
}

/** The ids of a user's personal items (for a sync patch to find those that left the vault). */
export async function listPersonalIds(executor: Executor, userId: string): Promise<string[]> {
  return (await executor.selectFrom('ciphers').select('id').where('user_id', '=', userId).execute()).map((row) => row.id);
}

/** The columns of items that every user who sees them shares, with their versions, among `ids`. */
export async function findSharedColumns(executor: Executor, ids: readonly string[]) {
  const rows = [];
  for (const part of chunks(ids)) {
    rows.push(
      ...(await executor
        .selectFrom('ciphers')
        .select(['id', 'version', 'organization_id', 'type', 'data', 'key', 'reprompt', 'attachments', 'creation_date', 'revision_date', 'deleted_date'])
        .where('id', 'in', part)
        .execute()),
    );
  }
  return rows;
}

/** Every personal item of a user, trashed and archived included, in one query. */
export async function listPersonalCiphers(executor: Executor, userId: string): Promise<CipherRow[]> {
  return viewOf(executor, userId).where('c.user_id', '=', userId).execute();
}

/** The personal items of a user among `ids`; ids of other users' items are not found. */
export async function findPersonalCiphers(executor: Executor, userId: string, ids: readonly string[]): Promise<CipherRow[]> {
  if (ids.length === 0) return [];
  const rows: CipherRow[] = [];
  for (const part of chunks(ids)) {
    rows.push(...(await viewOf(executor, userId).where('c.user_id', '=', userId).where('c.id', 'in', part).execute()));
  }
  return rows;
}

/**
 * The `change` of a write of items on SQLite: for an owner's item, one more than the owner's
 * vault revision it finds (touchVault moves the revision in the same transaction, migration
 * 0020); for an organization's item, one more than the stamp counter (which a trigger moves to
 * it, migration 0021). On PostgreSQL a trigger replaces it with the transaction's id.
 */
const ownerStamp = (owner: string | RawBuilder<unknown>) => sql<number>`coalesce((select r.revision from vault_revisions r where r.user_id = ${owner}), 0) + 1`;
const organizationStamp = sql<number>`(select k.value from change_clock k where k.id = 0) + 1`;

/**
 * What every update of item rows sets besides its own columns: a new `version` (sync's item
 * cache, item-json-cache.ts) and `change` (sync's section patches, migrations 0020 and 0021).
 * Set here, the row is written once; the database's triggers do it for writes that do not.
 * (A share, which makes a personal item an organization's, is stamped as the owner's by this and
 * then from the counter by its collection assignments.)
 */
export const rowChange = {
  version: sql<number>`version + 1`,
  change: sql<number>`case when ciphers.user_id is null then ${organizationStamp} else ${ownerStamp(sql.ref('ciphers.user_id'))} end`,
};

export async function insertCiphers(executor: Executor, rows: readonly Insertable<CiphersTable>[]): Promise<void> {
  for (const part of chunks(rows, 200)) {
    await sendAhead(
      executor,
      executor.insertInto('ciphers').values(part.map((row) => ({ ...row, change: row.user_id ? ownerStamp(row.user_id) : organizationStamp }))),
    );
  }
}

export type CipherContent = Pick<CiphersTable, 'type' | 'data' | 'key' | 'reprompt' | 'revision_date'> & Partial<Pick<CiphersTable, 'attachments'>>;

export async function updateCipherContent(executor: Executor, id: string, content: CipherContent): Promise<void> {
  await sendAhead(executor, executor.updateTable('ciphers').set({ ...content, ...rowChange }).where('id', '=', id));
}

/** A new item's columns: those of the table, with no attachments and not in the trash yet. */
export type NewCipherRow = Pick<CiphersTable, 'id' | 'user_id' | 'organization_id' | 'type' | 'data' | 'key' | 'reprompt' | 'creation_date' | 'revision_date'> & {
  attachments: null;
  deleted_date: null;
};

/** A new item's row: owned by a user or an organization, no attachments, created and revised `now`. */
export function newCipherRow(
  owner: { user_id: string; organization_id: null } | { user_id: null; organization_id: string },
  cipher: { type: number; key?: string | null; reprompt?: number | null },
  data: string,
  now: string,
  id: string = randomUUID(),
): NewCipherRow {
  return { id, ...owner, type: cipher.type, data, key: cipher.key ?? null, reprompt: cipher.reprompt ?? 0, attachments: null, creation_date: now, revision_date: now, deleted_date: null };
}

export async function setRevisionDate(executor: Executor, ids: readonly string[], date: string): Promise<void> {
  for (const part of chunks(ids)) await executor.updateTable('ciphers').set({ revision_date: date, ...rowChange }).where('id', 'in', part).execute();
}

export async function setDeletedDate(executor: Executor, ids: readonly string[], deletedDate: string | null, revisionDate: string): Promise<void> {
  for (const part of chunks(ids)) {
    await executor.updateTable('ciphers').set({ deleted_date: deletedDate, revision_date: revisionDate, ...rowChange }).where('id', 'in', part).execute();
  }
}

export async function deleteCiphers(executor: Executor, ids: readonly string[]): Promise<void> {
  for (const part of chunks(ids)) await executor.deleteFrom('ciphers').where('id', 'in', part).execute();
}

export type SettingsColumn = 'folder_id' | 'favorite' | 'archived_date';

/**
 * Writes one user's settings of several items, creating the rows that do not exist yet;
 * `columns` says which columns an existing row takes from `rows` (the others are kept).
 */
export async function upsertUserSettings(
  executor: Executor,
  rows: readonly Insertable<CipherUserSettingsTable>[],
  columns: readonly SettingsColumn[],
): Promise<void> {
  for (const part of chunks(rows, 200)) {
    await executor
      .insertInto('cipher_user_settings')
      .values(part)
      .onConflict((oc) => {
        const target = oc.columns(['user_id', 'cipher_id']);
        return columns.length === 0
          ? target.doNothing()
          : target.doUpdateSet((eb) => Object.fromEntries(columns.map((c) => [c, eb.ref(`excluded.${c}`)])));
      })
      .execute();
  }
}

/** Ids of a user's items filed in a folder. */
export async function cipherIdsInFolder(executor: Executor, userId: string, folderId: string): Promise<string[]> {
  const rows = await executor
    .selectFrom('cipher_user_settings')
    .select('cipher_id')
    .where('user_id', '=', userId)
    .where('folder_id', '=', folderId)
    .execute();
  return rows.map((r) => r.cipher_id);
}
