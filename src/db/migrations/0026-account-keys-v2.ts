import type { Kysely } from 'kysely';

/**
 * Version-2 account keys (docs/account-keys.md): beside the key pair it always had, an account
 * made or upgraded by a 2025.11+ client keeps its public key signed by its own signature key, that
 * signature key pair (the signing key wrapped with the user key, the verifying key in the clear,
 * the algorithm the client named) and its signed security state with the version the server
 * reads without parsing COSE. All null for an account of version-1 keys; the server never opens
 * any of them and returns them as stored.
 */
export function accountKeysV2() {
  const columns = [
    ['signed_public_key', 'text'],
    ['signature_algorithm', 'text'],
    ['wrapped_signing_key', 'text'],
    ['verifying_key', 'text'],
    ['security_state', 'text'],
    ['security_version', 'integer'],
  ] as const;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      // One statement per column: SQLite adds a single column per ALTER TABLE.
      for (const [name, type] of columns) await db.schema.alterTable('users').addColumn(name, type).execute();
    },
  };
}
