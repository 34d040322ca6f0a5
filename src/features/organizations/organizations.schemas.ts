import { Type, type Static } from 'typebox';
import { Email, EncString, Nullable } from '../../http/schemas.js';
import { FEATURE_FLAGS, PlanType, tierOf, ProductTierType, usesRiskInsights } from './plans.js';
import { PERMISSION_FLAGS, type PermissionFlag } from '../../platform/access/roles.js';
import type { OrganizationRow } from '../../platform/access/memberships.js';


const Enc = Type.String({ minLength: 1, maxLength: 10_000 });
const Name = Type.String({ minLength: 1, maxLength: 50 });
const OptionalText = (maxLength: number) => Type.Optional(Nullable(Type.String({ maxLength })));

export const OrganizationKeys = Type.Object({
  // Base64 of the key's SubjectPublicKeyInfo, which members encrypt to; nothing else is a key.
  publicKey: Type.String({ minLength: 1, maxLength: 10_000, pattern: '^[A-Za-z0-9+/]+={0,2}$' }),
  encryptedPrivateKey: EncString(10_000),
});

/** POST /organizations: the spec's fields plus those the official web vault sends with them. */
export const CreateOrganizationBody = Type.Object({
  name: Name,
  businessName: OptionalText(50),
  billingEmail: Email,
  planType: Type.Integer(),
  key: Enc,
  keys: Type.Optional(Nullable(OrganizationKeys)),
  collectionName: Type.Optional(Nullable(Type.String({ maxLength: 1000 }))),
  additionalSeats: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: 2_147_483_647 }))),
  additionalStorageGb: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: 99 }))),
  useSecretsManager: Type.Optional(Nullable(Type.Boolean())),
  additionalSmSeats: Type.Optional(Nullable(Type.Integer({ minimum: 0 }))),
  additionalServiceAccounts: Type.Optional(Nullable(Type.Integer({ minimum: 0 }))),
  // Payment and tax fields: accepted and ignored, there is no billing here.
  paymentMethodType: Type.Optional(Nullable(Type.Integer())),
  paymentToken: OptionalText(1000),
  premiumAccessAddon: Type.Optional(Nullable(Type.Boolean())),
  taxIdNumber: OptionalText(100),
  billingAddressLine1: OptionalText(200),
  billingAddressLine2: OptionalText(200),
  billingAddressCity: OptionalText(100),
  billingAddressState: OptionalText(100),
  billingAddressPostalCode: OptionalText(50),
  billingAddressCountry: OptionalText(50),
  isFromSecretsManagerTrial: Type.Optional(Nullable(Type.Boolean())),
  isFromProvider: Type.Optional(Nullable(Type.Boolean())),
  initiationPath: OptionalText(200),
  skipTrial: Type.Optional(Nullable(Type.Boolean())),
});
export type CreateOrganizationBody = Static<typeof CreateOrganizationBody>;

export const UpdateOrganizationBody = Type.Object({
  name: Name,
  businessName: OptionalText(50),
  billingEmail: Type.Optional(Nullable(Email)),
  identifier: OptionalText(50),
  keys: Type.Optional(Nullable(OrganizationKeys)),
});
export type UpdateOrganizationBody = Static<typeof UpdateOrganizationBody>;

/** SecretVerificationRequestModel: the master password hash under either name, or an OTP. */
export const SecretBody = Type.Object({
  secret: Type.Optional(Nullable(Type.String({ maxLength: 1000 }))),
  masterPasswordHash: Type.Optional(Nullable(Type.String({ maxLength: 1000 }))),
  otp: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
});
export type SecretBody = Static<typeof SecretBody>;

export const ApiKeyBody = Type.Object({
  ...SecretBody.properties,
  type: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: 2 }))),
});
export type ApiKeyBody = Static<typeof ApiKeyBody>;

export const StorageBody = Type.Object({ storageGbAdjustment: Type.Integer({ minimum: -100, maximum: 100 }) });

export const ApplyLicenseBody = Type.Object({
  license: Type.String({ minLength: 1, maxLength: 100_000 }),
  key: Enc,
  keys: Type.Optional(Nullable(OrganizationKeys)),
  collectionName: Type.Optional(Nullable(Type.String({ maxLength: 1000 }))),
});
export type ApplyLicenseBody = Static<typeof ApplyLicenseBody>;

/** A renewed license for an existing organization (the official LicenseRequestModel). */
export const LicenseFileBody = Type.Object({ license: Type.String({ minLength: 1, maxLength: 100_000 }) });

