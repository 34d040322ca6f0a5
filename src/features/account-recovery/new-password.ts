import { newMasterPasswordOf } from '../../platform/auth/master-password.js';
import type { PasswordHasher } from '../../platform/auth/password-hasher.js';
import type { UserRow } from '../../platform/auth/users.repository.js';
import type { NewPasswordPayload } from './account-recovery.schemas.js';

/** A new master password, hashed by the server and ready for `setMasterPassword`. */
export interface PreparedPassword {
  serverHash: string;
  key: string;
}

/**
 * Reads the new master password from either form (newMasterPasswordOf, as the official
 * validator does) and hashes it before any transaction opens. A module of its own so that the
 * race tests can hold a recovery between the hash and its transaction.
 */
export async function prepareNewPassword(hasher: PasswordHasher, user: UserRow, body: NewPasswordPayload): Promise<PreparedPassword> {
  const next = newMasterPasswordOf(user, body);
  return { serverHash: await hasher.hash(next.authenticationHash), key: next.wrappedUserKey };
}
