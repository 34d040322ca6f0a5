import { randomUUID } from 'node:crypto';
import type { Insertable } from 'kysely';
import type { OrganizationsTable, OrganizationUsersTable } from '../../src/db/schema.js';
import { planFeatures, PlanType } from '../../src/features/organizations/plans.js';
import { OrganizationUserStatusType, OrganizationUserType, type Permissions } from '../../src/platform/access/roles.js';
import type { TestServer } from './test-server.js';

/**
 * Inserts an organization row directly, with the plan's features, for tests of features that
 * need one. Tests of organization creation itself go through the real routes.
 */
export async function seedOrganization(
  server: TestServer,
  opts: { planType?: PlanType; name?: string; overrides?: Partial<Insertable<OrganizationsTable>> } = {},
): Promise<string> {
  const planType = opts.planType ?? PlanType.EnterpriseAnnually;
  const plan = planFeatures(planType);
  if (!plan) throw new Error(`not a plan: ${planType}`);
  const now = new Date().toISOString();
  const id = randomUUID();
  await server.database.db
    .insertInto('organizations')
    .values({
      id,
      identifier: null,
      name: opts.name ?? 'Test Org',
      business_name: null,
      billing_email: 'billing@example.com',
      plan_type: planType,
      seats: plan.seats,
      max_collections: plan.maxCollections,
      max_storage_gb: plan.maxStorageGb,
      sm_seats: null,
      sm_service_accounts: null,
      use_groups: plan.useGroups,
      use_directory: plan.useDirectory,
      use_events: plan.useEvents,
      use_totp: plan.useTotp,
      use_2fa: plan.use2fa,
      use_api: plan.useApi,
      use_policies: plan.usePolicies,
      use_sso: plan.useSso,
      use_key_connector: plan.useKeyConnector,
      use_scim: plan.useScim,
      use_reset_password: plan.useResetPassword,
      use_secrets_manager: plan.useSecretsManager,
      use_password_manager: true,
      use_custom_permissions: plan.useCustomPermissions,
      users_get_premium: plan.usersGetPremium,
      self_host: server.config.selfHosted,
      enabled: true,
      limit_collection_creation: false,
      limit_collection_deletion: false,
      limit_item_deletion: false,
      allow_admin_access_to_all_collection_items: true,
      public_key: null,
      private_key: null,
      license_key: null,
      expiration_date: null,
      creation_date: now,
      revision_date: now,
      ...opts.overrides,
    })
    .execute();
  return id;
}

/** Inserts a membership directly (confirmed unless told otherwise); returns its id. */
export async function seedMembership(
  server: TestServer,
  opts: {
    organizationId: string;
    userId?: string | null;
    email?: string | null;
    type?: OrganizationUserType;
    status?: OrganizationUserStatusType;
    permissions?: Partial<Permissions>;
    accessAll?: boolean;
    key?: string | null;
  } & Partial<Omit<Insertable<OrganizationUsersTable>, 'permissions'>>,
): Promise<string> {
  const id = randomUUID();
  const now = new Date().toISOString();
  await server.database.db
    .insertInto('organization_users')
    .values({
      id,
      organization_id: opts.organizationId,
      user_id: opts.userId ?? null,
      email: opts.email ?? null,
      key: opts.key ?? null,
      reset_password_key: null,
      status: opts.status ?? OrganizationUserStatusType.Confirmed,
      type: opts.type ?? OrganizationUserType.User,
      access_all: opts.accessAll ?? false,
      external_id: null,
      permissions: opts.permissions ? JSON.stringify(opts.permissions) : null,
      access_secrets_manager: false,
      creation_date: now,
      revision_date: now,
    })
    .execute();
  return id;
}