export const LicenseQuery = Type.Object({
  installationId: Type.String({
    pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$',
    description: 'GUID',
  }),
});

export const IdentifierParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 50 }) });
export const SsoParams = Type.Object({ organizationId: Type.String({ minLength: 1, maxLength: 50 }) });

export const ApiKeyResponse = Type.Object({ object: Type.Literal('apiKey'), apiKey: Type.String(), revisionDate: Type.String() });
export type ApiKeyResponse = Static<typeof ApiKeyResponse>;

export const AutoEnrollStatusResponse = Type.Object({
  object: Type.Literal('organizationAutoEnrollStatus'),
  id: Type.String(),
  resetPasswordEnabled: Type.Boolean(),
});
export type AutoEnrollStatusResponse = Static<typeof AutoEnrollStatusResponse>;

export const PaymentResponse = Type.Object({
  object: Type.Literal('payment'),
  success: Type.Boolean(),
  paymentIntentClientSecret: Type.Null(),
});
export type PaymentResponse = Static<typeof PaymentResponse>;

const FLAG_NAMES = [...FEATURE_FLAGS, 'usePasswordManager'] as const;
type FlagName = (typeof FLAG_NAMES)[number];
const Flags = Object.fromEntries(FLAG_NAMES.map((f) => [f, Type.Boolean()])) as Record<FlagName, ReturnType<typeof Type.Boolean>>;

const bool = (value: boolean | number) => Boolean(value);

export function flagsOf(org: OrganizationRow): Record<FlagName, boolean> {
  return {
    useGroups: bool(org.use_groups),
    useDirectory: bool(org.use_directory),
    useEvents: bool(org.use_events),
    useTotp: bool(org.use_totp),
    use2fa: bool(org.use_2fa),
    useApi: bool(org.use_api),
    usePolicies: bool(org.use_policies),
    useSso: bool(org.use_sso),
    useKeyConnector: bool(org.use_key_connector),
    useScim: bool(org.use_scim),
    useResetPassword: bool(org.use_reset_password),
    useSecretsManager: bool(org.use_secrets_manager),
    usePasswordManager: bool(org.use_password_manager),
    useCustomPermissions: bool(org.use_custom_permissions),
    usersGetPremium: bool(org.users_get_premium),
  };
}

/**
 * Single sign-on is free on Strongroom (#42): every organization answers useSso true, which the
 * web vault's SSO settings page and its menu entry check (`canManageSso`). The plan's and the
 * license's own useSso (the stored column, license terms) stay as they are.
 */
export const SSO_FOR_EVERY_ORGANIZATION = true;

/** Features this server has no notion of yet; clients read them as "off". */
export const ABSENT_FEATURES = {
  useOrganizationDomains: false,
  useAdminSponsoredFamilies: false,
  useAutomaticUserConfirmation: false,
  usePhishingBlocker: false,
  useMyItems: false,
  useInviteLinks: false,
  usePam: false,
};
const AbsentFeatures = Object.fromEntries(Object.keys(ABSENT_FEATURES).map((f) => [f, Type.Boolean()])) as Record<
  keyof typeof ABSENT_FEATURES,
  ReturnType<typeof Type.Boolean>
>;

/** The fields of the official PlanResponseModel every plan answer carries (organizations, the plan list). */
export const PLAN_FIELDS = {
  object: Type.Literal('plan'),
  type: Type.Integer(),
  productTier: Type.Integer(),
  name: Type.String(),
  isAnnual: Type.Boolean(),
  nameLocalizationKey: Type.String(),
  descriptionLocalizationKey: Type.String(),
  canBeUsedByBusiness: Type.Boolean(),
  trialPeriodDays: Nullable(Type.Integer()),
  hasSelfHost: Type.Boolean(),
  hasPolicies: Type.Boolean(),
  hasGroups: Type.Boolean(),
  hasDirectory: Type.Boolean(),
  hasEvents: Type.Boolean(),
  hasTotp: Type.Boolean(),
  hasApi: Type.Boolean(),
  hasSso: Type.Boolean(),
  hasResetPassword: Type.Boolean(),
  usersGetPremium: Type.Boolean(),
  upgradeSortOrder: Type.Integer(),
  displaySortOrder: Type.Integer(),
  legacyYear: Nullable(Type.Integer()),
  disabled: Type.Boolean(),
};

