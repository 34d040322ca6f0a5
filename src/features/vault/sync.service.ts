import { chunks } from '../../db/chunks.js';
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
import { findSharedColumns, listPersonalCiphers, listPersonalVersions } from './ciphers.repository.js';
import { CipherType, cipherSharedJson, cipherUserJson } from './ciphers.schemas.js';
import { listFolders } from './folders.repository.js';
import { organizationItems, organizationItemVersions, type ReachedCollection } from './org-items.js';
import { vaultRevision } from './revisions.js';
import type { SyncCache, VaultSection } from './sync-cache.js';
import { encodeItems, foldersJson, itemsWriter, syncItemStart } from './sync.schemas.js';
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

/** Bitwarden hides SSH keys from clients older than 2024.12 (or that send no version). */
const shown = (type: number, withSshKeys: boolean) => withSshKeys || type !== (CipherType.SSHKey as number);

/**
 * Everything a client caches, read in a fixed number of queries however large the vault (plus
 * one per slice of 500 listed items that holds changed ones): the user and the vault
 * revision, the confirmed memberships, the policies, the reachable collections, then (unless
 * the cache holds this revision) the folders and the items. Organization items reach sync only
 * through the user's collections: an Owner or Admin sees unassigned items in the admin views,
 * not here.
 *
 * Items are listed by id and version with the user's settings and rights, without their
 * contents; only those whose encoded shared part is not cached at that version are read and
 * encoded (see item-json-cache.ts), so the cost of the first sync after a change grows with
 * what changed, not with the vault. Whole sections are reused only for vaults without
 * organization collections: other members' changes to organization items move no vault
 * revision of this user.
 */
export function createSyncService({ db, cache, apiBase }: { db: Db; cache: SyncCache; /** Base of the attachment URLs in items (files/attachment-data.ts). */ apiBase: string }) {
  /** Every item read and encoded in one pass: the path without a cache. */
  async function readItems(userId: string, reached: readonly ReachedCollection[], withSshKeys: boolean): Promise<Buffer[]> {
    const [personal, org] = await Promise.all([listPersonalCiphers(db, userId), organizationItems(db, userId, reached)]);
    // An item is either the user's own or an organization's (sharing moves it), never both.
    const rows = [...personal, ...org].filter((row) => shown(row.type, withSshKeys));
    return encodeItems(rows.map((row) => ({ start: syncItemStart(cipherSharedJson(row, apiBase)), user: cipherUserJson(row, 'cipherDetails') })));
  }

  /**
   * The items listed by version, their shared parts from the cache where current, else read and
   * encoded, a slice of the listing at a time: besides the answer being written, only one
   * slice's rows are held, however large the vault. A row changed between the listing and its
   * read (the listing's rights may be older than its content: access revoked, then the item
   * edited) sends this sync to readItems, which reads rows and access in one query.
   */
  async function listItems(userId: string, reached: readonly ReachedCollection[], withSshKeys: boolean): Promise<Buffer[]> {
    const [personal, org] = await Promise.all([listPersonalVersions(db, userId), organizationItemVersions(db, userId, reached)]);
    const listed = [...personal, ...org].filter((item) => shown(item.type, withSshKeys));
    const writer = itemsWriter();
    for (const slice of chunks(listed)) {
      const starts = new Map<string, Buffer>();
      for (const item of slice) {
        const start = cache.items.get(item.id, item.version);
        if (start !== undefined) starts.set(item.id, start);
      }
      // One deleted since the listing is left out.
      const missing = new Map(slice.filter((item) => !starts.has(item.id)).map((item) => [item.id, item.version]));
      for (const row of await findSharedColumns(db, [...missing.keys()])) {
        const start = syncItemStart(cipherSharedJson(row, apiBase));
        cache.items.set(row.id, row.version, start);
        if (row.version !== missing.get(row.id)) return readItems(userId, reached, withSshKeys);
        starts.set(row.id, start);
      }
      for (const item of slice) {
        const start = starts.get(item.id);
        if (start) writer.add({ start, user: cipherUserJson(item, 'cipherDetails') });
      }
    }
    return writer.finish();
  }

  return {
    async load(userId: string, options: { withSshKeys: boolean }): Promise<SyncData> {
      // The revision is read before the vault: a change landing in between makes the stored
      // section newer than its revision, which costs one extra read later, never a stale answer.
      const [user, revision, organizations, policies, collections, sends] = await Promise.all([
        findUserWithTwoFactor(db, userId),
        vaultRevision(db, userId),
        profileOrganizations(db, userId),
        policiesForUser(db, userId),
        collectionsForUser(db, userId),
        listSends(db, userId),
      ]);
      // A valid token of an account deleted since it was issued.
      if (!user) throw new Unauthorized();
      const shared = { organizations, collections: collections.map(({ row, grant }) => toCollectionDetails(row, grant)), policies, sends: sends.map(toSendResponse) };
      const cacheable = collections.length === 0;
      const cached = cacheable ? cache.get(userId, revision, options.withSshKeys) : undefined;
      if (cached) return { user, vault: cached, ...shared };

      const reached = collections.map(({ row, grant }) => ({ id: row.id, organizationId: row.organization_id, grant }));
      const items = cache.enabled ? listItems : readItems;
      const [folders, ciphers] = await Promise.all([listFolders(db, userId), items(userId, reached, options.withSshKeys)]);
      const vault: VaultSection = { revision, withSshKeys: options.withSshKeys, folders: foldersJson(folders), ciphers };
      if (cacheable) cache.set(userId, vault);
      return { user, vault, ...shared };
    },
  };
}

export type SyncService = ReturnType<typeof createSyncService>;
