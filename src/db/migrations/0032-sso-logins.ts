import type { Kysely } from 'kysely';
import { columnTypes, type Engine } from '../dialect.js';

/**
 * SSO logins in flight (#42, docs/sso.md "How a login goes"): the state of a login between the
 * client's authorize request and the identity provider's callback, kept in the database so that
 * any instance of a fleet can take the callback; and the authorization codes a login ends with,
 * stored only as hashes, each good once for five minutes.
 */
export function ssoLogins(engine: Engine) {
  const t = columnTypes(engine);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('sso_flows')
        // The `state` sent to the identity provider, as its SHA-256 (base64url).
        .addColumn('state_hash', 'text', (c) => c.primaryKey())
        .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
        .addColumn('client_id', 'text', (c) => c.notNull())
        .addColumn('redirect_uri', 'text', (c) => c.notNull())
        .addColumn('client_state', 'text')
        .addColumn('code_challenge', 'text', (c) => c.notNull())
        // Our PKCE verifier and nonce towards the identity provider.
        .addColumn('code_verifier', 'text', (c) => c.notNull())
        .addColumn('nonce', 'text', (c) => c.notNull())
        // The account a `user_identifier` named, to link to the provider's identity.
        .addColumn('link_user_id', 'text', (c) => c.references('users.id').onDelete('cascade'))
        .addColumn('creation_date', t.timestamp, (c) => c.notNull())
        .addColumn('expiration_date', t.timestamp, (c) => c.notNull())
        .addColumn('used', t.bool, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('sso_flows_expiration').on('sso_flows').column('expiration_date').execute();
      await db.schema
        .createTable('sso_codes')
        .addColumn('code_hash', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
        .addColumn('client_id', 'text', (c) => c.notNull())
        .addColumn('redirect_uri', 'text', (c) => c.notNull())
        .addColumn('code_challenge', 'text', (c) => c.notNull())
        .addColumn('creation_date', t.timestamp, (c) => c.notNull())
        .addColumn('expiration_date', t.timestamp, (c) => c.notNull())
        .addColumn('used', t.bool, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('sso_codes_expiration').on('sso_codes').column('expiration_date').execute();
    },
  };
}