const PlanResponse = Type.Object({
  ...PLAN_FIELDS,
  hasOrganizationDomains: Type.Boolean(),
  hasMyItems: Type.Boolean(),
  hasInviteLinks: Type.Boolean(),
  secretsManager: Type.Null(),
  passwordManager: Type.Null(),
});

/** OrganizationResponseModel (`object: "organization"`). */
export const OrganizationResponse = Type.Object({
  object: Type.Literal('organization'),
  id: Type.String(),
  identifier: Nullable(Type.String()),
  name: Type.String(),
  businessName: Nullable(Type.String()),
  businessAddress1: Type.Null(),
  businessAddress2: Type.Null(),
  businessAddress3: Type.Null(),
  businessCountry: Type.Null(),
  businessTaxNumber: Type.Null(),
  billingEmail: Nullable(Type.String()),
  plan: PlanResponse,
  secretsManagerPlan: Type.Null(),
  planType: Type.Integer(),
  seats: Nullable(Type.Integer()),
  maxAutoscaleSeats: Type.Null(),
  maxCollections: Nullable(Type.Integer()),
  maxStorageGb: Nullable(Type.Integer()),
  ...Flags,
  ...AbsentFeatures,
  useRiskInsights: Type.Boolean({ description: 'Organization reports (Enterprise plans)' }),
  useDisableSmAdsForUsers: Type.Boolean(),
  selfHost: Type.Boolean(),
  hasPublicAndPrivateKeys: Type.Boolean(),
  smSeats: Nullable(Type.Integer()),
  smServiceAccounts: Nullable(Type.Integer()),
  maxAutoscaleSmSeats: Type.Null(),
  maxAutoscaleSmServiceAccounts: Type.Null(),
  limitCollectionCreation: Type.Boolean(),
  limitCollectionDeletion: Type.Boolean(),
  limitItemDeletion: Type.Boolean(),
  allowAdminAccessToAllCollectionItems: Type.Boolean(),
  expirationDate: Nullable(Type.String()),
  creationDate: Type.String(),
  revisionDate: Type.String(),
});
export type OrganizationResponse = Static<typeof OrganizationResponse>;

function planJson(org: OrganizationRow): Static<typeof PlanResponse> {
  const tier = tierOf(org.plan_type) ?? ProductTierType.Free;
  const name = PlanType[org.plan_type] ?? 'Custom';
  const flags = flagsOf(org);
  return {
    object: 'plan',
    type: org.plan_type,
    productTier: tier,
    name: name.replace(/\d{4}$/, ''),
    isAnnual: /Annually/.test(name),
    nameLocalizationKey: `planName${ProductTierType[tier]}`,
    descriptionLocalizationKey: `planDesc${ProductTierType[tier]}`,
    canBeUsedByBusiness: tier !== ProductTierType.Free && tier !== ProductTierType.Families,
    trialPeriodDays: null,
    hasSelfHost: tier === ProductTierType.Enterprise || tier === ProductTierType.Families,
    hasPolicies: flags.usePolicies,
    hasGroups: flags.useGroups,
    hasDirectory: flags.useDirectory,
    hasEvents: flags.useEvents,
    hasTotp: flags.useTotp,
    hasApi: flags.useApi,
    hasSso: flags.useSso,
    hasOrganizationDomains: false,
    hasResetPassword: flags.useResetPassword,
    usersGetPremium: flags.usersGetPremium,
    hasMyItems: false,
    hasInviteLinks: false,
    upgradeSortOrder: tier,
    displaySortOrder: tier,
    legacyYear: /2019|2020|2023/.test(name) ? Number(/\d{4}$/.exec(name)?.[0]) : null,
    disabled: false,
    secretsManager: null,
    passwordManager: null,
  };
}

/**
 * The organization as its owners and admins see it; other members get the same shape with
 * the billing details left out.
 */
