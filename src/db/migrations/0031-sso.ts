import type { Kysely } from 'kysely';
import { columnTypes, type Engine } from '../dialect.js';

/**
 * Single sign-on per organization (#42, docs/sso.md): each organization's identity provider
 * settings, with the client secret sealed by the server's secrets key; and the link between an
 * account and its identity at an organization's provider (the provider's subject, `external_id`).
 */
export function sso(engine: Engine) {
  const t = columnTypes(engine);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('sso_configs')
        .addColumn('organization_id', 'text', (c) => c.primaryKey().references('organizations.id').onDelete('cascade'))
        .addColumn('enabled', t.bool, (c) => c.notNull())
        // The official SsoConfigurationData as JSON, `clientSecret` sealed (platform/auth/secret-box.ts).
        .addColumn('data', 'text', (c) => c.notNull())
        .addColumn('creation_date', t.timestamp, (c) => c.notNull())
        .addColumn('revision_date', t.timestamp, (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('sso_users')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
        .addColumn('external_id', 'text', (c) => c.notNull())
        .addColumn('creation_date', t.timestamp, (c) => c.notNull())
        .execute();
      // One identity at a provider is one account, and an account has one identity per organization.
      await db.schema.createIndex('sso_users_organization_external').on('sso_users').columns(['organization_id', 'external_id']).unique().execute();
      await db.schema.createIndex('sso_users_user_organization').on('sso_users').columns(['user_id', 'organization_id']).unique().execute();
    },
  };
}
