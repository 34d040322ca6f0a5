import { randomUUID } from 'node:crypto';
import { chunks } from '../../db/chunks.js';
import { BadRequest, NotFound } from '../../http/errors.js';
import type { ClientContext, UserCaller } from '../../http/request-context.js';
import type { Executor } from '../../db/database.js';
import { confirmedMembership, type Membership } from '../../platform/access/org-access.js';
import { collectionGrants } from '../../platform/access/grants.js';
import { EventType } from '../../platform/audit/event-type.js';
import { userPush } from '../../platform/push/push-messages.js';
import { PushType } from '../../platform/push/pushes.js';
import { createWorkQueue, mapInSlices } from '../../shared/work-slices.js';
import { countCollections } from '../collections/collections.repository.js';
import { cipherEvents, touchRevisions } from './cipher-access.js';
import { IMPORT_TOO_LARGE, within } from './cipher-import.js';
import { serializeCipherData, toCipherData } from './cipher-data.js';
import { insertCiphers, newCipherRow } from './ciphers.repository.js';
import type { CipherRequest } from './ciphers.schemas.js';
import type { VaultDeps } from './ciphers.service.js';

/** The official server's limits on one organization import (ImportCiphersLimitation in its appsettings). */
export const ORG_IMPORT_LIMITS = { ciphers: 40_000, collectionRelationships: 80_000, collections: 2_000 };

export interface OrgImportRequest {
  ciphers: CipherRequest[];
  collections: { name: string; id?: string | null; externalId?: string | null }[];
  collectionRelationships: { key: number; value: number }[];
}

/**
 * Who may import into an organization, as the official ImportCiphersController decides: members
 * who may import and export (owners, admins, the custom flag); otherwise a member who manages
 * every existing collection the import names and, when it makes new ones, may create
 * collections. An import naming no collection at all needs the import right. Anyone else gets
 * 404. (The official check lets a manager of one named collection add items to another named
 * one; here every named existing collection must be managed.)
 */
async function mayImport(tx: Executor, membership: Membership, existing: readonly string[], creates: boolean): Promise<boolean> {
  if (membership.rights.has('accessImportExport')) return true;
  if (existing.length === 0 && !creates) return false;
  const grants = await collectionGrants(tx, membership);
  if (!existing.every((id) => grants.get(id)?.manage === true)) return false;
  if (!creates) return true;
  if (membership.rights.has('createNewCollections')) return true;
  const org = await tx.selectFrom('organizations').select('limit_collection_creation').where('id', '=', membership.organizationId).executeTakeFirst();
  return !org?.limit_collection_creation;
}

/**
 * `POST /ciphers/import-organization`: items, collections and which item goes in which
 * collection, written in one transaction: every item is checked before anything is written, and
 * a failure writes nothing. A collection sent with the id of one of the organization's
 * collections is reused; the others are created, managed by the importing member (as the
 * official importer does). Records Cipher_Created (1100) and Collection_Created (1300).
 */
