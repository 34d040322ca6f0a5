import { Type } from 'typebox';
import { Nullable } from '../../http/schemas.js';
import { ProfileResponse, UserDecryption, toProfileResponse, toUserDecryption } from '../accounts/accounts.schemas.js';
import type { UserRow } from '../accounts/accounts.repository.js';
import { CollectionDetailsResponse } from '../collections/collections.schemas.js';
import { PolicyResponse } from '../policies/policies.schemas.js';
import { SendResponse } from '../sends/sends.schemas.js';
import { CipherDetailsResponse } from './ciphers.schemas.js';
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

/** Bytes of one chunk of the items array as sync writes it (see syncBody). */
const CHUNK_CHARS = 64 * 1024;

/** The items' JSON texts as one JSON array, in chunks of about CHUNK_CHARS. */
function* arrayChunks(items: readonly string[]): Generator<Buffer> {
  let chunk = '[';
  for (let i = 0; i < items.length; i++) {
    chunk += i === 0 ? items[i] : `,${items[i]}`;
    if (chunk.length >= CHUNK_CHARS) {
      yield Buffer.from(chunk);
      chunk = '';
    }
  }
  yield Buffer.from(`${chunk}]`);
}

/** Bytes of arrayChunks(items) in all. */
function arrayBytes(items: readonly string[]): number {
  let bytes = 1 + Math.max(items.length - 1, 0) + 1;
  for (const item of items) bytes += Buffer.byteLength(item);
  return bytes;
}

/**
 * The sync body: its length and its bytes, in chunks. The items arrive as encoded JSON (see
 * sync-cache.ts) and go out as they are, without a serialiser pass over thousands of items,
 * written into one chunk at a time so that a large vault never sits in memory twice; tests
 * check the result against SyncResponse.
 */
export function syncBody(data: SyncData, options: { excludeDomains: boolean }): { length: number; chunks: Iterable<Buffer> } {
  const head = Buffer.from(
    `{"object":"sync","profile":${JSON.stringify(toProfileResponse(data.user, data.organizations, Boolean(data.user.two_factor_enabled)))},` +
      `"folders":${data.vault.folders},"collections":${JSON.stringify(data.collections)},"ciphers":`,
  );
  const tail = Buffer.from(
    `,"domains":${options.excludeDomains ? 'null' : JSON.stringify(domainsOf(data.user))},"policies":${JSON.stringify(data.policies)},"sends":${JSON.stringify(data.sends)},` +
      `"userDecryption":${JSON.stringify(toUserDecryption(data.user))}}`,
  );
  const items = data.vault.ciphers;
  return {
    length: head.length + arrayBytes(items) + tail.length,
    chunks: (function* () {
      yield head;
      yield* arrayChunks(items);
      yield tail;
    })(),
  };
}
