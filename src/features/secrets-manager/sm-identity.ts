import { createHash } from 'node:crypto';
import type { JWTPayload } from 'jose';
import type { Clock } from '../../shared/clock.js';
import type { Db } from '../../db/database.js';
import type { Principal } from '../../http/access.js';
import { OAuthError } from '../../http/error-handler.js';
import { isGuid } from '../../http/ids.js';
import { safeEqual } from '../../shared/constant-time.js';
import type { Executor } from '../../db/database.js';
import type { ClientCredentialsGrant } from '../identity/identity.service.js';
import type { SigningKeys } from '../../platform/auth/signing-keys.js';
import { ACCESS_TOKEN_TYP, type PrincipalResolver } from '../../platform/auth/tokens.js';

/** The scope of a machine account's token, and the only one its access tokens grant. */
export const SECRETS_SCOPE = 'api.secrets';

/** The `type` claim of a machine account's token; the SDK and our resolver key on it. */
export const SERVICE_ACCOUNT_CLAIM_TYPE = 'ServiceAccount';

/** The official lifetime of a machine account's access token. */
export const MACHINE_TOKEN_LIFETIME_SECONDS = 3600;

/** The `client_id` form the official server also accepts besides the bare token id. */
const API_KEY_PREFIX = 'apikey.';

/** How a client secret is kept: base64(SHA-256(UTF-8 secret)), as the official server hashes it. */
export function hashClientSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('base64');
}

/** An access token with its machine account and organization, for deciding whether it may be used now. */
function accessTokenQuery(db: Executor, tokenId: string) {
  return db
    .selectFrom('access_tokens')
    .innerJoin('service_accounts', 'service_accounts.id', 'access_tokens.service_account_id')
    .innerJoin('organizations', 'organizations.id', 'service_accounts.organization_id')
    .select([
      'access_tokens.id',
      'access_tokens.expire_at',
      'service_accounts.id as service_account_id',
      'service_accounts.organization_id',
      'organizations.enabled',
      'organizations.use_secrets_manager',
    ])
    .where('access_tokens.id', '=', tokenId);
}

/**
 * Whether a token may be used now: it has not expired, and its machine account's organization is
 * enabled and has Secrets Manager.
 */
function stands(row: { expire_at: string | null; enabled: boolean | number; use_secrets_manager: boolean | number }, now: string): boolean {
  if (!row.enabled || !row.use_secrets_manager) return false;
  // Compared as instants: PostgreSQL and SQLite may render the stored timestamp differently.
  return row.expire_at === null || new Date(row.expire_at).getTime() > new Date(now).getTime();
}

/** An access token that may be used now, or null. One query, made on every machine-account request. */
export async function standingAccessToken(db: Executor, tokenId: string, now: string) {
  const row = await accessTokenQuery(db, tokenId).executeTakeFirst();
  return row && stands(row, now) ? row : null;
}

/** As `standingAccessToken`, with the secret's hash and the encrypted payload that only a login needs. */
async function standingAccessTokenForLogin(db: Executor, tokenId: string, now: string) {
  const row = await accessTokenQuery(db, tokenId).select(['access_tokens.client_secret_hash', 'access_tokens.encrypted_payload']).executeTakeFirst();
  return row && stands(row, now) ? row : null;
}

const INVALID_CLIENT = new OAuthError('invalid_client', 'invalid_client', 'client_id or client_secret is incorrect.');

/** The token id a `client_id` names: the bare id the SDK sends, or `apikey.<id>`. */
function tokenIdOf(clientId: string): string | null {
  const id = (clientId.startsWith(API_KEY_PREFIX) ? clientId.slice(API_KEY_PREFIX.length) : clientId).toLowerCase();
  return isGuid(id) ? id : null;
}

/**
 * `client_credentials` for a machine account's access token, scope `api.secrets`. Without the
 * Secrets Manager edition the scope itself is refused, so a client learns why rather than
 * being told its credentials are wrong.
 */
export function secretsManagerGrant(deps: { db: Db; clock: Clock; keys: SigningKeys; enabled: boolean }): ClientCredentialsGrant {
  const grant: ClientCredentialsGrant['grant'] = async (form) => {
    const scope = form.scope ?? SECRETS_SCOPE;
    if (!deps.enabled) throw new OAuthError('invalid_scope', 'Secrets Manager is not offered by this server, so the api.secrets scope cannot be granted.');
    if (scope !== SECRETS_SCOPE) throw new OAuthError('invalid_scope', 'A machine account access token grants the api.secrets scope only.');
    const tokenId = tokenIdOf(form.client_id ?? '');
    const row = tokenId ? await standingAccessTokenForLogin(deps.db, tokenId, deps.clock.now().toISOString()) : null;
    // Both sides are base64 of 32 bytes when the token exists; the lengths only differ for a missing one.
    if (!row || !safeEqual(row.client_secret_hash, hashClientSecret(form.client_secret ?? ''))) throw INVALID_CLIENT;
    const accessToken = await deps.keys.sign(
      { sub: row.service_account_id, type: SERVICE_ACCOUNT_CLAIM_TYPE, organization: row.organization_id, client_id: row.id, scope: [SECRETS_SCOPE] },
      { typ: ACCESS_TOKEN_TYP, expiresInSeconds: MACHINE_TOKEN_LIFETIME_SECONDS },
    );
    return {
      access_token: accessToken,
      expires_in: MACHINE_TOKEN_LIFETIME_SECONDS,
      token_type: 'Bearer',
      scope: SECRETS_SCOPE,
      encrypted_payload: row.encrypted_payload,
    };
  };
  return { accepts: (clientId) => tokenIdOf(clientId) !== null, grant };
}

/**
 * A machine account's bearer token -> its principal, re-reading the access token on every
 * request: a revoked or expired token, a deleted machine account, or an organization that lost
 * Secrets Manager stops working at once, with no cache to wait out.
 */
export function serviceAccountPrincipalResolver(db: Db, clock: Clock): PrincipalResolver {
  return async (payload: JWTPayload): Promise<Principal | null> => {
    const tokenId = typeof payload.client_id === 'string' ? payload.client_id : '';
    if (!isGuid(tokenId)) return null;
    const row = await standingAccessToken(db, tokenId, clock.now().toISOString());
    if (!row || row.service_account_id !== payload.sub || row.organization_id !== payload.organization) return null;
    return {
      kind: 'serviceAccount',
      serviceAccountId: row.service_account_id,
      organizationId: row.organization_id,
      accessTokenId: row.id,
      clientId: row.id,
      scopes: [SECRETS_SCOPE],
    };
  };
}
