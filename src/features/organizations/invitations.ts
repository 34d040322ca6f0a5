import type { InvitationCheck } from '../accounts/registration.service.js';
import type { SigningKeys } from '../../platform/auth/signing-keys.js';
import { OrganizationUserStatusType } from '../../platform/access/roles.js';

/** The `typ` of the signed token an organization invitation mails (its link carries it). */
export const INVITE_TOKEN_TYP = 'strongroom-org-invite';

/**
 * While open registration is off, an invited email may still register, but only with the
 * invitation's token and membership id, as the web vault sends them from the invitation link
 * (`orgInviteToken`, `organizationUserId`). The email alone is no proof: anyone could otherwise
 * take the address of an invitee before the invitee does.
 */
export function invitationCheck(keys: SigningKeys): InvitationCheck {
  return async (db, email, proof) => {
    if (!proof.token || !proof.organizationUserId) return false;
    const payload = await keys.verify(proof.token, { typ: INVITE_TOKEN_TYP });
    if (!payload || payload.orgUserId !== proof.organizationUserId || payload.email !== email) return false;
    const row = await db
      .selectFrom('organization_users')
      .select('id')
      .where('id', '=', proof.organizationUserId)
      .where('email', '=', email)
      .where('status', '=', OrganizationUserStatusType.Invited)
      .executeTakeFirst();
    return row !== undefined;
  };
}
