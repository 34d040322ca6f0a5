/**
 * Plans decide seats, collection limits and features. Values are Bitwarden's PlanType; the
 * numbers beyond the spec's six are accepted and mapped to their product tier.
 */
export enum PlanType {
  Free = 0,
  FamiliesAnnually2019 = 1,
  TeamsMonthly2019 = 2,
  TeamsAnnually2019 = 3,
  EnterpriseMonthly2019 = 4,
  EnterpriseAnnually2019 = 5,
  Custom = 6,
  FamiliesAnnually2025 = 7,
  TeamsMonthly2020 = 8,
  TeamsAnnually2020 = 9,
  EnterpriseMonthly2020 = 10,
  EnterpriseAnnually2020 = 11,
  TeamsMonthly2023 = 12,
  TeamsAnnually2023 = 13,
  EnterpriseMonthly2023 = 14,
  EnterpriseAnnually2023 = 15,
  TeamsStarter2023 = 16,
  TeamsMonthly = 17,
  TeamsAnnually = 18,
  EnterpriseMonthly = 19,
  EnterpriseAnnually = 20,
  TeamsStarter = 21,
  FamiliesAnnually = 22,
}

export enum ProductTierType {
  Free = 0,
  Families = 1,
  Teams = 2,
  Enterprise = 3,
  TeamsStarter = 4,
}

/** The feature switches a plan (and a license) turns on or off. */
export const FEATURE_FLAGS = [
  'useGroups',
  'useDirectory',
  'useEvents',
  'useTotp',
  'use2fa',
  'useApi',
  'usePolicies',
  'useSso',
  'useKeyConnector',
  'useScim',
  'useResetPassword',
  'useCustomPermissions',
  'useSecretsManager',
  'usersGetPremium',
] as const;
export type FeatureFlag = (typeof FEATURE_FLAGS)[number];

export interface PlanFeatures extends Record<FeatureFlag, boolean> {
  tier: ProductTierType;
  /** Seats included; null means no limit. */
  seats: number | null;
  maxCollections: number | null;
  maxStorageGb: number | null;
}

export function tierOf(plan: number): ProductTierType | null {
  const name = PlanType[plan];
  if (name === undefined) return null;
  if (name === 'Free' || name === 'Custom') return ProductTierType.Free;
  if (name.startsWith('Families')) return ProductTierType.Families;
  if (name.startsWith('TeamsStarter')) return ProductTierType.TeamsStarter;
  if (name.startsWith('Teams')) return ProductTierType.Teams;
  return ProductTierType.Enterprise;
}

/**
 * Organization reports (the official UseRiskInsights): an Enterprise feature, as on the official
 * plans. Derived from the plan rather than stored, as it is not a license switch here.
 */
export function usesRiskInsights(plan: number): boolean {
  return tierOf(plan) === ProductTierType.Enterprise;
}

const NONE = Object.fromEntries(FEATURE_FLAGS.map((flag) => [flag, false])) as Record<FeatureFlag, boolean>;

/** The features and limits of a plan; null for a value that is not a plan. */
export function planFeatures(plan: number): PlanFeatures | null {
  const tier = tierOf(plan);
  switch (tier) {
    case null:
      return null;
    case ProductTierType.Free:
      return { tier, seats: 2, maxCollections: 2, maxStorageGb: null, ...NONE, useSecretsManager: true };
    case ProductTierType.Families:
      return { tier, seats: 6, maxCollections: null, maxStorageGb: 1, ...NONE, useTotp: true, usersGetPremium: true };
    case ProductTierType.TeamsStarter:
      return { tier, seats: 10, maxCollections: null, maxStorageGb: 1, ...NONE, useGroups: true, useDirectory: true, useEvents: true, useTotp: true, use2fa: true, useApi: true, usersGetPremium: true, useSecretsManager: true };
    case ProductTierType.Teams:
      return {
        tier,
        seats: null,
        maxCollections: null,
        maxStorageGb: 1,
        ...NONE,
        useGroups: true,
        useDirectory: true,
        useEvents: true,
        useTotp: true,
        use2fa: true,
        useApi: true,
        useScim: true,
        usersGetPremium: true,
        useSecretsManager: true,
      };
    case ProductTierType.Enterprise:
      return {
        tier,
        seats: null,
        maxCollections: null,
        maxStorageGb: 1,
        useGroups: true,
        useDirectory: true,
        useEvents: true,
        useTotp: true,
        use2fa: true,
        useApi: true,
        usePolicies: true,
        useSso: true,
        useKeyConnector: true,
        useScim: true,
        useResetPassword: true,
        useCustomPermissions: true,
        useSecretsManager: true,
        usersGetPremium: true,
      };
  }
}
