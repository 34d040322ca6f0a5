import type { Kysely } from 'kysely';
import { columnTypes, type Engine } from '../dialect.js';

/**
 * Team administration: organizations, memberships, groups, collections with member and group
 * access, policies and organization API keys. Child rows go with their organization.
 */
export function organizations(engine: Engine) {
  const t = columnTypes(engine);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      let org = db.schema
        .createTable('organizations')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('identifier', 'text', (c) => c.unique())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('business_name', 'text')
        .addColumn('billing_email', 'text', (c) => c.notNull())
        .addColumn('plan_type', 'integer', (c) => c.notNull())
        .addColumn('seats', 'integer')
        .addColumn('max_collections', 'integer')
        .addColumn('max_storage_gb', 'integer')
        .addColumn('storage_bytes', t.bigint, (c) => c.notNull().defaultTo(0))
        .addColumn('sm_seats', 'integer')
        .addColumn('sm_service_accounts', 'integer');
      for (const flag of [
        'use_groups',
        'use_directory',
        'use_events',
        'use_totp',
        'use_2fa',
        'use_api',
        'use_policies',
        'use_sso',
        'use_key_connector',
        'use_scim',
        'use_reset_password',
        'use_secrets_manager',
        'use_password_manager',
        'use_custom_permissions',
        'users_get_premium',
        'self_host',
        'enabled',
        'limit_collection_creation',
        'limit_collection_deletion',
        'limit_item_deletion',
        'allow_admin_access_to_all_collection_items',
      ]) {
        org = org.addColumn(flag, t.bool, (c) => c.notNull());
      }
      await org
        .addColumn('public_key', 'text')
        .addColumn('private_key', 'text')
        .addColumn('license_key', 'text')
        .addColumn('expiration_date', t.timestamp)
        .addColumn('creation_date', t.timestamp, (c) => c.notNull())
        .addColumn('revision_date', t.timestamp, (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('organization_users')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
        .addColumn('user_id', 'text', (c) => c.references('users.id').onDelete('cascade'))
        .addColumn('email', 'text')
        .addColumn('key', 'text')
        .addColumn('reset_password_key', 'text')
        .addColumn('status', 'integer', (c) => c.notNull())
        .addColumn('type', 'integer', (c) => c.notNull())
        .addColumn('access_all', t.bool, (c) => c.notNull())
        .addColumn('external_id', 'text')
        .addColumn('permissions', t.json)
        .addColumn('access_secrets_manager', t.bool, (c) => c.notNull())
        .addColumn('creation_date', t.timestamp, (c) => c.notNull())
        .addColumn('revision_date', t.timestamp, (c) => c.notNull())
        .addUniqueConstraint('organization_users_org_user', ['organization_id', 'user_id'])
        .addUniqueConstraint('organization_users_org_email', ['organization_id', 'email'])
        .execute();
      await db.schema.createIndex('organization_users_user').on('organization_users').column('user_id').execute();
      await db.schema.createIndex('organization_users_email').on('organization_users').column('email').execute();

      await db.schema
        .createTable('groups')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('access_all', t.bool, (c) => c.notNull())
        .addColumn('external_id', 'text')
        .addColumn('creation_date', t.timestamp, (c) => c.notNull())
        .addColumn('revision_date', t.timestamp, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('groups_organization').on('groups').column('organization_id').execute();

      await db.schema
        .createTable('group_users')
        .addColumn('group_id', 'text', (c) => c.notNull().references('groups.id').onDelete('cascade'))
        .addColumn('organization_user_id', 'text', (c) => c.notNull().references('organization_users.id').onDelete('cascade'))
        .addPrimaryKeyConstraint('group_users_pk', ['group_id', 'organization_user_id'])
        .execute();
      await db.schema.createIndex('group_users_member').on('group_users').column('organization_user_id').execute();

      await db.schema
        .createTable('collections')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('external_id', 'text')
        .addColumn('type', 'integer', (c) => c.notNull())
        .addColumn('creation_date', t.timestamp, (c) => c.notNull())
        .addColumn('revision_date', t.timestamp, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('collections_organization').on('collections').column('organization_id').execute();

      for (const [table, owner, ownerTable] of [
        ['collection_users', 'organization_user_id', 'organization_users'],
        ['collection_groups', 'group_id', 'groups'],
      ] as const) {
        await db.schema
          .createTable(table)
          .addColumn('collection_id', 'text', (c) => c.notNull().references('collections.id').onDelete('cascade'))
          .addColumn(owner, 'text', (c) => c.notNull().references(`${ownerTable}.id`).onDelete('cascade'))
          .addColumn('read_only', t.bool, (c) => c.notNull())
          .addColumn('hide_passwords', t.bool, (c) => c.notNull())
          .addColumn('manage', t.bool, (c) => c.notNull())
          .addPrimaryKeyConstraint(`${table}_pk`, ['collection_id', owner])
          .execute();
        await db.schema.createIndex(`${table}_owner`).on(table).column(owner).execute();
      }

      await db.schema
        .createTable('policies')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
        .addColumn('type', 'integer', (c) => c.notNull())
        .addColumn('enabled', t.bool, (c) => c.notNull())
        .addColumn('data', t.json)
        .addColumn('creation_date', t.timestamp, (c) => c.notNull())
        .addColumn('revision_date', t.timestamp, (c) => c.notNull())
        .addUniqueConstraint('policies_org_type', ['organization_id', 'type'])
        .execute();

      await db.schema
        .createTable('organization_api_keys')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
        .addColumn('type', 'integer', (c) => c.notNull())
        .addColumn('api_key', 'text', (c) => c.notNull())
        .addColumn('revision_date', t.timestamp, (c) => c.notNull())
        .addUniqueConstraint('organization_api_keys_org_type', ['organization_id', 'type'])
        .execute();
    },
  };
}
