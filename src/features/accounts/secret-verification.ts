import type { Executor } from '../events/audit-log.js';
import type { BadRequest } from '../../http/errors.js';
import { NotFound } from '../../http/errors.js';
import { findUserById } from './accounts.repository.js';
import type { PasswordHasher } from './password-hasher.js';

/** The official SecretVerificationRequestModel: the master password hash, as `secret` or `masterPasswordHash`. */
export interface SecretVerificationBody {
  secret?: string | null;
  masterPasswordHash?: string | null;
}

/**
 * Checks the caller's master password hash before a destructive action (deleting an
 * organization, purging a vault); a wrong or missing one throws `refusal` (each route answers
 * its own 400). One-time codes are not offered: this server does not mail them for this purpose.
 */
export async function verifyMasterPassword(db: Executor, hasher: PasswordHasher, userId: string, body: SecretVerificationBody, refusal: BadRequest): Promise<void> {
  const user = await findUserById(db, userId);
  if (!user) throw new NotFound();
  const secret = body.secret || body.masterPasswordHash;
  if (!secret || !(await hasher.verify(secret, user.master_password_hash))) throw refusal;
}
