import type { Kysely } from 'kysely';
import { columnTypes, type Engine } from '../dialect.js';

/**
 * Secrets Manager: projects, secrets (soft-deleted into a trash), their value history, machine
 * accounts (the official "service accounts") with their access tokens, and access policies.
 *
 * A secret belongs to at most one project, as in the official server, so the link is a column.
 * Access policies are one table, as the official server keeps them: exactly one grantee
 * (a membership, a group or a machine account) and exactly one granted resource (a project, a
 * machine account or a secret) per row; every link goes with the row it points at.
 */
export function secretsManager(engine: Engine) {
  const t = columnTypes(engine);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('projects')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('creation_date', t.timestamp, (c) => c.notNull())
        .addColumn('revision_date', t.timestamp, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('projects_organization').on('projects').column('organization_id').execute();

      await db.schema
        .createTable('secrets')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
        .addColumn('project_id', 'text', (c) => c.references('projects.id').onDelete('set null'))
        .addColumn('key', 'text', (c) => c.notNull())
        .addColumn('value', 'text', (c) => c.notNull())
        .addColumn('note', 'text', (c) => c.notNull())
        .addColumn('creation_date', t.timestamp, (c) => c.notNull())
        .addColumn('revision_date', t.timestamp, (c) => c.notNull())
        .addColumn('deleted_date', t.timestamp)
        .execute();
      await db.schema.createIndex('secrets_organization').on('secrets').columns(['organization_id', 'deleted_date']).execute();
      await db.schema.createIndex('secrets_project').on('secrets').column('project_id').execute();

      await db.schema
        .createTable('service_accounts')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('creation_date', t.timestamp, (c) => c.notNull())
        /** Moves when anything the account can reach changes: the machine-account sync compares against it. */
        .addColumn('revision_date', t.timestamp, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('service_accounts_organization').on('service_accounts').column('organization_id').execute();

      await db.schema
        .createTable('access_tokens')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('service_account_id', 'text', (c) => c.notNull().references('service_accounts.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        /** base64(SHA-256(client secret)); the secret itself is shown once and never stored. */
        .addColumn('client_secret_hash', 'text', (c) => c.notNull())
        .addColumn('scope', t.json, (c) => c.notNull())
        .addColumn('encrypted_payload', 'text', (c) => c.notNull())
        .addColumn('key', 'text', (c) => c.notNull())
        .addColumn('expire_at', t.timestamp)
        .addColumn('creation_date', t.timestamp, (c) => c.notNull())
        .addColumn('revision_date', t.timestamp, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('access_tokens_service_account').on('access_tokens').column('service_account_id').execute();

      await db.schema
        .createTable('access_policies')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('organization_user_id', 'text', (c) => c.references('organization_users.id').onDelete('cascade'))
        .addColumn('group_id', 'text', (c) => c.references('groups.id').onDelete('cascade'))
        .addColumn('service_account_id', 'text', (c) => c.references('service_accounts.id').onDelete('cascade'))
        .addColumn('granted_project_id', 'text', (c) => c.references('projects.id').onDelete('cascade'))
        .addColumn('granted_service_account_id', 'text', (c) => c.references('service_accounts.id').onDelete('cascade'))
        .addColumn('granted_secret_id', 'text', (c) => c.references('secrets.id').onDelete('cascade'))
        .addColumn('read', t.bool, (c) => c.notNull())
        .addColumn('write', t.bool, (c) => c.notNull())
        .addColumn('creation_date', t.timestamp, (c) => c.notNull())
        .addColumn('revision_date', t.timestamp, (c) => c.notNull())
        .execute();
      for (const column of ['organization_user_id', 'group_id', 'service_account_id', 'granted_project_id', 'granted_service_account_id', 'granted_secret_id']) {
        await db.schema.createIndex(`access_policies_${column}`).on('access_policies').column(column).execute();
      }

      await db.schema
        .createTable('secret_versions')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('secret_id', 'text', (c) => c.notNull().references('secrets.id').onDelete('cascade'))
        .addColumn('value', 'text', (c) => c.notNull())
        .addColumn('version_date', t.timestamp, (c) => c.notNull())
        // The editor may be deleted later; the version keeps its value and date.
        .addColumn('editor_service_account_id', 'text', (c) => c.references('service_accounts.id').onDelete('set null'))
        .addColumn('editor_organization_user_id', 'text', (c) => c.references('organization_users.id').onDelete('set null'))
        .execute();
      await db.schema.createIndex('secret_versions_secret').on('secret_versions').columns(['secret_id', 'version_date']).execute();

      // Events about a machine account name it here; `service_account_id` is the acting one.
      await db.schema.alterTable('events').addColumn('granted_service_account_id', 'text').execute();
    },
  };
}
