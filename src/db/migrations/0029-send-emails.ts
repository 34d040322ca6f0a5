import type { Kysely } from 'kysely';
import { columnTypes, type Engine } from '../dialect.js';

/**
 * Email-verified Sends: `sends.emails` holds the addresses (lowercased, comma-separated) that may
 * open a Send after proving they read their mail; a Send with emails is email-verified and has
 * no password. `send_access_codes` holds the one-time codes mailed to them, hashed, one per Send
 * and address (keyed by a digest of the address), with their expiry and wrong tries. Codes go
 * with their Send.
 */
export function sendEmails(engine: Engine) {
  const t = columnTypes(engine);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('sends').addColumn('emails', 'text').execute();
      await db.schema
        .createTable('send_access_codes')
        .addColumn('send_id', 'text', (c) => c.notNull().references('sends.id').onDelete('cascade'))
        .addColumn('email_digest', 'text', (c) => c.notNull())
        .addColumn('code_hash', 'text', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('expiration_date', t.timestamp, (c) => c.notNull())
        .addColumn('creation_date', t.timestamp, (c) => c.notNull())
        .addPrimaryKeyConstraint('send_access_codes_pk', ['send_id', 'email_digest'])
        .execute();
    },
  };
}
