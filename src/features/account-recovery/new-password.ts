import { isEncString } from '../../http/enc-string.js';
import { BadRequest, MODEL_STATE_INVALID } from '../../http/errors.js';
import { agreedMasterPassword } from '../../platform/auth/master-password.js';
import type { PasswordHasher } from '../../platform/auth/password-hasher.js';
import type { UserRow } from '../../platform/auth/users.repository.js';
import type { NewPasswordPayload } from './account-recovery.schemas.js';

/** A new master password, hashed by the server and ready for `setMasterPassword`. */
export interface PreparedPassword {
  serverHash: string;
  key: string;
}

/** The official MasterPasswordPayloadVariantValidator's refusal, word for word. */
export const MISSING_PASSWORD = 'Must provide either new payloads (UnlockData/AuthenticationData) or legacy payloads (NewMasterPasswordHash/Key).';

const PAYLOAD_FIELDS = ['authenticationData', 'unlockData', 'newMasterPasswordHash', 'key'] as const;

/** Whether the body carries a complete new master password in either form. */
export function hasNewPassword(body: NewPasswordPayload): boolean {
  return Boolean((body.authenticationData && body.unlockData) || (body.newMasterPasswordHash && body.key));
}

/** The refusal of a body with neither form complete, naming every field of both, as the official model state does. */
export function missingPassword(): BadRequest {
  return new BadRequest(MODEL_STATE_INVALID, Object.fromEntries(PAYLOAD_FIELDS.map((field) => [field, [MISSING_PASSWORD]])));
}

/**
 * Reads the new master password from either form, as the official MasterPasswordPayloadVariantValidator
 * does: refused only when neither is complete; when both are, the 2026 objects win, as on the
 * official server (the obsolete pair is then ignored). The objects must agree with each other and
 * with the account's salt and KDF, and the wrapped user key must be an EncString (the obsolete
 * `key` is checked by the body's schema). Hashes it before any transaction opens.
 */
export async function prepareNewPassword(hasher: PasswordHasher, user: UserRow, body: NewPasswordPayload): Promise<PreparedPassword> {
  if (body.authenticationData && body.unlockData) {
    if (!isEncString(body.unlockData.masterKeyWrappedUserKey)) {
      throw BadRequest.field('unlockData.masterKeyWrappedUserKey', 'The unlockData.masterKeyWrappedUserKey field is not a valid encrypted string (encType.data|iv|mac).');
    }
    const agreed = agreedMasterPassword(user, body.authenticationData, body.unlockData, { authentication: 'authenticationData', unlock: 'unlockData' });
    return { serverHash: await hasher.hash(agreed.authenticationHash), key: agreed.wrappedUserKey };
  }
  if (body.newMasterPasswordHash && body.key) return { serverHash: await hasher.hash(body.newMasterPasswordHash), key: body.key };
  throw missingPassword();
}
