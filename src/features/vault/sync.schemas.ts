import { Type } from 'typebox';
import { Nullable } from '../../http/schemas.js';
import { ProfileResponse, UserDecryption, toProfileResponse, toUserDecryption } from '../accounts/accounts.schemas.js';
import type { UserRow } from '../../platform/auth/users.repository.js';
import { CollectionDetailsResponse } from '../collections/collections.schemas.js';
import type { ProfileOrganizationResponse } from '../organizations/organizations.schemas.js';
import { PolicyResponse } from '../policies/policies.schemas.js';
import { SendResponse } from '../sends/sends.schemas.js';
import { CipherDetailsResponse, CipherType } from './ciphers.schemas.js';
import { FolderResponse } from './folders.schemas.js';
import { SpilledItems } from './section-items.js';
import type { VaultSection } from './sync-cache.js';
import type { SpilledVault } from './sync-vault.js';
import { PrfOption } from '../passkey-login/passkeys.schemas.js';

/** What the sync body is written from (SyncService.load, then syncBody). */
export interface SyncData {
  user: UserRow & { two_factor_enabled?: boolean };
  vault: VaultSection | SpilledVault;
  organizations: ProfileOrganizationResponse[];
  /** Confirmed and Accepted memberships: `profile.organizationsNew`. */
  organizationsNew: ProfileOrganizationResponse[];
  collections: CollectionDetailsResponse[];
  policies: PolicyResponse[];
  policiesNew: PolicyResponse[];
  /** The user's Sends, read afresh (they are not part of the cached vault section). */
  sends: SendResponse[];
  /** The passkeys that unlock the vault (userDecryption.webAuthnPrfOptions). */
  prfOptions: PrfOption[];
}

export const SyncQuery = Type.Object({ excludeDomains: Type.Boolean({ default: false }) });

export const DomainsResponse = Type.Object({
  object: Type.Literal('domains'),
  equivalentDomains: Nullable(Type.Array(Type.Array(Type.String()))),
  globalEquivalentDomains: Nullable(
    Type.Array(Type.Object({ type: Type.Integer(), domains: Type.Array(Type.String()), excluded: Type.Boolean() })),
  ),
});

export const SyncResponse = Type.Object(
  {
    object: Type.Literal('sync'),
    profile: ProfileResponse,
    folders: Type.Array(FolderResponse),
    collections: Type.Array(CollectionDetailsResponse),
    ciphers: Type.Array(CipherDetailsResponse),
    domains: Nullable(DomainsResponse),
    policies: Type.Array(PolicyResponse),
    policiesNew: Type.Array(PolicyResponse),
    sends: Type.Array(SendResponse),
    userDecryption: Type.Object({
      ...UserDecryption.properties,
      // Left out when no passkey unlocks the vault, as the official server does.
      webAuthnPrfOptions: Type.Optional(Type.Array(PrfOption)),
    }),
  },
  { description: 'Everything a client caches (SyncResponseModel)' },
);

function domainsOf(user: UserRow) {
  const equivalent = user.equivalent_domains ? (JSON.parse(user.equivalent_domains) as string[][]) : null;
  // The global equivalent-domain groups are Bitwarden's own list; none are served yet.
  return { object: 'domains' as const, equivalentDomains: equivalent, globalEquivalentDomains: [] };
}

/**
 * The client versions from which each item type may be sent, as the official server filters
 * sync (SyncController.FilterUnsupportedCipherTypes): older clients fail on a type they do not
 * know. SSH keys from 2024.12.0; bank accounts, driver's licenses and passports from 2026.2.0.
 */
const TYPES_FROM: readonly { version: readonly number[]; newestType: CipherType }[] = [
  { version: [2026, 2, 0], newestType: CipherType.Passport },
  { version: [2024, 12, 0], newestType: CipherType.SSHKey },
];

/** Whether `clientVersion` (`2026.9.0`) is at least `min`; false for a missing or unreadable one. */
function atLeast(clientVersion: string, min: readonly number[]): boolean {
  const parts = clientVersion.split('.').map((p) => Number.parseInt(p, 10));
  for (let i = 0; i < min.length; i++) {
    const have = parts[i] ?? 0;
    const need = min[i] ?? 0;
    if (Number.isNaN(have)) return false;
    if (have !== need) return have > need;
  }
  return true;
}

/** The highest item type a client of `clientVersion` reads: sync leaves out the newer ones. */
export function newestItemType(clientVersion: string | null): CipherType {
  const from = clientVersion ? TYPES_FROM.find((t) => atLeast(clientVersion, t.version)) : undefined;
  return from?.newestType ?? CipherType.Identity;
}

/**
 * The sync body: its length and its bytes, in chunks. The items arrive as encoded JSON (see
 * section-items.ts and sync-cache.ts) and go out as they are, without a serialiser pass over
 * thousands of items or a copy; tests check the result against SyncResponse. The items of a
 * vault too large to be kept (SpilledItems) are still being read: the body is then `head`, the
 * items as they come and `tail`, of a length not known in advance.
 */
export function syncBody(
  data: SyncData,
  options: { excludeDomains: boolean },
): { length: number; chunks: Buffer[] } | { length: undefined; head: Buffer; items: SpilledItems; tail: Buffer } {
  const head = Buffer.from(
    `{"object":"sync","profile":${JSON.stringify(toProfileResponse(data.user, data.organizations, Boolean(data.user.two_factor_enabled), data.organizationsNew))},` +
      `"folders":${data.vault.folders},"collections":${JSON.stringify(data.collections)},"ciphers":`,
  );
  const tail = Buffer.from(
    `,"domains":${options.excludeDomains ? 'null' : JSON.stringify(domainsOf(data.user))},"policies":${JSON.stringify(data.policies)},"policiesNew":${JSON.stringify(data.policiesNew)},"sends":${JSON.stringify(data.sends)},` +
      `"userDecryption":${JSON.stringify({ ...toUserDecryption(data.user), ...(data.prfOptions.length ? { webAuthnPrfOptions: data.prfOptions } : {}) })}}`,
  );
  const items = data.vault.items;
  if (items instanceof SpilledItems) return { length: undefined, head, items, tail };
  const chunks = [head, ...items.chunks(), tail];
  return { length: chunks.reduce((sum, chunk) => sum + chunk.length, 0), chunks };
}

/** The whole sync body in one buffer, however it comes (tests and benchmarks). */
export async function syncBytes(body: ReturnType<typeof syncBody>): Promise<Buffer> {
  if (body.length !== undefined) return Buffer.concat(body.chunks);
  const chunks = [body.head];
  for await (const chunk of body.items) chunks.push(chunk);
  return Buffer.concat([...chunks, body.tail]);
}
