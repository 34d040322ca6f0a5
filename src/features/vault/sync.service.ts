import type { Db } from '../../db/database.js';
import { Unauthorized } from '../../http/errors.js';
import { findUserById, type UserRow } from '../accounts/accounts.repository.js';
import { collectionsForUser } from '../collections/collections.repository.js';
import { toCollectionDetails } from '../collections/collections.schemas.js';
import type { CollectionDetailsResponse } from '../collections/collections.schemas.js';
import type { ProfileOrganizationResponse } from '../organizations/organizations.schemas.js';
import { profileOrganizations } from '../organizations/profile-organizations.js';
import type { PolicyResponse } from '../policies/policies.schemas.js';
import { policiesForUser } from '../policies/policies.service.js';
import { listPersonalCiphers, type CipherRow } from './ciphers.repository.js';
import { listFolders, type FolderRow } from './folders.repository.js';
import { organizationItems } from './org-items.js';

export interface SyncData {
  user: UserRow;
  folders: FolderRow[];
  ciphers: CipherRow[];
  organizations: ProfileOrganizationResponse[];
  collections: CollectionDetailsResponse[];
  policies: PolicyResponse[];
}

/**
 * Everything a client caches, read in a fixed number of queries however large the vault: the
 * user, the folders, the personal items with the user's settings joined in, the confirmed
 * memberships, the policies, the reachable collections (a few queries) and then the
 * organization items in those collections (one query). Organization items reach sync only
 * through the user's collections: an Owner or Admin sees unassigned items in the admin views,
 * not here.
 */
export function createSyncService({ db }: { db: Db }) {
  async function collectionsAndItems(userId: string) {
    const collections = await collectionsForUser(db, userId);
    const reached = collections.map(({ row, grant }) => ({ id: row.id, organizationId: row.organization_id, grant }));
    const items = await organizationItems(db, userId, reached);
    return { collections: collections.map(({ row, grant }) => toCollectionDetails(row, grant)), items };
  }

  return {
    async load(userId: string): Promise<SyncData> {
      const [user, folders, personal, organizations, policies, org] = await Promise.all([
        findUserById(db, userId),
        listFolders(db, userId),
        listPersonalCiphers(db, userId),
        profileOrganizations(db, userId),
        policiesForUser(db, userId),
        collectionsAndItems(userId),
      ]);
      // A valid token of an account deleted since it was issued.
      if (!user) throw new Unauthorized();
      const own = new Set(personal.map((c) => c.id));
      const ciphers = [...personal, ...org.items.filter((c) => !own.has(c.id))];
      return { user, folders, ciphers, organizations, collections: org.collections, policies };
    },
  };
}

export type SyncService = ReturnType<typeof createSyncService>;
