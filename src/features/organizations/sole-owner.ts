import type { SoleOwnerCheck } from '../accounts/account-rules.js';
import { OrganizationUserStatusType, OrganizationUserType } from '../../platform/access/roles.js';

/**
 * Whether the user is the only confirmed owner of some organization: deleting the account
 * would leave that organization without an owner, so the official server refuses it.
 */
export const isSoleOwner: SoleOwnerCheck = async (db, userId) => {
  const owned = db
    .selectFrom('organization_users')
    .select('organization_id')
    .where('user_id', '=', userId)
    .where('type', '=', OrganizationUserType.Owner)
    .where('status', '=', OrganizationUserStatusType.Confirmed);
  const row = await db
    .selectFrom('organization_users')
    .select('organization_id')
    .where('organization_id', 'in', owned)
    .where('type', '=', OrganizationUserType.Owner)
    .where('status', '=', OrganizationUserStatusType.Confirmed)
    .groupBy('organization_id')
    .having((eb) => eb.fn.countAll(), '=', 1)
    .executeTakeFirst();
  return row !== undefined;
};
