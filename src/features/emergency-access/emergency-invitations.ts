import type { EmergencyInvitationCheck } from '../accounts/registration.service.js';
import type { SigningKeys } from '../../platform/auth/signing-keys.js';
import { findInvitation } from './emergency-access.repository.js';
import { verifyInviteToken } from './emergency-access.service.js';

/**
 * Checks the invitation a registration carries from the link (`acceptEmergencyAccessInviteToken`,
 * `acceptEmergencyAccessId`) where open registration is on: the token must be this server's,
 * unexpired, for that grant and that email, and the grant still an invitation of that address.
 * It never opens closed registration, as on the official server.
 */
export function emergencyInvitationCheck(keys: SigningKeys): EmergencyInvitationCheck {
  return async (db, email, token, emergencyAccessId) => {
    const id = emergencyAccessId.toLowerCase();
    if (!(await verifyInviteToken(keys, token, id, email))) return false;
    return (await findInvitation(db, id, email.toLowerCase())) !== undefined;
  };
}
