import type { Executor } from '../../db/database.js';
import { ABSENT_FEATURES, flagsOf, SSO_FOR_EVERY_ORGANIZATION, type ProfileOrganizationResponse } from './organizations.schemas.js';
import { ProductTierType, tierOf, usesRiskInsights } from './plans.js';
import { OrganizationUserStatusType, parsePermissions } from '../../platform/access/roles.js';

/** The `memberDecryptionType` of an organization's stored SSO configuration, if it has one. */
function memberDecryptionTypeOf(data: string | null): number | null {
  if (data === null) return null;
  try {
    const parsed: unknown = JSON.parse(data);
    const type = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>).memberDecryptionType : undefined;
    return typeof type === 'number' ? type : null;
  } catch {
    return null;
  }
}

async function profileOrganizationsWithStatus(
  db: Executor,
  userId: string,
  statuses: readonly OrganizationUserStatusType[],
): Promise<ProfileOrganizationResponse[]> {
  const rows = await db
    .selectFrom('organization_users as ou')
    .innerJoin('organizations as o', 'o.id', 'ou.organization_id')
    // At most one of each per membership: sso_users is unique per (user, organization), sso_configs per organization.
    .leftJoin('sso_users as su', (join) => join.onRef('su.user_id', '=', 'ou.user_id').onRef('su.organization_id', '=', 'ou.organization_id'))
    .leftJoin('sso_configs as sc', 'sc.organization_id', 'ou.organization_id')
    .selectAll('o')
    .select([
      'ou.id as ou_id',
      'ou.user_id as ou_user_id',
      'ou.key as ou_key',
      'ou.status as ou_status',
      'ou.type as ou_type',
      'ou.permissions as ou_permissions',
      'ou.reset_password_key as ou_reset_password_key',
      'ou.access_secrets_manager as ou_access_secrets_manager',
      'su.id as sso_user_id',
      'sc.enabled as sso_enabled',
      'sc.data as sso_data',
    ])
    .where('ou.user_id', '=', userId)
    .where('ou.status', 'in', [...statuses])
    .orderBy('o.name')
    .orderBy('o.id')
    .execute();
  return rows.map((row) => {
    const tier = tierOf(row.plan_type) ?? ProductTierType.Free;
    const permissions = parsePermissions(row.ou_permissions);
    return {
      object: 'profileOrganization',
      id: row.id,
      name: row.name,
      ...flagsOf(row),
      ...ABSENT_FEATURES,
      useSso: SSO_FOR_EVERY_ORGANIZATION,
      useRiskInsights: usesRiskInsights(row.plan_type),
      useActivateAutofillPolicy: tier === ProductTierType.Enterprise,
      useDisableSMAdsForUsers: false,
      selfHost: Boolean(row.self_host),
      seats: row.seats,
      maxCollections: row.max_collections,
      maxStorageGb: row.max_storage_gb,
      key: row.ou_key,
      hasPublicAndPrivateKeys: Boolean(row.public_key && row.private_key),
      status: row.ou_status,
      type: row.ou_type,
      enabled: Boolean(row.enabled),
      ssoBound: row.sso_user_id !== null,
      identifier: row.identifier,
      permissions: permissions ? { ...permissions, manageAccessRules: false } : null,
      resetPasswordEnrolled: row.ou_reset_password_key !== null,
      userId: row.ou_user_id,
      organizationUserId: row.ou_id,
      providerId: null,
      providerName: null,
      providerType: null,
      familySponsorshipFriendlyName: null,
      familySponsorshipAvailable: false,
      familySponsorshipLastSyncDate: null,
      familySponsorshipValidUntil: null,
      familySponsorshipToDelete: null,
      productTierType: tier,
      ssoEnabled: Boolean(row.sso_enabled),
      // Key Connector is not offered, so no member unlocks through it.
      keyConnectorEnabled: false,
      keyConnectorUrl: null,
      // As officially, the configuration's option whether or not it is enabled.
      ssoMemberDecryptionType: memberDecryptionTypeOf(row.sso_data),
      accessSecretsManager: Boolean(row.ou_access_secrets_manager),
      accessPam: false,
      limitCollectionCreation: Boolean(row.limit_collection_creation),
      limitCollectionDeletion: Boolean(row.limit_collection_deletion),
      limitItemDeletion: Boolean(row.limit_item_deletion),
      allowAdminAccessToAllCollectionItems: Boolean(row.allow_admin_access_to_all_collection_items),
      // Claiming needs verified domains, which this server does not have yet.
      userIsClaimedByOrganization: false,
      isAdminInitiated: false,
    };
  });
}

/** `profile.organizations` (sync, profile, `GET /organizations`): Confirmed memberships, one query. */
export function profileOrganizations(db: Executor, userId: string): Promise<ProfileOrganizationResponse[]> {
  return profileOrganizationsWithStatus(db, userId, [OrganizationUserStatusType.Confirmed]);
}

/** `profile.organizationsNew`: Confirmed and Accepted memberships, which newer clients prefer. */
export function profileOrganizationsNew(db: Executor, userId: string): Promise<ProfileOrganizationResponse[]> {
  return profileOrganizationsWithStatus(db, userId, [OrganizationUserStatusType.Confirmed, OrganizationUserStatusType.Accepted]);
}