export function toOrganizationResponse(org: OrganizationRow, { billing }: { billing: boolean }): OrganizationResponse {
  return {
    object: 'organization',
    id: org.id,
    identifier: org.identifier,
    name: org.name,
    businessName: billing ? org.business_name : null,
    businessAddress1: null,
    businessAddress2: null,
    businessAddress3: null,
    businessCountry: null,
    businessTaxNumber: null,
    billingEmail: billing ? org.billing_email : null,
    plan: planJson(org),
    secretsManagerPlan: null,
    planType: org.plan_type,
    seats: org.seats,
    maxAutoscaleSeats: null,
    maxCollections: org.max_collections,
    maxStorageGb: org.max_storage_gb,
    ...flagsOf(org),
    ...ABSENT_FEATURES,
    useSso: SSO_FOR_EVERY_ORGANIZATION,
    useRiskInsights: usesRiskInsights(org.plan_type),
    useDisableSmAdsForUsers: false,
    selfHost: bool(org.self_host),
    hasPublicAndPrivateKeys: Boolean(org.public_key && org.private_key),
    smSeats: org.sm_seats,
    smServiceAccounts: org.sm_service_accounts,
    maxAutoscaleSmSeats: null,
    maxAutoscaleSmServiceAccounts: null,
    limitCollectionCreation: bool(org.limit_collection_creation),
    limitCollectionDeletion: bool(org.limit_collection_deletion),
    limitItemDeletion: bool(org.limit_item_deletion),
    allowAdminAccessToAllCollectionItems: bool(org.allow_admin_access_to_all_collection_items),
    expirationDate: org.expiration_date,
    creationDate: org.creation_date,
    revisionDate: org.revision_date,
  };
}

const PermissionsResponse = Type.Object(
  Object.fromEntries([...PERMISSION_FLAGS, 'manageAccessRules'].map((f) => [f, Type.Boolean()])) as Record<PermissionFlag | 'manageAccessRules', ReturnType<typeof Type.Boolean>>,
);

/** ProfileOrganizationResponseModel: one membership as `/sync`, `/accounts/profile` and `GET /organizations` show it. */
export const ProfileOrganizationResponse = Type.Object({
  object: Type.Literal('profileOrganization'),
  id: Type.String(),
  name: Type.String(),
  ...Flags,
  ...AbsentFeatures,
  useRiskInsights: Type.Boolean({ description: 'Organization reports (Enterprise plans)' }),
  useActivateAutofillPolicy: Type.Boolean(),
  useDisableSMAdsForUsers: Type.Boolean(),
  selfHost: Type.Boolean(),
  seats: Nullable(Type.Integer()),
  maxCollections: Nullable(Type.Integer()),
  maxStorageGb: Nullable(Type.Integer()),
  key: Nullable(Type.String()),
  hasPublicAndPrivateKeys: Type.Boolean(),
  status: Type.Integer(),
  type: Type.Integer(),
  enabled: Type.Boolean(),
  ssoBound: Type.Boolean(),
  identifier: Nullable(Type.String()),
  permissions: Nullable(PermissionsResponse),
  resetPasswordEnrolled: Type.Boolean(),
  userId: Nullable(Type.String()),
  organizationUserId: Type.String(),
  providerId: Type.Null(),
  providerName: Type.Null(),
  providerType: Type.Null(),
  familySponsorshipFriendlyName: Type.Null(),
  familySponsorshipAvailable: Type.Boolean(),
  familySponsorshipLastSyncDate: Type.Null(),
  familySponsorshipValidUntil: Type.Null(),
  familySponsorshipToDelete: Type.Null(),
  productTierType: Type.Integer(),
  ssoEnabled: Type.Boolean(),
  keyConnectorEnabled: Type.Boolean(),
  keyConnectorUrl: Type.Null(),
  ssoMemberDecryptionType: Nullable(Type.Integer({ description: 'MemberDecryptionType of the SSO configuration: 0 master password, 1 Key Connector, 2 trusted devices' })),
  accessSecretsManager: Type.Boolean(),
  accessPam: Type.Boolean(),
  limitCollectionCreation: Type.Boolean(),
  limitCollectionDeletion: Type.Boolean(),
  limitItemDeletion: Type.Boolean(),
  allowAdminAccessToAllCollectionItems: Type.Boolean(),
  userIsClaimedByOrganization: Type.Boolean(),
  isAdminInitiated: Type.Boolean(),
});
export type ProfileOrganizationResponse = Static<typeof ProfileOrganizationResponse>;

/** `PUT /organizations/{id}/collection-management` (OrganizationCollectionManagementUpdateRequestModel). */
export const CollectionManagementBody = Type.Object({
  limitCollectionCreation: Type.Boolean(),
  limitCollectionDeletion: Type.Boolean(),
  /** Sent by clients since 2025; older ones leave it out, and it then keeps its value. */
  limitItemDeletion: Type.Optional(Type.Boolean()),
  allowAdminAccessToAllCollectionItems: Type.Boolean(),
});
export type CollectionManagementBody = Static<typeof CollectionManagementBody>;
