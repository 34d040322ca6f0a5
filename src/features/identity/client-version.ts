import { OAuthError } from '../../http/error-handler.js';
import { hasV2Keys, type V2KeyFields } from '../accounts/account-keys.js';

/**
 * The oldest client that can use an account of version-2 keys (the official
 * `MinimumClientVersionForV2Encryption`): an older one would read the COSE keys as garbage and,
 * worse, could write data under a key format it does not know.
 */
const MIN_CLIENT_VERSION_FOR_V2 = [2025, 11, 0] as const;

const UPGRADE = 'Please update your app to continue using Bitwarden';
const HEADER_MISSING =
  'No client version header found, required to prevent encryption errors. Please confirm your client is supplying the header: "Bitwarden-Client-Version"';

/** `Bitwarden-Client-Version` as the official server parses it (.NET Version: 2 to 4 numbers); null when it is not one. */
function parseClientVersion(text: string | null): number[] | null {
  if (!text || !/^\d{1,9}(\.\d{1,9}){1,3}$/.test(text.trim())) return null;
  return text.trim().split('.').map(Number);
}

function older(version: readonly number[], than: readonly number[]): boolean {
  for (let i = 0; i < Math.max(version.length, than.length); i++) {
    const a = version[i] ?? 0;
    const b = than[i] ?? 0;
    if (a !== b) return a < b;
  }
  return false;
}

/**
 * The official ClientVersionValidator, run once the credentials proved the account (so it tells
 * no stranger what kind of keys an account has): an account of version-2 keys logs in only from
 * a client that says, in `Bitwarden-Client-Version`, it is 2025.11.0 or later. Unlike the official
 * server, a version-1 account may still log in without the header, as scripts and older tools do
 * (docs/account-keys.md).
 */
export function requireClientForKeys(user: V2KeyFields, clientVersion: string | null): void {
  if (!hasV2Keys(user)) return;
  const version = parseClientVersion(clientVersion);
  if (!version) throw new OAuthError('version_header_missing', HEADER_MISSING);
  if (older(version, MIN_CLIENT_VERSION_FOR_V2)) throw new OAuthError('invalid_client_version', UPGRADE);
}
