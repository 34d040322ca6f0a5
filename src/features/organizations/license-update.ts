import type { Executor } from '../../db/database.js';
import { BadRequest } from '../../http/errors.js';
import { countOccupiedSeats, memberUserIds, type OrganizationRow } from '../../platform/access/memberships.js';
import { touchAccountRevisions } from '../../platform/auth/users.repository.js';
import type { LicenseDocument } from './licenses.js';
import { findOrganizationByLicenseKey, updateOrganization } from './organizations.repository.js';

const refuse = (message: string) => BadRequest.field('license', message);

async function count(tx: Executor, table: 'collections' | 'groups', organizationId: string): Promise<number> {
  const row = await tx
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<string | number>().as('n'))
    .where('organization_id', '=', organizationId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

async function enabledPolicies(tx: Executor, organizationId: string): Promise<number> {
  const row = await tx
    .selectFrom('policies')
    .select((eb) => eb.fn.countAll<string | number>().as('n'))
    .where('organization_id', '=', organizationId)
    .where('enabled', '=', true)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * Checks that a verified license may replace the organization's current one, as the official
 * self-hosted server does: it names this organization, its key is no other organization's, and
 * the organization already fits it (seats in use, collections, groups, enabled policies).
 * Each refusal is a 400 naming `license` and what to change first.
 */
async function checkFits(tx: Executor, org: OrganizationRow, license: LicenseDocument): Promise<void> {
  if (license.id !== org.id) throw refuse('The license was issued for another organization.');
  const holder = await findOrganizationByLicenseKey(tx, license.licenseKey);
  if (holder && holder.id !== org.id) throw refuse('This license is already in use by another organization.');
  const seats = await countOccupiedSeats(tx, org.id);
  if (license.seats !== null && seats > license.seats) {
    throw refuse(`The organization has ${seats} seats filled and the new license allows ${license.seats}: remove members first.`);
  }
  const collections = await count(tx, 'collections', org.id);
  if (license.maxCollections !== null && collections > license.maxCollections) {
    throw refuse(`The organization has ${collections} collections and the new license allows ${license.maxCollections}: remove collections first.`);
  }
  if (!license.useGroups && (await count(tx, 'groups', org.id)) > 0) throw refuse('The new license does not allow groups: remove all groups first.');
  if (!license.usePolicies && (await enabledPolicies(tx, org.id)) > 0) throw refuse('The new license does not allow policies: turn all policies off first.');
}

/**
 * Replaces a self-hosted organization's license: its name, plan, limits, features and expiry
 * become the license's, in one transaction after the checks. Members' clients see the new
 * plan at their next sync (their account revisions move).
 */
export async function replaceLicense(tx: Executor, org: OrganizationRow, license: LicenseDocument, now: string): Promise<void> {
  await checkFits(tx, org, license);
  await updateOrganization(tx, org.id, {
    name: license.name,
    business_name: license.businessName,
    billing_email: license.billingEmail.toLowerCase(),
    plan_type: license.planType,
    seats: license.seats,
    max_collections: license.maxCollections,
    max_storage_gb: license.maxStorageGb,
    sm_seats: license.smSeats,
    sm_service_accounts: license.smServiceAccounts,
    use_groups: license.useGroups,
    use_directory: license.useDirectory,
    use_events: license.useEvents,
    use_totp: license.useTotp,
    use_2fa: license.use2fa,
    use_api: license.useApi,
    use_policies: license.usePolicies,
    use_sso: license.useSso,
    use_key_connector: license.useKeyConnector,
    use_scim: license.useScim,
    use_reset_password: license.useResetPassword,
    use_secrets_manager: license.useSecretsManager,
    use_custom_permissions: license.useCustomPermissions,
    users_get_premium: license.usersGetPremium,
    self_host: true,
    license_key: license.licenseKey,
    expiration_date: license.expires,
    revision_date: now,
  });
  await touchAccountRevisions(tx, await memberUserIds(tx, org.id), now);
}
