import type { InvitationCheck } from '../accounts/registration.service.js';
import type { SigningKeys } from '../../platform/auth/signing-keys.js';
import { OrganizationUserStatusType } from '../../platform/access/roles.js';

/** The `typ` of the signed token an organization invitation mails (its link carries it). */
export const INVITE_TOKEN_TYP = 'strongroom-org-invite';

/** What an invitation link carries: its signed token, the membership it opens and the invited email. */
export interface InvitationLink {
  token: string;
  organizationUserId: string;
  email: string;
}

/**
 * True when the token is this server's invitation token, unexpired, for that membership and that
 * email (compared case-insensitively, as the official invitation tokenable does).
 */
export type InvitationTokenCheck = (link: InvitationLink) => Promise<boolean>;

export function invitationTokenCheck(keys: SigningKeys): InvitationTokenCheck {
  return async ({ token, organizationUserId, email }) => {
    const payload = await keys.verify(token, { typ: INVITE_TOKEN_TYP });
    return Boolean(payload) && payload?.orgUserId === organizationUserId && typeof payload.email === 'string' && payload.email.toLowerCase() === email.toLowerCase();
  };
}

/**
 * While open registration is off, an invited email may still register, but only with the
 * invitation's token and membership id, as the web vault sends them from the invitation link
 * (`orgInviteToken`, `organizationUserId`). The email alone is no proof: anyone could otherwise
 * take the address of an invitee before the invitee does.
 */
export function invitationCheck(keys: SigningKeys): InvitationCheck {
  const tokenValid = invitationTokenCheck(keys);
  return async (db, email, proof) => {
    if (!proof.token || !proof.organizationUserId) return false;
    if (!(await tokenValid({ token: proof.token, organizationUserId: proof.organizationUserId, email }))) return false;
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
