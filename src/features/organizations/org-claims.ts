import type { Db } from '../../db/database.js';
import type { ClaimsProvider } from '../../platform/auth/tokens.js';
import { OrganizationUserStatusType, OrganizationUserType } from '../../platform/access/roles.js';

const ROLE_CLAIMS: Partial<Record<OrganizationUserType, string>> = {
  [OrganizationUserType.Owner]: 'orgowner',
  [OrganizationUserType.Admin]: 'orgadmin',
  [OrganizationUserType.User]: 'orguser',
  [OrganizationUserType.Manager]: 'orgmanager',
  [OrganizationUserType.Custom]: 'orgcustom',
};

/** The official role claims: one list of organization ids per role, confirmed memberships only. */
export const organizationClaims: ClaimsProvider = async (db: Db, userId: string) => {
  const rows = await db
    .selectFrom('organization_users')
    .select(['organization_id', 'type'])
    .where('user_id', '=', userId)
    .where('status', '=', OrganizationUserStatusType.Confirmed)
    .execute();
  const claims: Record<string, string[]> = {};
  for (const row of rows) {
    const claim = ROLE_CLAIMS[row.type as OrganizationUserType];
    if (claim) (claims[claim] ??= []).push(row.organization_id);
  }
  return claims;
};
