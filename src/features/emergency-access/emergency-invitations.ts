import type { InvitationCheck } from '../accounts/registration.service.js';
import type { SigningKeys } from '../../platform/auth/signing-keys.js';
import { EMERGENCY_INVITE_TYP } from './emergency-access.service.js';
import { EmergencyAccessStatus } from './emergency-access-status.js';

/**
 * While open registration is off, someone invited as an emergency contact may still register,
 * with the invitation's token and grant id as the web vault sends them from the link
 * (`acceptEmergencyAccessInviteToken`, `acceptEmergencyAccessId`), as the official server allows.
 * The token must be this server's, unexpired, for that grant and that email, and the grant still
 * an invitation of that address. Otherwise `other` (the organization invitations) decides.
 */
export function orEmergencyInvitation(other: InvitationCheck, keys: SigningKeys): InvitationCheck {
  return async (db, email, proof) => {
    if (await other(db, email, proof)) return true;
    const { emergencyAccessToken: token, emergencyAccessId } = proof;
    if (!token || !emergencyAccessId) return false;
    const payload = await keys.verify(token, { typ: EMERGENCY_INVITE_TYP });
    const id = emergencyAccessId.toLowerCase();
    if (!payload || payload.eaId !== id || typeof payload.email !== 'string' || payload.email.toLowerCase() !== email.toLowerCase()) return false;
    const row = await db
      .selectFrom('emergency_access')
      .select('id')
      .where('id', '=', id)
      .where('email', '=', email.toLowerCase())
      .where('status', '=', EmergencyAccessStatus.Invited)
      .executeTakeFirst();
    return row !== undefined;
  };
}
