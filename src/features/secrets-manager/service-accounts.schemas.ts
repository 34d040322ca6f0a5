import { Type, type Static } from 'typebox';
import type { Selectable } from 'kysely';
import type { AccessTokensTable, ServiceAccountsTable } from '../../db/schema.js';
import { EncString, Guid, Nullable } from '../../http/schemas.js';

export type ServiceAccountRow = Selectable<ServiceAccountsTable>;
export type AccessTokenRow = Selectable<AccessTokensTable>;

export const ServiceAccountListQuery = Type.Object({ includeAccessToSecrets: Type.Optional(Type.Boolean({ default: false })) });

/** Create and update send the same body: the name, encrypted with the organization key. */
export const ServiceAccountBody = Type.Object({ name: EncString(1000) });
export type ServiceAccountBody = Static<typeof ServiceAccountBody>;

const Timestamp = Type.String({ format: 'date-time' });

const serviceAccountFields = {
  object: Type.Literal('serviceAccount'),
  id: Guid,
  organizationId: Guid,
  name: Type.String(),
  creationDate: Timestamp,
  revisionDate: Timestamp,
};

export const ServiceAccountResponse = Type.Object(serviceAccountFields);

/** The list's item: `accessToSecrets` counts the secrets it reaches (0 unless asked for). */
export const ServiceAccountDetailsResponse = Type.Object({ ...serviceAccountFields, accessToSecrets: Type.Integer() });

function fields(row: ServiceAccountRow) {
  return { object: 'serviceAccount' as const, id: row.id, organizationId: row.organization_id, name: row.name, creationDate: row.creation_date, revisionDate: row.revision_date };
}

export function toServiceAccountResponse(row: ServiceAccountRow): Static<typeof ServiceAccountResponse> {
  return fields(row);
}

export function toServiceAccountDetails(row: ServiceAccountRow, accessToSecrets: number): Static<typeof ServiceAccountDetailsResponse> {
  return { ...fields(row), accessToSecrets };
}

export const AccessTokenCreateBody = Type.Object({
  name: EncString(200),
  encryptedPayload: EncString(4000),
  key: EncString(10_000),
  expireAt: Type.Optional(Nullable(Type.String({ format: 'date-time' }))),
});
export type AccessTokenCreateBody = Static<typeof AccessTokenCreateBody>;

const tokenFields = {
  id: Guid,
  name: Type.String(),
  expireAt: Nullable(Timestamp),
  creationDate: Timestamp,
  revisionDate: Timestamp,
};

export const AccessTokenResponse = Type.Object({ object: Type.Literal('accessToken'), ...tokenFields, scopes: Type.Array(Type.String()) });

/** The only answer that carries the client secret; it is never shown again. */
export const AccessTokenCreationResponse = Type.Object({ object: Type.Literal('accessTokenCreation'), ...tokenFields, clientSecret: Type.String() });

function scopesOf(row: AccessTokenRow): string[] {
  const parsed: unknown = typeof row.scope === 'string' ? JSON.parse(row.scope) : row.scope;
  return Array.isArray(parsed) ? parsed.filter((s): s is string => typeof s === 'string') : [];
}

export function toAccessTokenResponse(row: AccessTokenRow): Static<typeof AccessTokenResponse> {
  return { object: 'accessToken', id: row.id, name: row.name, scopes: scopesOf(row), expireAt: row.expire_at, creationDate: row.creation_date, revisionDate: row.revision_date };
}

export function toAccessTokenCreation(row: AccessTokenRow, clientSecret: string): Static<typeof AccessTokenCreationResponse> {
  return { object: 'accessTokenCreation', id: row.id, name: row.name, clientSecret, expireAt: row.expire_at, creationDate: row.creation_date, revisionDate: row.revision_date };
}
