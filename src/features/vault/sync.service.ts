import type { Db } from '../../db/database.js';
import { Unauthorized } from '../../http/errors.js';
import { findUserById, type UserRow } from '../accounts/accounts.repository.js';
import { listPersonalCiphers } from './ciphers.repository.js';
import { listFolders } from './folders.repository.js';
import { vaultRevision } from './revisions.js';
import type { SyncCache, VaultSection } from './sync-cache.js';
import { ciphersJson, foldersJson } from './sync.schemas.js';

export interface SyncData {
  user: UserRow;
  vault: VaultSection;
}

/**
 * Everything a client caches, read in a fixed number of queries however large the vault:
 * the user and the vault revision, then, unless the cache holds this revision, the folders
 * and the items with the user's settings joined in. Organizations, collections, policies and
 * sends join here as further single queries when they arrive.
 */
export function createSyncService({ db, cache }: { db: Db; cache: SyncCache }) {
  return {
    async load(userId: string, options: { withSshKeys: boolean }): Promise<SyncData> {
      // The revision is read before the vault: a change landing in between makes the stored
      // entry newer than its revision, which costs one extra read later, never a stale answer.
      const [user, revision] = await Promise.all([findUserById(db, userId), vaultRevision(db, userId)]);
      // A valid token of an account deleted since it was issued.
      if (!user) throw new Unauthorized();
      const cached = cache.get(userId, revision, options.withSshKeys);
      if (cached) return { user, vault: cached };
      const [folders, ciphers] = await Promise.all([listFolders(db, userId), listPersonalCiphers(db, userId)]);
      const vault: VaultSection = {
        revision,
        withSshKeys: options.withSshKeys,
        folders: foldersJson(folders),
        ciphers: Buffer.from(ciphersJson(ciphers, options.withSshKeys)),
      };
      cache.set(userId, vault);
      return { user, vault };
    },
  };
}

export type SyncService = ReturnType<typeof createSyncService>;
