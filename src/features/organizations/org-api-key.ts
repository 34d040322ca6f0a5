import { createHash } from 'node:crypto';
import type { JWTPayload } from 'jose';
import type { Db } from '../../db/database.js';
import type { Principal } from '../../http/access.js';
import { OAuthError } from '../../http/error-handler.js';
import { isGuid } from '../../http/ids.js';
import { safeEqual } from '../../shared/constant-time.js';
import type { ClientCredentialsGrant } from '../identity/identity.service.js';
import type { SigningKeys } from '../../platform/auth/signing-keys.js';
import { ACCESS_TOKEN_TYP, type PrincipalResolver } from '../../platform/auth/tokens.js';

/** OrganizationApiKeyType.Default: the key of the public API. */
export const DEFAULT_API_KEY_TYPE = 0;

/** A short fingerprint of the key, so that rotating it ends the tokens issued under it. */
function keyStamp(apiKey: string): string {
  return createHash('sha256').update(apiKey).digest('base64url').slice(0, 16);
}

async function apiKeyOf(db: Db, organizationId: string): Promise<string | null> {
  const row = await db
    .selectFrom('organization_api_keys')
    .innerJoin('organizations', 'organizations.id', 'organization_api_keys.organization_id')
    .select(['organization_api_keys.api_key', 'organizations.enabled', 'organizations.use_api'])
    .where('organization_api_keys.organization_id', '=', organizationId)
    .where('organization_api_keys.type', '=', DEFAULT_API_KEY_TYPE)
    .executeTakeFirst();
  return row && row.enabled && row.use_api ? row.api_key : null;
}

const INVALID_CLIENT = new OAuthError('invalid_client', 'invalid_client', 'client_id or client_secret is incorrect.');

const CLIENT_ID_PREFIX = 'organization.';

/** The organization id a `client_id` of the form `organization.<id>` names, or null. */
function organizationIdOf(clientId: string): string | null {
  if (!clientId.startsWith(CLIENT_ID_PREFIX)) return null;
  const id = clientId.slice(CLIENT_ID_PREFIX.length).toLowerCase();
  return isGuid(id) ? id : null;
}

/** `client_credentials` with `organization.<id>` and the organization API key, scope api.organization. */
export function organizationApiKeyGrant(deps: { db: Db; keys: SigningKeys; lifetimeSeconds: number }): ClientCredentialsGrant {
  const grant: ClientCredentialsGrant['grant'] = async (form) => {
    const clientId = form.client_id ?? '';
    const organizationId = organizationIdOf(clientId);
    if ((form.scope ?? '') !== 'api.organization') throw new OAuthError('invalid_scope', 'The organization API key grants the api.organization scope only.');
    const secret = form.client_secret ?? '';
    const apiKey = organizationId ? await apiKeyOf(deps.db, organizationId) : null;
    if (!organizationId || !apiKey || !safeEqual(secret, apiKey)) throw INVALID_CLIENT;
    const accessToken = await deps.keys.sign(
      { sub: organizationId, client_id: clientId, scope: ['api.organization'], type: 'Organization', akstamp: keyStamp(apiKey) },
      { typ: ACCESS_TOKEN_TYP, expiresInSeconds: deps.lifetimeSeconds },
    );
    return { access_token: accessToken, expires_in: deps.lifetimeSeconds, token_type: 'Bearer', scope: 'api.organization' };
  };
  return { accepts: (clientId) => organizationIdOf(clientId) !== null, grant };
}

export function organizationPrincipalResolver(db: Db): PrincipalResolver {
  return async (payload: JWTPayload): Promise<Principal | null> => {
    const organizationId = String(payload.sub);
    const apiKey = await apiKeyOf(db, organizationId);
    if (!apiKey || keyStamp(apiKey) !== payload.akstamp) return null;
    return { kind: 'organization', organizationId, clientId: String(payload.client_id), scopes: ['api.organization'] };
  };
}
