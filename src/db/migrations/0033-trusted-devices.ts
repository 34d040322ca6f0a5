import { sql, type Kysely } from 'kysely';
import { columnTypes, type Engine } from '../dialect.js';

/**
 * Trusted device encryption (#42, docs/trusted-devices.md): the three wrapped keys a trusted
 * device holds (the official Device's EncryptedUserKey, EncryptedPublicKey, EncryptedPrivateKey;
 * a device is trusted when all three are set), and `active`, which the official deactivation
 * clears so the device leaves the account's list.
 */
export function trustedDevices(engine: Engine) {
  const t = columnTypes(engine);
  const yes = engine === 'postgres' ? sql`true` : sql`1`;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('devices').addColumn('encrypted_user_key', 'text').execute();
      await db.schema.alterTable('devices').addColumn('encrypted_public_key', 'text').execute();
      await db.schema.alterTable('devices').addColumn('encrypted_private_key', 'text').execute();
      await db.schema.alterTable('devices').addColumn('active', t.bool, (c) => c.notNull().defaultTo(yes)).execute();
    },
  };
}
