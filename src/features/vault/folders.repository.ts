import { chunks } from '../../db/chunks.js';
import type { Insertable, Selectable } from 'kysely';
import type { FoldersTable } from '../../db/schema.js';
import type { Executor } from '../../db/database.js';

export type FolderRow = Selectable<FoldersTable>;

export async function listFolders(executor: Executor, userId: string): Promise<FolderRow[]> {
  return executor.selectFrom('folders').selectAll().where('user_id', '=', userId).orderBy('creation_date').orderBy('id').execute();
}

/** A user's folder; another user's folder is not found. */
export async function findFolder(executor: Executor, userId: string, id: string): Promise<FolderRow | undefined> {
  return executor.selectFrom('folders').selectAll().where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
}

/** Removes the user's folders of these ids (a failed import's new folders). */
export async function deleteFolders(executor: Executor, userId: string, ids: readonly string[]): Promise<void> {
  for (const part of chunks(ids)) await executor.deleteFrom('folders').where('user_id', '=', userId).where('id', 'in', part).execute();
}

/** The user's items filed in any of these folders. */
export async function cipherIdsInFolders(executor: Executor, userId: string, folderIds: readonly string[]): Promise<string[]> {
  const ids: string[] = [];
  for (const part of chunks(folderIds)) {
    const rows = await executor.selectFrom('cipher_user_settings').select('cipher_id').where('user_id', '=', userId).where('folder_id', 'in', part).execute();
    ids.push(...rows.map((r) => r.cipher_id));
  }
  return ids;
}

export async function insertFolders(executor: Executor, rows: readonly Insertable<FoldersTable>[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 200) await executor.insertInto('folders').values(rows.slice(i, i + 200)).execute();
}

export async function renameFolder(executor: Executor, id: string, name: string, revisionDate: string): Promise<void> {
  await executor.updateTable('folders').set({ name, revision_date: revisionDate }).where('id', '=', id).execute();
}

export async function deleteFolder(executor: Executor, id: string): Promise<void> {
  await executor.deleteFrom('folders').where('id', '=', id).execute();
}
