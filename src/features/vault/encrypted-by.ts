import type { Executor } from '../../db/database.js';
import { BadRequest } from '../../http/errors.js';
import { findUserById } from '../../platform/auth/users.repository.js';

/**
 * The official check of a personal item's write (`encryptedByKeyId`, clients of 2026.8 on): the
 * key id the client says it encrypted with must be the account's current user key id, so that a
 * client still holding the key from before a rotation cannot store items no other client can
 * open. Nothing is compared when either side has no id (an older client, an account whose id was
 * not reported yet); organization items are not checked, as organizations have no key id.
 */
export async function assertEncryptedByUserKey(tx: Executor, userId: string, encryptedByKeyId: string | null | undefined): Promise<void> {
  if (!encryptedByKeyId) return;
  const current = (await findUserById(tx, userId))?.user_key_id;
  if (current && current !== encryptedByKeyId.toLowerCase()) {
    throw BadRequest.field('encryptedByKeyId', 'Cipher was not encrypted with the current user key. Please try again.');
  }
}
