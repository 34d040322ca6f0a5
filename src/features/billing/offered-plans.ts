import { PlanType, ProductTierType, planFeatures, tierOf } from '../organizations/plans.js';
import type { OfferedPlanResponse, PasswordManagerPlan, SecretsManagerPlan } from './billing.schemas.js';

/**
 * The plans a cloud instance offers on the web vault's "New organization" page: the current
 * plan of each product tier, monthly and annual where the official catalog has both. Families
 * is offered as plan type 7, the number every web vault since 2020 knows it by (the official
 * server renamed it FamiliesAnnually2025 in 2025-11 and gave its successor 22, which this
 * server accepts too). No payment is taken, so every price is zero.
 */
const OFFERED: readonly PlanType[] = [
  PlanType.Free,
  PlanType.FamiliesAnnually2025,
  PlanType.TeamsStarter,
  PlanType.TeamsMonthly,
  PlanType.TeamsAnnually,
  PlanType.EnterpriseMonthly,
  PlanType.EnterpriseAnnually,
];

/** Display and upgrade order of each tier, as the official catalog sorts them (Free first). */
const ORDER: Record<ProductTierType, number> = {
  [ProductTierType.Free]: -1,
  [ProductTierType.Families]: 1,
  [ProductTierType.TeamsStarter]: 2,
  [ProductTierType.Teams]: 3,
  [ProductTierType.Enterprise]: 4,
};

/** The tier name the web vault's localization keys use (planNameTeamsStarter, planDescFamilies...). */
const KEY_NAME: Record<ProductTierType, string> = {
  [ProductTierType.Free]: 'Free',
  [ProductTierType.Families]: 'Families',
  [ProductTierType.TeamsStarter]: 'TeamsStarter',
  [ProductTierType.Teams]: 'Teams',
  [ProductTierType.Enterprise]: 'Enterprise',
};

function passwordManager(tier: ProductTierType, seats: number | null, maxCollections: number | null, storageGb: number | null): PasswordManagerPlan {
  const fixedSeats = tier === ProductTierType.Free || tier === ProductTierType.Families || tier === ProductTierType.TeamsStarter;
  return {
    stripePlanId: null,
    stripeSeatPlanId: null,
    basePrice: 0,
    seatPrice: 0,
    allowSeatAutoscale: !fixedSeats,
    hasAdditionalSeatsOption: !fixedSeats,
    maxAdditionalSeats: null,
    baseSeats: fixedSeats ? (seats ?? 0) : 0,
    hasPremiumAccessOption: false,
    stripePremiumAccessPlanId: null,
    premiumAccessOptionPrice: 0,
    maxSeats: fixedSeats ? seats : null,
    baseStorageGb: storageGb,
    hasAdditionalStorageOption: tier !== ProductTierType.Free,
    additionalStoragePricePerGb: 0,
    stripeStoragePlanId: null,
    maxAdditionalStorage: tier === ProductTierType.Free ? null : 99,
    maxCollections,
  };
}

function secretsManager(tier: ProductTierType): SecretsManagerPlan | null {
  if (tier === ProductTierType.Families) return null;
  const free = tier === ProductTierType.Free;
  return {
    maxServiceAccounts: free ? 2 : null,
    allowServiceAccountsAutoscale: !free,
    stripeServiceAccountPlanId: null,
    additionalPricePerServiceAccount: free ? null : 0,
    baseServiceAccount: free ? 2 : tier === ProductTierType.Enterprise ? 50 : 20,
    maxAdditionalServiceAccount: null,
    hasAdditionalServiceAccountOption: !free,
    stripeSeatPlanId: null,
    hasAdditionalSeatsOption: !free,
    basePrice: 0,
    seatPrice: 0,
    baseSeats: free ? 2 : 0,
    maxSeats: free ? 2 : null,
    maxAdditionalSeats: null,
    allowSeatAutoscale: !free,
    // 0: no limit, as the official paid plans say it.
    maxProjects: free ? 3 : 0,
  };
}

function planResponse(type: PlanType): OfferedPlanResponse {
  const features = planFeatures(type);
  const tier = tierOf(type);
  if (!features || tier === null) throw new Error(`Plan ${type} is not a plan.`);
  const name = PlanType[type].replace(/\d{4}$/, '');
  return {
    object: 'plan',
    type,
    productTier: tier,
    product: tier,
    name: name.replace(/(Monthly|Annually)$/, ' ($1)').replace('TeamsStarter', 'Teams Starter'),
    isAnnual: /Annually/.test(name),
    nameLocalizationKey: `planName${KEY_NAME[tier]}`,
    descriptionLocalizationKey: `planDesc${KEY_NAME[tier]}`,
    canBeUsedByBusiness: tier !== ProductTierType.Free && tier !== ProductTierType.Families,
    trialPeriodDays: null,
    hasSelfHost: tier === ProductTierType.Families || tier === ProductTierType.Enterprise,
    hasPolicies: features.usePolicies,
    hasGroups: features.useGroups,
    hasDirectory: features.useDirectory,
    hasEvents: features.useEvents,
    hasTotp: features.useTotp,
    has2fa: features.use2fa,
    hasApi: features.useApi,
    hasSso: features.useSso,
    hasResetPassword: features.useResetPassword,
    usersGetPremium: features.usersGetPremium,
    upgradeSortOrder: ORDER[tier],
    displaySortOrder: ORDER[tier],
    legacyYear: null,
    disabled: false,
    secretsManager: features.useSecretsManager ? secretsManager(tier) : null,
    passwordManager: passwordManager(tier, features.seats, features.maxCollections, features.maxStorageGb),
  };
}

/** Built once: the catalog does not change while the server runs. */
export const OFFERED_PLANS: readonly OfferedPlanResponse[] = OFFERED.map(planResponse);
