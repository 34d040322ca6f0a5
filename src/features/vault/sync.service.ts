import type { Db } from '../../db/database.js';
import { Unauthorized } from '../../http/errors.js';
import { findUserById, type UserRow } from '../accounts/accounts.repository.js';
import { listPersonalCiphers, type CipherRow } from './ciphers.repository.js';
import { listFolders, type FolderRow } from './folders.repository.js';

export interface SyncData {
  user: UserRow;
  folders: FolderRow[];
  ciphers: CipherRow[];
}

/**
 * Everything a client caches, read in a fixed number of queries (the user, the folders, the
 * items with the user's settings joined in), however large the vault. Organizations,
 * collections, policies and sends join here as further single queries when they arrive.
 */
export function createSyncService({ db }: { db: Db }) {
  return {
    async load(userId: string): Promise<SyncData> {
      const [user, folders, ciphers] = await Promise.all([findUserById(db, userId), listFolders(db, userId), listPersonalCiphers(db, userId)]);
      // A valid token of an account deleted since it was issued.
      if (!user) throw new Unauthorized();
      return { user, folders, ciphers };
    },
  };
}

export type SyncService = ReturnType<typeof createSyncService>;
