import type { Db } from '../../db/database.js';
import { Unauthorized } from '../../http/errors.js';
import { type UserRow } from '../accounts/accounts.repository.js';
import { findUserWithTwoFactor } from '../two-factor/two-factor.repository.js';
import { collectionsForUser } from '../collections/collections.repository.js';
import { toCollectionDetails, type CollectionDetailsResponse } from '../collections/collections.schemas.js';
import type { ProfileOrganizationResponse } from '../organizations/organizations.schemas.js';
import { profileOrganizations } from '../organizations/profile-organizations.js';
import type { PolicyResponse } from '../policies/policies.schemas.js';
import { policiesForUser } from '../policies/policies.service.js';
import { listPersonalCiphers } from './ciphers.repository.js';
import { listFolders } from './folders.repository.js';
import { organizationItems } from './org-items.js';
import { vaultRevision } from './revisions.js';
import type { SyncCache, VaultSection } from './sync-cache.js';
import { ciphersJson, foldersJson } from './sync.schemas.js';
import { listSends } from '../sends/sends.repository.js';
import { toSendResponse, type SendResponse } from '../sends/sends.schemas.js';

export interface SyncData {
  user: UserRow & { two_factor_enabled?: boolean };
  vault: VaultSection;
  organizations: ProfileOrganizationResponse[];
  collections: CollectionDetailsResponse[];
  policies: PolicyResponse[];
  /** The user's Sends, read afresh (they are not part of the cached vault section). */
  sends: SendResponse[];
}

/**
 * Everything a client caches, read in a fixed number of queries however large the vault: the
 * user and the vault revision, the confirmed memberships, the policies, the reachable
 * collections and the organization items in them, then (unless the cache holds this revision)
 * the folders and the personal items with the user's settings joined in. Organization items
 * reach sync only through the user's collections: an Owner or Admin sees unassigned items in
 * the admin views, not here.
 *
 * Only vaults without organization collections are served from the cache: other members'
 * changes to organization items move no vault revision of this user, so such a vault is
 * always read afresh.
 */
export function createSyncService({ db, cache, apiBase }: { db: Db; cache: SyncCache; /** Base of the attachment URLs in items (files/attachment-data.ts). */ apiBase: string }) {
  async function collectionsAndItems(userId: string) {
    const collections = await collectionsForUser(db, userId);
    const reached = collections.map(({ row, grant }) => ({ id: row.id, organizationId: row.organization_id, grant }));
    const items = reached.length > 0 ? await organizationItems(db, userId, reached) : [];
    return { collections: collections.map(({ row, grant }) => toCollectionDetails(row, grant)), items };
  }

  return {
    async load(userId: string, options: { withSshKeys: boolean }): Promise<SyncData> {
      // The revision is read before the vault: a change landing in between makes the stored
      // entry newer than its revision, which costs one extra read later, never a stale answer.
      const [user, revision, organizations, policies, org, sends] = await Promise.all([
        findUserWithTwoFactor(db, userId),
        vaultRevision(db, userId),
        profileOrganizations(db, userId),
        policiesForUser(db, userId),
        collectionsAndItems(userId),
        listSends(db, userId),
      ]);
      // A valid token of an account deleted since it was issued.
      if (!user) throw new Unauthorized();
      const shared = { organizations, collections: org.collections, policies, sends: sends.map(toSendResponse) };
      const cacheable = org.collections.length === 0;
      const cached = cacheable ? cache.get(userId, revision, options.withSshKeys) : undefined;
      if (cached) return { user, vault: cached, ...shared };

      const [folders, personal] = await Promise.all([listFolders(db, userId), listPersonalCiphers(db, userId)]);
      const vault: VaultSection = {
        revision,
        withSshKeys: options.withSshKeys,
        folders: foldersJson(folders),
        // An item is either the user's own or an organization's (sharing moves it), never both.
        ciphers: Buffer.from(ciphersJson([...personal, ...org.items], options.withSshKeys, apiBase)),
      };
      if (cacheable) cache.set(userId, vault);
      return { user, vault, ...shared };
    },
  };
}

export type SyncService = ReturnType<typeof createSyncService>;
