import type { Db } from '../../db/database.js';
import { NotFound } from '../../http/errors.js';
import type { MemberCaller } from '../../platform/access/org-access.js';
import { collectionGrants } from '../../platform/access/grants.js';
import { listCollections, type CollectionRow } from '../collections/collections.repository.js';
import { toCollectionResponse } from '../collections/collections.schemas.js';
import { organizationDetails } from './admin-ciphers.js';
import type { CipherRow } from './ciphers.repository.js';
import { cipherMiniDetailsJson } from './ciphers.schemas.js';

/**
 * The admin console's "Export vault" (the official OrganizationExportController, its current
 * rules): owners, admins and custom members who may import and export get the whole vault;
 * any other member gets the collections they manage and the items in them; a member who
 * manages none gets 404, as the official server answers one it does not authorize. Answered
 * as JSON text, the items in the admin views' form (cipherMiniDetailsJson).
 */
export function createOrganizationExport({ db, apiBase }: { db: Db; apiBase: string }) {
  function answer(collections: CollectionRow[], ciphers: CipherRow[]): string {
    const items = ciphers.map((row) => cipherMiniDetailsJson(row, apiBase)).join(',');
    return `{"object":"organizationExport","collections":${JSON.stringify(collections.map(toCollectionResponse))},"ciphers":[${items}]}`;
  }

  return {
    async export({ membership }: MemberCaller): Promise<string> {
      const { organizationId, userId } = membership;
      if (membership.rights.has('accessImportExport')) {
        const [collections, ciphers] = [await listCollections(db, organizationId), await organizationDetails(db, userId, organizationId)];
        return answer(collections, ciphers);
      }
      const grants = await collectionGrants(db, membership);
      const managed = new Set([...grants].filter(([, grant]) => grant.manage).map(([id]) => id));
      if (managed.size === 0) throw new NotFound();
      const collections = await listCollections(db, organizationId, [...managed]);
      const ciphers = (await organizationDetails(db, userId, organizationId)).filter((row) => row.access?.collectionIds.some((id) => managed.has(id)));
      return answer(collections, ciphers);
    },
  };
}

export type OrganizationExport = ReturnType<typeof createOrganizationExport>;
