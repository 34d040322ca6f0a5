import { randomUUID } from 'node:crypto';
import { isUniqueViolation } from '../../db/dialect.js';
import { BadRequest } from '../../http/errors.js';
import { isEncString } from '../../http/enc-string.js';
import type { Executor } from '../../db/database.js';
import { insertCollectionFor, insertOrganization } from './organizations.repository.js';
import { PlanType, type PlanFeatures } from './plans.js';
import { OrganizationUserStatusType, OrganizationUserType } from '../../platform/access/roles.js';
import { type OrganizationRow, findOrganization, insertMembership, adminOfFreeOrganization } from '../../platform/access/memberships.js';
import { touchAccountRevisions } from '../../platform/auth/users.repository.js';

export interface Founding {
  id?: string;
  name: string;
  businessName: string | null;
  billingEmail: string;
  planType: PlanType;
  seats: number | null;
  maxCollections: number | null;
  maxStorageGb: number | null;
  smSeats: number | null;
  smServiceAccounts: number | null;
  features: Omit<PlanFeatures, 'tier' | 'seats' | 'maxCollections' | 'maxStorageGb'>;
  selfHost: boolean;
  licenseKey: string;
  expirationDate: string | null;
  /** The founder, who becomes its Confirmed Owner holding `key`. */
  ownerId: string;
  key: string;
  keys?: { publicKey: string; encryptedPrivateKey: string } | null | undefined;
  collectionName?: string | null | undefined;
  now: string;
}

/** Checks the encrypted fields a founding request carries, naming the first bad one. */
export function checkFoundingKeys(input: Pick<Founding, 'key' | 'keys' | 'collectionName'>): void {
  if (!isEncString(input.key)) throw BadRequest.field('key', 'The key field is not a valid encrypted string.');
  if (input.collectionName && !isEncString(input.collectionName)) {
    throw BadRequest.field('collectionName', 'The collectionName field is not a valid encrypted string.');
  }
}

/**
 * Writes a new organization, its founder's Confirmed Owner membership with the organization
 * key, and the optional first collection the founder manages. Runs in the caller's transaction.
 */
export async function foundOrganization(tx: Executor, f: Founding): Promise<OrganizationRow> {
  if (f.planType === PlanType.Free && (await adminOfFreeOrganization(tx, f.ownerId, PlanType.Free))) {
    throw BadRequest.field('planType', 'You can only be an admin of one free organization.');
  }
  const id = f.id ?? randomUUID();
  const org: OrganizationRow = {
    id,
    identifier: null,
    name: f.name.trim(),
    business_name: f.businessName?.trim() || null,
    billing_email: f.billingEmail.trim().toLowerCase(),
    plan_type: f.planType,
    seats: f.seats,
    max_collections: f.maxCollections,
    max_storage_gb: f.maxStorageGb,
    storage_bytes: 0,
    sm_seats: f.smSeats,
    sm_service_accounts: f.smServiceAccounts,
    use_groups: f.features.useGroups,
    use_directory: f.features.useDirectory,
    use_events: f.features.useEvents,
    use_totp: f.features.useTotp,
    use_2fa: f.features.use2fa,
    use_api: f.features.useApi,
    use_policies: f.features.usePolicies,
    use_sso: f.features.useSso,
    use_key_connector: f.features.useKeyConnector,
    use_scim: f.features.useScim,
    use_reset_password: f.features.useResetPassword,
    use_secrets_manager: f.features.useSecretsManager,
    use_password_manager: true,
    use_custom_permissions: f.features.useCustomPermissions,
    users_get_premium: f.features.usersGetPremium,
    self_host: f.selfHost,
    enabled: true,
    limit_collection_creation: false,
    limit_collection_deletion: false,
    limit_item_deletion: false,
    allow_admin_access_to_all_collection_items: true,
    public_key: f.keys?.publicKey ?? null,
    private_key: f.keys?.encryptedPrivateKey ?? null,
    license_key: f.licenseKey,
    expiration_date: f.expirationDate,
    creation_date: f.now,
    revision_date: f.now,
  };
  try {
    await insertOrganization(tx, org);
  } catch (error) {
    if (isUniqueViolation(error)) throw new BadRequest('An organization with this id already exists.');
    throw error;
  }
  const membershipId = randomUUID();
  await insertMembership(tx, {
    id: membershipId,
    organization_id: id,
    user_id: f.ownerId,
    email: null,
    key: f.key,
    reset_password_key: null,
    status: OrganizationUserStatusType.Confirmed,
    type: OrganizationUserType.Owner,
    access_all: false,
    external_id: null,
    permissions: null,
    access_secrets_manager: f.features.useSecretsManager,
    creation_date: f.now,
    revision_date: f.now,
  });
  if (f.collectionName) {
    await insertCollectionFor(tx, { id: randomUUID(), organizationId: id, name: f.collectionName, date: f.now }, membershipId);
  }
  await touchAccountRevisions(tx, [f.ownerId], f.now);
  const stored = await findOrganization(tx, id);
  if (!stored) throw new Error('organization vanished after insert');
  return stored;
}
