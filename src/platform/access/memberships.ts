import { sql, type Insertable, type Selectable } from 'kysely';
import { chunks } from '../../db/chunks.js';
import type { Executor } from '../../db/database.js';
import type { OrganizationsTable, OrganizationUsersTable } from '../../db/schema.js';
import { OrganizationUserStatusType, OrganizationUserType } from './roles.js';

/*
 * Organizations and their memberships as every feature reads them: the organization row, who
 * is a member in which status, and the account revisions that make members sync.
 */

export type OrganizationRow = Selectable<OrganizationsTable>;

export type OrganizationUserRow = Selectable<OrganizationUsersTable>;

export async function findOrganization(db: Executor, id: string): Promise<OrganizationRow | undefined> {
  return db.selectFrom('organizations').selectAll().where('id', '=', id).executeTakeFirst();
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

/** CollectionType (features/collections/collection-type.ts), which this floor cannot import. */
const SHARED_COLLECTION = 0;
const DEFAULT_USER_COLLECTION = 1;

/**
 * The one writer of what becomes of departing members' "My Items" collections, called before
 * their memberships go: as on the official server, each becomes a shared collection that keeps
 * the member's email (`defaultUserCollectionEmail`; the invited address, else the account's), so
 * the items in it stay with the organization and admins can tell whose it was.
 */
export async function releaseDefaultCollections(db: Executor, memberIds: readonly string[], now: string): Promise<void> {
  for (const ids of chunks(memberIds, 500)) {
    // One statement per slice: each collection takes its member's email from a correlated read.
    const memberEmail = sql<string | null>`(select coalesce(ou.email, u.email) from collection_users cu
      join organization_users ou on ou.id = cu.organization_user_id left join users u on u.id = ou.user_id
      where cu.collection_id = collections.id and cu.organization_user_id in (${sql.join(ids)}) limit 1)`;
    await db
      .updateTable('collections')
      .set({ type: SHARED_COLLECTION, default_user_collection_email: sql<string | null>`coalesce(default_user_collection_email, ${memberEmail})`, revision_date: now })
      .where('type', '=', DEFAULT_USER_COLLECTION)
      .where('id', 'in', (eb) => eb.selectFrom('collection_users').select('collection_id').where('organization_user_id', 'in', ids))
      .execute();
  }
}

/** Ends a membership; its "My Items" collection stays, shared (releaseDefaultCollections). */
export async function deleteMembership(db: Executor, id: string, now: string): Promise<void> {
  await releaseDefaultCollections(db, [id], now);
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

/**
 * The memberships that give access to an organization: confirmed ones, in an organization that
 * is enabled. Invited, accepted and revoked members, and every member of a disabled
 * organization, reach nothing. Callers select from and filter on `ou` (organization_users) and
 * `o` (organizations); queries that mean another status or ignore `enabled` do not start here.
 */
export function confirmedInEnabledOrganizations(db: Executor) {
  return db
    .selectFrom('organization_users as ou')
    .innerJoin('organizations as o', 'o.id', 'ou.organization_id')
    .where('ou.status', '=', OrganizationUserStatusType.Confirmed)
    .where('o.enabled', '=', true);
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

/**
 * Seats in use: every membership except revoked ones (a revoked member frees a seat); with
 * `secretsManager`, the Secrets Manager seats: those of them with access to it.
 */
export async function countOccupiedSeats(db: Executor, organizationId: string, opts: { secretsManager?: boolean } = {}): Promise<number> {
  let query = db
    .selectFrom('organization_users')
    .select((eb) => eb.fn.countAll<string | number>().as('n'))
    .where('organization_id', '=', organizationId)
    .where('status', '!=', OrganizationUserStatusType.Revoked);
  if (opts.secretsManager) query = query.where('access_secrets_manager', '=', true);
  const row = await query.executeTakeFirstOrThrow();
  return Number(row.n);
}
