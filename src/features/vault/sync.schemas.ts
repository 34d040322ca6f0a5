import { Type } from 'typebox';
import { Nullable } from '../../http/schemas.js';
import { ProfileResponse, UserDecryption, toProfileResponse, toUserDecryption } from '../accounts/accounts.schemas.js';
import type { UserRow } from '../accounts/accounts.repository.js';
import { CollectionDetailsResponse } from '../collections/collections.schemas.js';
import { PolicyResponse } from '../policies/policies.schemas.js';
import { SendResponse } from '../sends/sends.schemas.js';
import { CipherDetailsResponse, CipherType, cipherJson, type CipherResponseRow } from './ciphers.schemas.js';
import type { FolderRow } from './folders.repository.js';
import { FolderResponse, toFolderResponse } from './folders.schemas.js';
import type { SyncData } from './sync.service.js';

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
    sends: Type.Array(SendResponse),
    userDecryption: UserDecryption,
  },
  { description: 'Everything a client caches (SyncResponseModel)' },
);

function domainsOf(user: UserRow) {
  const equivalent = user.equivalent_domains ? (JSON.parse(user.equivalent_domains) as string[][]) : null;
  // The global equivalent-domain groups are Bitwarden's own list; none are served yet.
  return { object: 'domains' as const, equivalentDomains: equivalent, globalEquivalentDomains: [] };
}

/** Client versions from which SSH key items may be sent (older ones fail on the type). */
const SSH_KEY_MIN_VERSION = [2024, 12, 0];

export function supportsSshKeys(clientVersion: string | null): boolean {
  if (!clientVersion) return false;
  const parts = clientVersion.split('.').map((p) => Number.parseInt(p, 10));
  for (let i = 0; i < SSH_KEY_MIN_VERSION.length; i++) {
    const have = parts[i] ?? 0;
    const need = SSH_KEY_MIN_VERSION[i] ?? 0;
    if (Number.isNaN(have)) return false;
    if (have !== need) return have > need;
  }
  return true;
}

export function foldersJson(folders: readonly FolderRow[]): string {
  return JSON.stringify(folders.map(toFolderResponse));
}

/** The `ciphers` array as JSON text, each item as cipherJson writes it. */
export function ciphersJson(rows: readonly CipherResponseRow[], withSshKeys: boolean, apiBase: string): string {
  const items: string[] = [];
  for (const row of rows) {
    // Bitwarden hides SSH keys from clients older than 2024.12 (or that send no version).
    if (row.type === (CipherType.SSHKey as number) && !withSshKeys) continue;
    items.push(cipherJson(row, 'cipherDetails', apiBase));
  }
  return `[${items.join(',')}]`;
}

/**
 * The sync body, in pieces. The vault part arrives as encoded JSON (see sync-cache.ts) and
 * goes out as it is, without a serialiser pass over thousands of items or a copy; tests check
 * the result against SyncResponse.
 */
export function syncBody(data: SyncData, options: { excludeDomains: boolean }): Buffer[] {
  const head =
    `{"object":"sync","profile":${JSON.stringify(toProfileResponse(data.user, data.organizations, Boolean(data.user.two_factor_enabled)))},` +
    `"folders":${data.vault.folders},"collections":${JSON.stringify(data.collections)},"ciphers":`;
  const tail =
    `,"domains":${options.excludeDomains ? 'null' : JSON.stringify(domainsOf(data.user))},"policies":${JSON.stringify(data.policies)},"sends":${JSON.stringify(data.sends)},` +
    `"userDecryption":${JSON.stringify(toUserDecryption(data.user))}}`;
  return [Buffer.from(head), data.vault.ciphers, Buffer.from(tail)];
}
