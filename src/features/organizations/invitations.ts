import type { InvitationCheck } from '../accounts/accounts.service.js';
import { OrganizationUserStatusType } from './roles.js';

/** An email with an open invitation may register even when open registration is off. */
export const hasPendingInvitation: InvitationCheck = async (db, email) => {
  const row = await db
    .selectFrom('organization_users')
    .select('id')
    .where('email', '=', email)
    .where('status', '=', OrganizationUserStatusType.Invited)
    .executeTakeFirst();
  return row !== undefined;
};
