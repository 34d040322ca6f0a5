import type { Kysely } from 'kysely';
import { columnTypes, type Engine } from '../dialect.js';

/**
 * Log in with a passkey: the WebAuthn credentials a user logs in with (not the two-step login
 * security keys, which stay in two_factor_providers), each with the user key wrapped for its PRF
 * output when the passkey can unlock the vault; and the challenges already answered, so that an
 * assertion or attestation is accepted once.
 */
export function passkeyLogin(engine: Engine) {
  const t = columnTypes(engine);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('webauthn_credentials')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        // base64url, as the authenticator gave them.
        .addColumn('credential_id', 'text', (c) => c.notNull())
        .addColumn('public_key', 'text', (c) => c.notNull())
        .addColumn('counter', t.bigint, (c) => c.notNull())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('aa_guid', 'text', (c) => c.notNull())
        .addColumn('transports', t.json)
        .addColumn('supports_prf', t.bool, (c) => c.notNull())
        .addColumn('encrypted_user_key', 'text')
        .addColumn('encrypted_public_key', 'text')
        .addColumn('encrypted_private_key', 'text')
        .addColumn('creation_date', t.timestamp, (c) => c.notNull())
        .addColumn('revision_date', t.timestamp, (c) => c.notNull())
        .execute();
      // A user's passkeys are read together (the list, sync, a login by user handle), and one authenticator credential is registered once per user.
      await db.schema.createIndex('webauthn_credentials_user_credential').on('webauthn_credentials').columns(['user_id', 'credential_id']).unique().execute();
      await db.schema
        .createTable('webauthn_spent_challenges')
        .addColumn('challenge_hash', 'text', (c) => c.primaryKey())
        .addColumn('expiration_date', t.timestamp, (c) => c.notNull())
        .execute();
      // Spent challenges are dropped once the token carrying them has expired.
      await db.schema.createIndex('webauthn_spent_challenges_expiration').on('webauthn_spent_challenges').column('expiration_date').execute();
    },
  };
}
