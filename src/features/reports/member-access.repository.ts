import { sql } from 'kysely';
import type { Executor } from '../../db/database.js';
import { groupBy } from '../../shared/group-by.js';
import { OrganizationUserStatusType, type OrganizationUserType } from '../../platform/access/roles.js';
import { twoFactorOn } from '../../platform/auth/two-factor-state.js';

/** A member as the member access report shows them. */
export interface ReportedMember {
  id: string;
  type: OrganizationUserType;
  accessAll: boolean;
  userName: string | null;
  email: string | null;
  twoFactorEnabled: boolean;
  resetPasswordKey: string | null;
}

/**
 * The organization's members in every status but revoked (invited and accepted too, as the
 * official report lists them), with their account's name, email and two-step login.
 */
export async function reportedMembers(db: Executor, organizationId: string): Promise<ReportedMember[]> {
  const rows = await db
    .selectFrom('organization_users')
    .leftJoin('users', 'users.id', 'organization_users.user_id')
    .select([
      'organization_users.id',
      'organization_users.type',
      'organization_users.access_all',
      'organization_users.reset_password_key',
      'users.name',
      // An invited member has no account yet: the invited address.
      sql<string | null>`coalesce(users.email, organization_users.email)`.as('email'),
      twoFactorOn('organization_users.user_id').as('two_factor_enabled'),
    ])
    .where('organization_users.organization_id', '=', organizationId)
    .where('organization_users.status', '!=', OrganizationUserStatusType.Revoked)
    .orderBy('organization_users.creation_date')
    .orderBy('organization_users.id')
    .execute();
  return rows.map((r) => ({
    id: r.id,
    type: r.type,
    accessAll: Boolean(r.access_all),
    userName: r.name,
    email: r.email,
    twoFactorEnabled: Boolean(r.two_factor_enabled),
    resetPasswordKey: r.reset_password_key,
  }));
}

/** The organization's collections (name: an encrypted string), in creation order. */
export function collectionsOf(db: Executor, organizationId: string) {
  return db.selectFrom('collections').select(['id', 'name']).where('organization_id', '=', organizationId).orderBy('creation_date').orderBy('id').execute();
}

/** The organization's groups, by name. */
export function groupsOf(db: Executor, organizationId: string) {
  return db.selectFrom('groups').select(['id', 'name']).where('organization_id', '=', organizationId).orderBy('name').orderBy('id').execute();
}

/**
 * The ids of the organization's items in each of its collections, leaving out those in the trash
 * (the official report leaves deleted items out).
 */
export async function itemIdsByCollection(db: Executor, organizationId: string): Promise<Map<string, string[]>> {
  const rows = await db
    .selectFrom('collection_ciphers as cc')
    .innerJoin('collections as c', 'c.id', 'cc.collection_id')
    .innerJoin('ciphers as i', 'i.id', 'cc.cipher_id')
    .select(['cc.collection_id', 'cc.cipher_id'])
    .where('c.organization_id', '=', organizationId)
    .where('i.organization_id', '=', organizationId)
    .where('i.deleted_date', 'is', null)
    .orderBy('cc.collection_id')
    .orderBy('cc.cipher_id')
    .execute();
  return groupBy(
    rows,
    (r) => r.collection_id,
    (r) => r.cipher_id,
  );
}
