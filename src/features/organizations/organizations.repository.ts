import type { Insertable, Selectable, Updateable } from 'kysely';
import type { OrganizationApiKeysTable, OrganizationsTable, OrganizationUsersTable } from '../../db/schema.js';
import type { Executor } from '../../db/database.js';
import { OrganizationUserStatusType, OrganizationUserType } from '../../platform/access/roles.js';

export type OrganizationRow = Selectable<OrganizationsTable>;
export type OrganizationUserRow = Selectable<OrganizationUsersTable>;
export type OrganizationApiKeyRow = Selectable<OrganizationApiKeysTable>;

export async function findOrganization(db: Executor, id: string): Promise<OrganizationRow | undefined> {
  return db.selectFrom('organizations').selectAll().where('id', '=', id).executeTakeFirst();
}

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

export async function insertMembership(db: Executor, membership: Insertable<OrganizationUsersTable>): Promise<void> {
  await db.insertInto('organization_users').values(membership).execute();
}

/** The user's membership in the organization, whatever its status. */
export async function findMembershipOfUser(db: Executor, organizationId: string, userId: string): Promise<OrganizationUserRow | undefined> {
  return db
    .selectFrom('organization_users')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
}

export async function deleteMembership(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('organization_users').where('id', '=', id).execute();
}

export async function confirmedOwnerIds(db: Executor, organizationId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('organization_users')
    .select('id')
    .where('organization_id', '=', organizationId)
    .where('type', '=', OrganizationUserType.Owner)
    .where('status', '=', OrganizationUserStatusType.Confirmed)
    .execute();
  return rows.map((r) => r.id);
}

/** Whether the user owns or administers a Free organization (any membership status but invited). */
export async function adminOfFreeOrganization(db: Executor, userId: string, freePlan: number): Promise<boolean> {
  const row = await db
    .selectFrom('organization_users')
    .innerJoin('organizations', 'organizations.id', 'organization_users.organization_id')
    .select('organizations.id')
    .where('organization_users.user_id', '=', userId)
    .where('organization_users.type', 'in', [OrganizationUserType.Owner, OrganizationUserType.Admin])
    .where('organizations.plan_type', '=', freePlan)
    .executeTakeFirst();
  return row !== undefined;
}

/** Users with a membership (any status) in the organization, to move their revision dates. */
export async function memberUserIds(db: Executor, organizationId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('organization_users')
    .select('user_id')
    .where('organization_id', '=', organizationId)
    .where('user_id', 'is not', null)
    .execute();
  return rows.flatMap((r) => (r.user_id ? [r.user_id] : []));
}

/** Users confirmed in the organization: the members who see its items (to push to, to tell). */
export async function confirmedMemberUserIds(db: Executor, organizationId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('organization_users')
    .select('user_id')
    .where('organization_id', '=', organizationId)
    .where('status', '=', OrganizationUserStatusType.Confirmed)
    .where('user_id', 'is not', null)
    .execute();
  return rows.flatMap((r) => (r.user_id ? [r.user_id] : []));
}

/** Makes the confirmed members of the organizations sync: their account revision moves. */
export async function touchOrganizationMembers(db: Executor, organizationIds: readonly string[], now: string): Promise<void> {
  if (organizationIds.length === 0) return;
  await db
    .updateTable('users')
    .set({ account_revision_date: now })
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('organization_users')
        .select('user_id')
        .where('organization_id', 'in', organizationIds)
        .where('status', '=', OrganizationUserStatusType.Confirmed)
        .where('user_id', 'is not', null)
        .$narrowType<{ user_id: string }>(),
    )
    .execute();
}

export async function touchAccountRevisions(db: Executor, userIds: readonly string[], date: string): Promise<void> {
  if (userIds.length === 0) return;
  await db.updateTable('users').set({ account_revision_date: date }).where('id', 'in', userIds).execute();
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
