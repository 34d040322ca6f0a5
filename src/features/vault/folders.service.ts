import { randomUUID } from 'node:crypto';
import { BadRequest, NotFound } from '../../http/errors.js';
import type { UserCaller } from '../../http/request-context.js';
import { folderPush, userPush } from '../../platform/push/push-messages.js';
import { PushType } from '../../platform/push/pushes.js';
import { touchVault } from './revisions.js';
import { cipherIdsInFolder, setRevisionDate } from './ciphers.repository.js';
import type { VaultDeps } from './ciphers.service.js';
import { cipherIdsInFolders, deleteFolder, deleteFolders, findFolder, insertFolders, listFolders, renameFolder, type FolderRow } from './folders.repository.js';
import { toFolderResponse, type FolderResponse } from './folders.schemas.js';

/** A user's folders. Another user's folder answers exactly like a missing one (404). */
export function createFolderService({ db, clock, pushes }: Omit<VaultDeps, 'audit'>) {
  async function own(userId: string, id: string): Promise<FolderRow> {
    const folder = await findFolder(db, userId, id.toLowerCase());
    if (!folder) throw new NotFound();
    return folder;
  }

  return {
    async list({ userId }: UserCaller): Promise<FolderResponse[]> {
      return (await listFolders(db, userId)).map(toFolderResponse);
    },

    async get({ userId }: UserCaller, id: string): Promise<FolderResponse> {
      return toFolderResponse(await own(userId, id));
    },

    async create({ userId, client }: UserCaller, name: string): Promise<FolderResponse> {
      const now = clock.now().toISOString();
      const folder: FolderRow = { id: randomUUID(), user_id: userId, name, creation_date: now, revision_date: now };
      await db.transaction().execute(async (tx) => {
        await insertFolders(tx, [folder]);
        await touchVault(tx, userId, now);
      });
      pushes.send(folderPush(PushType.SyncFolderCreate, folder, client.deviceIdentifier));
      return toFolderResponse(folder);
    },

    async rename({ userId, client }: UserCaller, id: string, name: string): Promise<FolderResponse> {
      const renamed = await db.transaction().execute(async (tx) => {
        const folder = await findFolder(tx, userId, id.toLowerCase());
        if (!folder) throw new NotFound();
        const now = clock.now().toISOString();
        await renameFolder(tx, folder.id, name, now);
        await touchVault(tx, userId, now);
        return { ...folder, name, revision_date: now };
      });
      pushes.send(folderPush(PushType.SyncFolderUpdate, renamed, client.deviceIdentifier));
      return toFolderResponse(renamed);
    },

    /** The folder's items move to no folder (the foreign key clears them); they count as changed. */
    async delete({ userId, client }: UserCaller, id: string): Promise<void> {
      const deleted = await db.transaction().execute(async (tx) => {
        const folder = await findFolder(tx, userId, id.toLowerCase());
        if (!folder) throw new NotFound();
        const now = clock.now().toISOString();
        await setRevisionDate(tx, await cipherIdsInFolder(tx, userId, folder.id), now);
        await deleteFolder(tx, folder.id);
        await touchVault(tx, userId, now);
        return folder;
      });
      pushes.send(folderPush(PushType.SyncFolderDelete, deleted, client.deviceIdentifier));
    },

    /**
     * Deletes the caller's folders among `ids` (others' and unknown ids are passed over, as the
     * official server does), or all of them; their items move to no folder. One "sync the
     * vault" push instead of one per folder, since items changed folder too.
     */
    async deleteMany({ userId }: UserCaller, ids: readonly string[] | 'all'): Promise<void> {
      if (ids !== 'all' && ids.length === 0) throw BadRequest.field('ids', 'No folder ids provided.');
      const now = clock.now().toISOString();
      const deleted = await db.transaction().execute(async (tx) => {
        const requested = ids === 'all' ? null : new Set(ids.map((id) => id.toLowerCase()));
        const folders = (await listFolders(tx, userId)).filter((folder) => !requested || requested.has(folder.id));
        if (folders.length === 0) return false;
        const folderIds = folders.map((folder) => folder.id);
        await setRevisionDate(tx, await cipherIdsInFolders(tx, userId, folderIds), now);
        await deleteFolders(tx, userId, folderIds);
        await touchVault(tx, userId, now);
        return true;
      });
      if (deleted) pushes.send(userPush(PushType.SyncVault, userId, new Date(now)));
    },
  };
}

export type FolderService = ReturnType<typeof createFolderService>;
