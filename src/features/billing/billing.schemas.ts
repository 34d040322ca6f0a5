import { Type, type Static } from 'typebox';
import { Nullable, NullableDateTime } from '../../http/schemas.js';
import { OrganizationResponse, PLAN_FIELDS } from '../organizations/organizations.schemas.js';

/**
 * The organization metadata web vaults of 2024-04 to 2026-02 read from `billing/metadata`
 * before the Members page opens: the official OrganizationMetadataResponse of those releases,
 * with the seat count later ones added. There is no billing here, so every flag is false.
 */
export const BillingMetadataResponse = Type.Object({
  isEligibleForSelfHost: Type.Boolean(),
  isManaged: Type.Boolean(),
  isOnSecretsManagerStandalone: Type.Boolean(),
  isSubscriptionUnpaid: Type.Boolean(),
  hasSubscription: Type.Boolean(),
  hasOpenInvoice: Type.Boolean(),
  isSubscriptionCanceled: Type.Boolean(),
  invoiceDueDate: NullableDateTime,
  invoiceCreatedDate: NullableDateTime,
  subPeriodEndDate: NullableDateTime,
  isPaymentMethodConfigured: Type.Boolean(),
  organizationOccupiedSeats: Type.Integer(),
});
export type BillingMetadataResponse = Static<typeof BillingMetadataResponse>;

/** What later web vaults read from `billing/vnext/metadata` and `billing/vnext/self-host/metadata`. */
export const VNextBillingMetadataResponse = Type.Object({
  isOnSecretsManagerStandalone: Type.Boolean(),
  organizationOccupiedSeats: Type.Integer(),
  hasPaymentMethod: Type.Boolean({ description: 'Always true: no payment method is ever asked for here' }),
});
export type VNextBillingMetadataResponse = Static<typeof VNextBillingMetadataResponse>;

const Money = Type.Number();
const OptionalShort = Nullable(Type.Integer());

/** The Password Manager part of an official PlanResponseModel. */
const PasswordManagerPlan = Type.Object({
  stripePlanId: Nullable(Type.String()),
  stripeSeatPlanId: Nullable(Type.String()),
  basePrice: Money,
  seatPrice: Money,
  allowSeatAutoscale: Type.Boolean(),
  hasAdditionalSeatsOption: Type.Boolean(),
  maxAdditionalSeats: OptionalShort,
  baseSeats: Type.Integer(),
  hasPremiumAccessOption: Type.Boolean(),
  stripePremiumAccessPlanId: Nullable(Type.String()),
  premiumAccessOptionPrice: Money,
  maxSeats: OptionalShort,
  baseStorageGb: OptionalShort,
  hasAdditionalStorageOption: Type.Boolean(),
  additionalStoragePricePerGb: Money,
  stripeStoragePlanId: Nullable(Type.String()),
  maxAdditionalStorage: OptionalShort,
  maxCollections: OptionalShort,
});

/** The Secrets Manager part of an official PlanResponseModel. */
const SecretsManagerPlan = Type.Object({
  maxServiceAccounts: OptionalShort,
  allowServiceAccountsAutoscale: Type.Boolean(),
  stripeServiceAccountPlanId: Nullable(Type.String()),
  additionalPricePerServiceAccount: Nullable(Money),
  baseServiceAccount: OptionalShort,
  maxAdditionalServiceAccount: OptionalShort,
  hasAdditionalServiceAccountOption: Type.Boolean(),
  stripeSeatPlanId: Nullable(Type.String()),
  hasAdditionalSeatsOption: Type.Boolean(),
  basePrice: Money,
  seatPrice: Money,
  baseSeats: Type.Integer(),
  maxSeats: OptionalShort,
  maxAdditionalSeats: OptionalShort,
  allowSeatAutoscale: Type.Boolean(),
  maxProjects: Type.Integer(),
});

/** The official PlanResponseModel the "New organization" page lists. */
export const OfferedPlanResponse = Type.Object({
  ...PLAN_FIELDS,
  /** The name older web vaults read (the official `product`, renamed productTier in 2024). */
  product: Type.Integer(),
  has2fa: Type.Boolean(),
  secretsManager: Nullable(SecretsManagerPlan),
  passwordManager: PasswordManagerPlan,
});
export type OfferedPlanResponse = Static<typeof OfferedPlanResponse>;
export type PasswordManagerPlan = Static<typeof PasswordManagerPlan>;
export type SecretsManagerPlan = Static<typeof SecretsManagerPlan>;

/**
 * The official OrganizationSubscriptionResponseModel: the organization, its storage in use and
 * its expiry. No payment provider stands behind it, so `subscription` and `upcomingInvoice`
 * are always null.
 */
export const OrganizationSubscriptionResponse = Type.Object({
  ...Type.Omit(OrganizationResponse, ['object']).properties,
  object: Type.Literal('organizationSubscription'),
  storageName: Nullable(Type.String()),
  storageGb: Type.Number(),
  subscription: Type.Null(),
  upcomingInvoice: Type.Null(),
  customerDiscount: Type.Null(),
  expiration: NullableDateTime,
  expirationWithoutGracePeriod: NullableDateTime,
  secretsManagerBeta: Type.Boolean(),
});
export type OrganizationSubscriptionResponse = Static<typeof OrganizationSubscriptionResponse>;

/** The official SubscriptionResponseModel for an account without a paid subscription. */
export const AccountSubscriptionResponse = Type.Object({
  object: Type.Literal('subscription'),
  storageName: Nullable(Type.String()),
  storageGb: Type.Number(),
  maxStorageGb: Nullable(Type.Integer()),
  subscription: Type.Null(),
  upcomingInvoice: Type.Null(),
  customerDiscount: Type.Null(),
  license: Type.Null(),
  expiration: NullableDateTime,
  usingInAppPurchase: Type.Boolean(),
});
export type AccountSubscriptionResponse = Static<typeof AccountSubscriptionResponse>;

/** An invoice or a transaction of the official billing history: none is ever present here. */
export const NeverPresent = Type.Object({}, { description: 'Never present: no payment is taken here' });

/** The official BillingHistoryResponseModel of a subscriber with no payment records. */
export const BillingHistoryResponse = Type.Object({
  object: Type.Literal('billingHistory'),
  invoices: Type.Array(NeverPresent),
  transactions: Type.Array(NeverPresent),
});
export type BillingHistoryResponse = Static<typeof BillingHistoryResponse>;

/** The official BillingResponseModel (an organization's older Payment method page), with no customer behind it. */
export const LegacyBillingResponse = Type.Object({
  object: Type.Literal('billing'),
  balance: Type.Number(),
  paymentSource: Type.Null(),
  invoices: Type.Array(NeverPresent),
  transactions: Type.Array(NeverPresent),
});
export type LegacyBillingResponse = Static<typeof LegacyBillingResponse>;

/** The official BillingPaymentResponseModel (the account's older Payment method page), with no customer behind it. */
export const LegacyBillingPaymentResponse = Type.Object({
  object: Type.Literal('billingPayment'),
  balance: Type.Number(),
  paymentSource: Type.Null(),
});
export type LegacyBillingPaymentResponse = Static<typeof LegacyBillingPaymentResponse>;

/** The official OrganizationWarnings of an organization with no subscription: every warning null. */
export const OrganizationWarningsResponse = Type.Object({
  freeTrial: Type.Null(),
  inactiveSubscription: Type.Null(),
  resellerRenewal: Type.Null(),
  taxId: Type.Null(),
});
export type OrganizationWarningsResponse = Static<typeof OrganizationWarningsResponse>;
