/**
 * docs/capacity.md's load model as numbers the generator plays: the population per 1,000 people
 * and each operation's busy-hour rate per 1,000 people. Change one here and there together.
 */

/** Vault sizes (items a person sees, personal and organization) and their share of people. */
export const VAULT_SIZES = [
  { items: 300, share: 0.745 },
  { items: 2000, share: 0.25 },
  { items: 20_000, share: 0.005 },
] as const;

/** Organizations per 1,000 people, by members. */
export const ORGANIZATIONS_PER_1000 = [500, 100, 100, 100, 50, 50, 50, 50] as const;
/** Items in each organization collection; one collection per 10 members, one group per 25. */
export const ITEMS_PER_COLLECTION = 80;
export const MEMBERS_PER_COLLECTION = 10;
export const MEMBERS_PER_GROUP = 25;
/** About this share of what a person sees comes from organization collections. */
export const ORGANIZATION_SHARE = 0.4;
/** Secrets Manager machines per 1,000 people, and the secrets each reads. */
export const MACHINES_PER_1000 = 20;
export const SECRETS_PER_ORGANIZATION = 50;
/** Notifications connections held per person (desktop 0.3, browser 0.8). */
export const HELD_CONNECTIONS_PER_PERSON = 1.1;

/** Busy-hour arrivals per second per 1,000 people (docs/capacity.md, "Request rates per 1,000 people"). */
export const BUSY_HOUR_PER_1000 = {
  login: 0.014,
  refresh: 0.74,
  sync: 0.69,
  config: 0.56,
  write: 0.093,
  fetch: 0.14,
  events: 0.28,
  hubConnect: 0.23,
  smSync: 0.33,
  smLogin: 0.0056,
  /** Requests, three to a directory sync. */
  directorySync: 0.027,
} as const;

export type OperationName = keyof typeof BUSY_HOUR_PER_1000;

/** The size class of person `i` (deterministic, so every run seeds the same population). */
export function vaultSizeOf(i: number): number {
  const at = (i % 1000) / 1000;
  let edge = 0;
  for (const size of VAULT_SIZES) {
    edge += size.share;
    if (at < edge) return size.items;
  }
  return VAULT_SIZES[0].items;
}

/**
 * The organizations of a population of `people`: the 1,000-person mix repeated, the last block
 * scaled down (a quick run of 60 people has organizations of 30, 6, 6, ...).
 */
export function organizationSizes(people: number): number[] {
  const sizes: number[] = [];
  for (let left = people; left > 0; left -= 1000) {
    const block = Math.min(1000, left);
    const scaled = ORGANIZATIONS_PER_1000.map((n) => Math.max(2, Math.round((n * block) / 1000)));
    let over = scaled.reduce((a, b) => a + b, 0) - block;
    for (let i = 0; over > 0 && i < scaled.length; i = (i + 1) % scaled.length) {
      if (scaled[i]! > 2) {
        scaled[i]!--;
        over--;
      }
      if (scaled.every((n) => n <= 2)) break;
    }
    sizes.push(...scaled.filter((n) => n > 0));
  }
  return sizes;
}
