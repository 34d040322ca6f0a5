import type { Executor } from '../../db/database.js';
import { findCollection, type CollectionRow } from '../collections/collections.repository.js';
import { type OrganizationRow, countOccupiedSeats, findOrganization, releaseDefaultCollections } from '../../platform/access/memberships.js';
import { CollectionType } from '../collections/collection-type.js';


export async function organizationOf(db: Executor, organizationId: string): Promise<OrganizationRow | undefined> {
  return findOrganization(db, organizationId);
}

/** A collection of the organization, leaving out members' own "My Items" collections unless asked. */
export async function findPublicCollection(db: Executor, organizationId: string, id: string, opts: { includeDefault?: boolean } = {}): Promise<CollectionRow | undefined> {
  const row = await findCollection(db, organizationId, id);
  if (!row || (row.type === CollectionType.DefaultUserCollection && !opts.includeDefault)) return undefined;
  return row;
}

/** Every group membership of the organization's groups: what a directory import compares against. */
export async function groupMembersOfOrganization(db: Executor, organizationId: string): Promise<{ group_id: string; organization_user_id: string }[]> {
  return db
    .selectFrom('group_users')
    .innerJoin('groups', 'groups.id', 'group_users.group_id')
    .select(['group_users.group_id', 'group_users.organization_user_id'])
    .where('groups.organization_id', '=', organizationId)
    .execute();
}

/** Members with access to Secrets Manager, and machine accounts: the floors of a Secrets Manager subscription. */
export async function secretsManagerUsage(db: Executor, organizationId: string): Promise<{ seats: number; serviceAccounts: number }> {
  const seats = await countOccupiedSeats(db, organizationId, { secretsManager: true });
  const accounts = await db
    .selectFrom('service_accounts')
    .select((eb) => eb.fn.countAll<string | number>().as('n'))
    .where('organization_id', '=', organizationId)
    .executeTakeFirstOrThrow();
  return { seats, serviceAccounts: Number(accounts.n) };
}

/**
 * Deletes memberships (their group and collection rows go with them), a few hundred ids a
 * statement; their "My Items" collections stay, shared (releaseDefaultCollections).
 */
export async function deleteMemberships(db: Executor, ids: readonly string[], now: string): Promise<void> {
  await releaseDefaultCollections(db, ids, now);
  for (let i = 0; i < ids.length; i += 500) {
    await db.deleteFrom('organization_users').where('id', 'in', ids.slice(i, i + 500)).execute();
  }
}
