import { BadRequest } from '../../http/errors.js';
import { agreedMasterPassword } from '../../platform/auth/master-password.js';
import type { PasswordHasher } from '../../platform/auth/password-hasher.js';
import type { UserRow } from '../../platform/auth/users.repository.js';
import type { NewPasswordPayload } from './account-recovery.schemas.js';

/** A new master password, hashed by the server and ready for `setMasterPassword`. */
export interface PreparedPassword {
  serverHash: string;
  key: string;
}

const MISSING = 'Must provide either new payloads (UnlockData/AuthenticationData) or legacy payloads (NewMasterPasswordHash/Key).';

/**
 * Reads the new master password from either form (the official MasterPasswordPayloadVariantValidator):
 * the 2026 objects, which must agree with each other and with the account's salt and KDF, or the
 * obsolete hash and key; then hashes it, before any transaction opens. `missing` is the refusal
 * when neither form is complete.
 */
export async function prepareNewPassword(
  hasher: PasswordHasher,
  user: UserRow,
  body: NewPasswordPayload,
  missing: { field: string; message: string } = { field: 'newMasterPasswordHash', message: MISSING },
): Promise<PreparedPassword> {
  if (body.authenticationData && body.unlockData) {
    const agreed = agreedMasterPassword(user, body.authenticationData, body.unlockData, { authentication: 'authenticationData', unlock: 'unlockData' });
    return { serverHash: await hasher.hash(agreed.authenticationHash), key: agreed.wrappedUserKey };
  }
  if (body.newMasterPasswordHash && body.key) return { serverHash: await hasher.hash(body.newMasterPasswordHash), key: body.key };
  throw BadRequest.field(missing.field, missing.message);
}
