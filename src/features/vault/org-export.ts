import type { Db } from '../../db/database.js';
import { NotFound } from '../../http/errors.js';
import type { MemberCaller } from '../../platform/access/org-access.js';
import { collectionGrants } from '../../platform/access/grants.js';
import { listCollections } from '../collections/collections.repository.js';
import { toCollectionResponse } from '../collections/collections.schemas.js';
import { organizationDetails } from './admin-ciphers.js';
import type { CipherRow } from './ciphers.repository.js';

/**
 * The admin console's "Export vault" (the official OrganizationExportController, its current
 * rules): owners, admins and custom members who may import and export get the whole vault;
 * any other member gets the collections they manage and the items in them; a member who
 * manages none gets 404, as the official server answers one it does not authorize.
 */
export function createOrganizationExport({ db }: { db: Db }) {
  return {
    async export({ membership }: MemberCaller): Promise<{ collections: ReturnType<typeof toCollectionResponse>[]; ciphers: CipherRow[] }> {
      const { organizationId, userId } = membership;
      if (membership.rights.has('accessImportExport')) {
        const [collections, ciphers] = [await listCollections(db, organizationId), await organizationDetails(db, userId, organizationId)];
        return { collections: collections.map(toCollectionResponse), ciphers };
      }
      const grants = await collectionGrants(db, membership);
      const managed = new Set([...grants].filter(([, grant]) => grant.manage).map(([id]) => id));
      if (managed.size === 0) throw new NotFound();
      const collections = await listCollections(db, organizationId, [...managed]);
      const ciphers = (await organizationDetails(db, userId, organizationId)).filter((row) => row.access?.collectionIds.some((id) => managed.has(id)));
      return { collections: collections.map(toCollectionResponse), ciphers };
    },
  };
}

export type OrganizationExport = ReturnType<typeof createOrganizationExport>;
