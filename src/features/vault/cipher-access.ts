import { NotFound } from '../../http/errors.js';
import type { Executor } from '../events/audit-log.js';
import { findPersonalCiphers, type CipherRow } from './ciphers.repository.js';

/**
 * Which items a user may act on, decided for a set of ids at once. Today that is the user's
 * own items; organization items reached through collections join here. An id the user may
 * not see is treated exactly like an id that does not exist.
 */
export async function accessibleCiphers(executor: Executor, userId: string, ids: readonly string[]): Promise<CipherRow[]> {
  return findPersonalCiphers(executor, userId, [...new Set(ids)]);
}

/** One item the user may act on, or 404. */
export async function accessibleCipher(executor: Executor, userId: string, id: string): Promise<CipherRow> {
  const [row] = await accessibleCiphers(executor, userId, [id]);
  if (!row) throw new NotFound();
  return row;
}
