import type { Executor } from '../../db/database.js';
import { OrganizationUserStatusType, OrganizationUserType } from '../../platform/access/roles.js';

/**
 * Whether an organization the user owns or administers (confirmed) holds an item outside every
 * collection. One query, whatever the number of organizations and items.
 */
export async function adminsUnassignedItems(db: Executor, userId: string): Promise<boolean> {
  const row = await db
    .selectFrom('ciphers')
    .innerJoin('organization_users', 'organization_users.organization_id', 'ciphers.organization_id')
    .select('ciphers.id')
    .where('organization_users.user_id', '=', userId)
    .where('organization_users.status', '=', OrganizationUserStatusType.Confirmed)
    .where('organization_users.type', 'in', [OrganizationUserType.Owner, OrganizationUserType.Admin])
    .where('ciphers.deleted_date', 'is', null)
    .where((eb) =>
      eb.not(eb.exists(eb.selectFrom('collection_ciphers').select('collection_ciphers.cipher_id').whereRef('collection_ciphers.cipher_id', '=', 'ciphers.id'))),
    )
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}
