import type { Insertable, Selectable, Updateable } from 'kysely';
import type { OrganizationApiKeysTable, OrganizationsTable } from '../../db/schema.js';
import type { Executor } from '../../db/database.js';
import type { OrganizationRow } from '../../platform/access/memberships.js';

export type OrganizationApiKeyRow = Selectable<OrganizationApiKeysTable>;

/** By SSO identifier (case-insensitive, as SQL Server compares it) or by id. */
export async function findOrganizationByIdentifier(db: Executor, identifier: string): Promise<OrganizationRow | undefined> {
  const lower = identifier.toLowerCase();
  return db
    .selectFrom('organizations')
    .selectAll()
    .where((eb) => eb.or([eb(eb.fn('lower', ['identifier']), '=', lower), eb('id', '=', lower)]))
    .executeTakeFirst();
}

export async function identifierTaken(db: Executor, identifier: string, exceptId: string): Promise<boolean> {
  const row = await db
    .selectFrom('organizations')
    .select('id')
    .where((eb) => eb(eb.fn('lower', ['identifier']), '=', identifier.toLowerCase()))
    .where('id', '!=', exceptId)
    .executeTakeFirst();
  return row !== undefined;
}

export async function findOrganizationByLicenseKey(db: Executor, licenseKey: string): Promise<OrganizationRow | undefined> {
  return db.selectFrom('organizations').selectAll().where('license_key', '=', licenseKey).executeTakeFirst();
}

export async function insertOrganization(db: Executor, org: Insertable<OrganizationsTable>): Promise<void> {
  await db.insertInto('organizations').values(org).execute();
}

export async function updateOrganization(db: Executor, id: string, changes: Updateable<OrganizationsTable>): Promise<void> {
  await db.updateTable('organizations').set(changes).where('id', '=', id).execute();
}

/**
 * Memberships, groups, collections, policies and API keys go with it (foreign keys cascade).
 * The vault tables predate the organization tables, so `ciphers.organization_id` and
 * `collection_ciphers.collection_id` have no foreign keys: the organization's items are deleted
 * here (their collection places and users' settings cascade from them), and any place in one of
 * its collections too. Call it inside the deleting transaction.
 */
export async function deleteOrganization(db: Executor, id: string): Promise<void> {
  await db
    .deleteFrom('collection_ciphers')
    .where('collection_id', 'in', (eb) => eb.selectFrom('collections').select('id').where('organization_id', '=', id))
    .execute();
  await db.deleteFrom('ciphers').where('organization_id', '=', id).execute();
  await db.deleteFrom('organizations').where('id', '=', id).execute();
}

export async function insertCollectionFor(
  db: Executor,
  collection: { id: string; organizationId: string; name: string; date: string },
  organizationUserId: string,
): Promise<void> {
  await db
    .insertInto('collections')
    .values({
      id: collection.id,
      organization_id: collection.organizationId,
      name: collection.name,
      external_id: null,
      type: 0,
      creation_date: collection.date,
      revision_date: collection.date,
    })
    .execute();
  await db
    .insertInto('collection_users')
    .values({ collection_id: collection.id, organization_user_id: organizationUserId, read_only: false, hide_passwords: false, manage: true })
    .execute();
}

export async function findApiKey(db: Executor, organizationId: string, type: number): Promise<OrganizationApiKeyRow | undefined> {
  return db
    .selectFrom('organization_api_keys')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('type', '=', type)
    .executeTakeFirst();
}

export async function insertApiKey(db: Executor, key: Insertable<OrganizationApiKeysTable>): Promise<void> {
  await db
    .insertInto('organization_api_keys')
    .values(key)
    .onConflict((oc) => oc.columns(['organization_id', 'type']).doNothing())
    .execute();
}

export async function updateApiKey(db: Executor, id: string, apiKey: string, date: string): Promise<void> {
  await db.updateTable('organization_api_keys').set({ api_key: apiKey, revision_date: date }).where('id', '=', id).execute();
}