export function createOrgCipherImport({ db, audit, clock, pushes }: VaultDeps) {
  const queue = createWorkQueue({ concurrency: 2, queueLimit: 32, busy: 'The server is busy with other imports. Try again in a moment.' });

  return {
    async import({ userId, client }: UserCaller, organizationId: string, request: OrgImportRequest): Promise<void> {
      if (
        request.ciphers.length > ORG_IMPORT_LIMITS.ciphers ||
        request.collections.length > ORG_IMPORT_LIMITS.collections ||
        request.collectionRelationships.length > ORG_IMPORT_LIMITS.collectionRelationships
      ) {
        throw new BadRequest(IMPORT_TOO_LARGE);
      }
      const orgId = organizationId.toLowerCase();
      const contents = await mapInSlices(request.ciphers, (cipher, i) =>
        within(`ciphers[${i}]`, () => {
          if (cipher.organizationId && cipher.organizationId.toLowerCase() !== orgId) {
            throw BadRequest.field('organizationId', 'An item of another organization cannot be imported here.');
          }
          return serializeCipherData(toCipherData(cipher));
        }),
      );
      const pairs = new Set<string>();
      request.collectionRelationships.forEach((rel, i) => {
        if (rel.key >= request.ciphers.length) throw BadRequest.field(`collectionRelationships[${i}].key`, 'No item has this index.');
        if (rel.value >= request.collections.length) throw BadRequest.field(`collectionRelationships[${i}].value`, 'No collection has this index.');
        pairs.add(`${rel.key}:${rel.value}`);
      });
      const now = await queue(userId, () => write(userId, client, orgId, request, contents, pairs));
      pushes.send(userPush(PushType.SyncVault, userId, new Date(now)));
    },
  };

  async function write(userId: string, client: ClientContext, orgId: string, request: OrgImportRequest, contents: string[], pairs: Set<string>): Promise<string> {
    return db.transaction().execute(async (tx) => {
      const membership = await confirmedMembership(tx, orgId, userId);
      if (!membership) throw new NotFound();
      const given = request.collections.map((c) => c.id?.toLowerCase() ?? null).filter((id): id is string => id !== null);
      const known = new Set<string>();
      for (const part of chunks([...new Set(given)])) {
        const rows = await tx.selectFrom('collections').select('id').where('organization_id', '=', orgId).where('id', 'in', part).execute();
        for (const row of rows) known.add(row.id);
      }
      const now = clock.now().toISOString();
      const collectionIds = request.collections.map((c) => {
        const id = c.id?.toLowerCase();
        return id && known.has(id) ? { id, created: false } : { id: randomUUID(), created: true };
      });
      const created = request.collections.flatMap((c, i) => {
        const target = collectionIds[i] as { id: string; created: boolean };
        return target.created ? [{ id: target.id, organization_id: orgId, name: c.name, external_id: c.externalId ?? null, type: 0, creation_date: now, revision_date: now }] : [];
      });
      if (!(await mayImport(tx, membership, [...known], created.length > 0))) throw new NotFound();
      if (created.length > 0) {
        const org = await tx.selectFrom('organizations').select('max_collections').where('id', '=', orgId).executeTakeFirst();
        if (org?.max_collections != null && (await countCollections(tx, orgId)) + created.length > org.max_collections) {
          throw new BadRequest(`This organization can only have a maximum of ${org.max_collections} collections.`);
        }
        for (const part of chunks(created)) await tx.insertInto('collections').values(part).execute();
        const managed = created.map((c) => ({ collection_id: c.id, organization_user_id: membership.id, read_only: false, hide_passwords: false, manage: true }));
        for (const part of chunks(managed)) await tx.insertInto('collection_users').values(part).execute();
      }
      const ciphers = request.ciphers.map((cipher, i) => newCipherRow({ user_id: null, organization_id: orgId }, cipher, contents[i] as string, now));
      await insertCiphers(tx, ciphers);
      const places = [...pairs].map((pair) => {
        const [key, value] = pair.split(':').map(Number) as [number, number];
        return { cipher_id: (ciphers[key] as { id: string }).id, collection_id: (collectionIds[value] as { id: string }).id };
      });
      for (const part of chunks(places)) await tx.insertInto('collection_ciphers').values(part).onConflict((oc) => oc.columns(['collection_id', 'cipher_id']).doNothing()).execute();
      await audit.record(tx, client, [
        ...created.map((c) => ({ type: EventType.Collection_Created, userId, organizationId: orgId, collectionId: c.id, actingUserId: userId })),
        ...cipherEvents(EventType.Cipher_Created, userId, ciphers.map((c) => ({ id: c.id, organization_id: orgId }))),
      ]);
      await touchRevisions(tx, userId, [{ organization_id: orgId }], now);
      return now;
    });
  }
}

export type OrgCipherImport = ReturnType<typeof createOrgCipherImport>;
