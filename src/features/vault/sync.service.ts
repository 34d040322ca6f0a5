import type { Db } from '../../db/database.js';
import type { Engine } from '../../db/dialect.js';
import { Unauthorized } from '../../http/errors.js';
import type { UserCaller } from '../../http/request-context.js';
import { findUserWithTwoFactor } from '../two-factor/two-factor.repository.js';
import { collectionsForUser } from '../../platform/access/grants.js';
import { OrganizationUserStatusType } from '../../platform/access/roles.js';
import { toCollectionDetails } from '../collections/collections.schemas.js';
import { profileOrganizationsNew } from '../organizations/profile-organizations.js';
import { syncPoliciesForUser } from '../policies/policies.service.js';
import { vaultRevision } from './revisions.js';
import type { SyncCache } from './sync-cache.js';
import type { SyncData } from './sync.schemas.js';
import { createSyncVault } from './sync-vault.js';
import { listSends } from '../sends/sends.repository.js';
import { toSendResponse } from '../sends/sends.schemas.js';
import { prfPasskeys } from '../passkey-login/passkeys.repository.js';
import { toPrfOption } from '../passkey-login/passkeys.schemas.js';

/**
 * Everything a client caches: the user and the vault revision, the confirmed memberships, the
 * policies, the reachable collections and the Sends, each in one query, then the vault's folders
 * and items (sync-vault.ts: unless the cached section is current).
 */
export function createSyncService(settings: {
  db: Db;
  engine: Engine;
  cache: SyncCache;
  /** Base of the attachment URLs in items (files/attachment-data.ts). */
  apiBase: string;
  /** Organization items listed at once by a sync that lists the vault, their ids in one `in` list. */
  listingPage?: number;
}) {
  const { db } = settings;
  const syncVault = createSyncVault(settings);

  return {
    async load({ userId }: UserCaller, options: { newestType: number }): Promise<SyncData> {
      // The revision is read before the vault: a change landing in between makes the stored
      // section newer than its revision, which costs one extra read later, never a stale answer.
      const [user, revision, organizationsNew, { policies, policiesNew }, collections, sends, passkeys] = await Promise.all([
        findUserWithTwoFactor(db, userId),
        vaultRevision(db, userId),
        profileOrganizationsNew(db, userId),
        syncPoliciesForUser(db, userId),
        collectionsForUser(db, userId),
        listSends(db, userId),
        prfPasskeys(db, userId),
      ]);
      // A valid token of an account deleted since it was issued.
      if (!user) throw new Unauthorized();
      // One read serves both lists: `organizations` is the Confirmed part of `organizationsNew`.
      const organizations = organizationsNew.filter((o) => o.status === (OrganizationUserStatusType.Confirmed as number));
      const shared = { organizations, organizationsNew, collections: collections.map(({ row, grant }) => toCollectionDetails(row, grant)), policies, policiesNew, sends: sends.map(toSendResponse), prfOptions: passkeys.map(toPrfOption) };
      const flags = new Map(organizations.map((o) => [o.id, { useTotp: o.useTotp, limitItemDeletion: o.limitItemDeletion }]));
      const reached = collections.map(({ row, grant }) => ({ id: row.id, organizationId: row.organization_id, grant, organization: flags.get(row.organization_id) }));
      const vault = await syncVault.read(userId, revision, reached, options.newestType);
      return { user, vault, ...shared };
    },
  };
}

export type SyncService = ReturnType<typeof createSyncService>;
