import { randomUUID } from 'node:crypto';
import { chunks } from '../../db/chunks.js';
import type { Executor } from '../../db/database.js';
import { OrganizationUserStatusType, OrganizationUserType } from '../../platform/access/roles.js';
import { CollectionType } from './collection-type.js';

/** Of `memberIds`, those who already have a "My Items" collection in the organization. */
async function membersWithDefaultCollection(db: Executor, organizationId: string, memberIds: readonly string[]): Promise<Set<string>> {
  const having = new Set<string>();
  for (const slice of chunks(memberIds)) {
    const rows = await db
      .selectFrom('collection_users')
      .innerJoin('collections', 'collections.id', 'collection_users.collection_id')
      .select('collection_users.organization_user_id')
      .where('collections.organization_id', '=', organizationId)
      .where('collections.type', '=', CollectionType.DefaultUserCollection)
      .where('collection_users.organization_user_id', 'in', slice)
      .execute();
    for (const row of rows) having.add(row.organization_user_id);
  }
  return having;
}

/**
 * The one writer of "My Items" collections: gives each of `memberIds` who has none its own
 * collection of type DefaultUserCollection, named with the encrypted `name` the web vault sent,
 * which the member manages. Answers the ids of the members who got one. Writes in slices, so a
 * large organization costs a few statements per 500 members, not two per member. The official
 * server records no event for these, only for the change that caused them.
 */
export async function giveDefaultCollections(tx: Executor, organizationId: string, memberIds: readonly string[], name: string, now: string): Promise<string[]> {
  const having = await membersWithDefaultCollection(tx, organizationId, memberIds);
  const given = [...new Set(memberIds)].filter((id) => !having.has(id));
  for (const slice of chunks(given)) {
    const rows = slice.map((memberId) => ({ memberId, id: randomUUID() }));
    await tx
      .insertInto('collections')
      .values(rows.map(({ id }) => ({ id, organization_id: organizationId, name, external_id: null, type: CollectionType.DefaultUserCollection, creation_date: now, revision_date: now })))
      .execute();
    await tx
      .insertInto('collection_users')
      .values(rows.map(({ id, memberId }) => ({ collection_id: id, organization_user_id: memberId, read_only: false, hide_passwords: false, manage: true })))
      .execute();
  }
  return given;
}

/** Whom the data ownership policy binds: members with an account, other than owners and admins. */
export function boundByDataOwnership(member: { type: number; user_id: string | null }): boolean {
  return member.user_id !== null && member.type !== (OrganizationUserType.Owner as number) && member.type !== (OrganizationUserType.Admin as number);
}

/** Gives every confirmed member the data ownership policy binds a "My Items" collection (the policy was just turned on). */
export async function giveBoundMembersDefaultCollections(tx: Executor, organizationId: string, name: string, now: string): Promise<string[]> {
  const members = await tx
    .selectFrom('organization_users')
    .select(['id', 'type', 'user_id'])
    .where('organization_id', '=', organizationId)
    .where('status', '=', OrganizationUserStatusType.Confirmed)
    .orderBy('id')
    .execute();
  return giveDefaultCollections(tx, organizationId, members.filter(boundByDataOwnership).map((m) => m.id), name, now);
}
