import { Type, type Static } from 'typebox';
import { BadRequest } from '../../http/errors.js';
import { Guid, Nullable, NullableEncString } from '../../http/schemas.js';
import type { PolicyRow } from './policies.repository.js';
import type { PolicyType } from './policy-type.js';

const HIGHEST_POLICY_TYPE = 22;

export const PolicyTypeParams = Type.Object({ orgId: Guid, type: Type.Integer({ minimum: 0, maximum: HIGHEST_POLICY_TYPE }) });

/** The invitation link's query (`policies/token`), as the web vault sends it from the link. */
export const InvitationQuery = Type.Object({
  token: Type.String({ minLength: 1, maxLength: 4096 }),
  email: Type.String({ minLength: 1, maxLength: 256 }),
  organizationUserId: Guid,
});

const PolicyFields = {
  enabled: Type.Boolean(),
  /** A JSON object whose shape depends on the type; checked by the service. */
  data: Type.Optional(Type.Unknown()),
};

/**
 * Both bodies of `PUT …/policies/{type}`: the flat `{enabled, data}` of older clients (which also
 * sent `type`), and since client 2026.5 `{policy: {enabled, data}, metadata}`, whose metadata
 * carries the encrypted "My Items" name for the data ownership policy. `policy` wins when both are sent.
 */
export const PolicyBody = Type.Object({
  type: Type.Optional(Type.Integer()),
  enabled: Type.Optional(PolicyFields.enabled),
  data: PolicyFields.data,
  policy: Type.Optional(Type.Object(PolicyFields)),
  metadata: Type.Optional(Nullable(Type.Object({ defaultUserCollectionName: Type.Optional(NullableEncString(1000)) }))),
});
export type PolicyBody = Static<typeof PolicyBody>;

/** A policy change, whichever body carried it. */
export interface PolicyUpdate {
  enabled: boolean;
  data: unknown;
  /** The encrypted name of the "My Items" collections turning data ownership on gives members. */
  defaultUserCollectionName: string | null;
}

export function toPolicyUpdate(body: PolicyBody): PolicyUpdate {
  const defaultUserCollectionName = body.metadata?.defaultUserCollectionName ?? null;
  if (body.policy) return { enabled: body.policy.enabled, data: body.policy.data, defaultUserCollectionName };
  if (body.enabled === undefined) {
    // A body with flat fields is the older shape missing its `enabled`; any other lacks `policy`.
    if (body.data !== undefined || body.type !== undefined) throw BadRequest.field('enabled', 'The enabled field is required.');
    throw BadRequest.field('policy', 'The policy field is required.');
  }
  return { enabled: body.enabled, data: body.data, defaultUserCollectionName };
}

/**
 * The official PolicyResponseModel (sync, PUT) merged with the status model the admin views read
 * (`canToggleState`); clients ignore the fields they do not know.
 */
export const PolicyResponse = Type.Object({
  object: Type.Literal('policy'),
  id: Nullable(Type.String()),
  organizationId: Type.String(),
  type: Type.Integer(),
  data: Type.Unknown(),
  enabled: Type.Boolean(),
  /** Always a date: clients 2026.8 run `new Date(revisionDate).toISOString()` on every policy, and a throw there empties the vault. */
  revisionDate: Type.String({ format: 'date-time' }),
  canToggleState: Type.Boolean(),
});
export type PolicyResponse = Static<typeof PolicyResponse>;

export function parseData(text: string | null): Record<string, unknown> | null {
  if (!text) return null;
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** The date a policy never saved answers: the epoch, which clients also read a null date as. */
export const NEVER_REVISED = new Date(0).toISOString();

/** The first of the row's dates that parses, as ISO text; a row restored from elsewhere may lack one. */
function revisionDateOf(row: PolicyRow): string {
  for (const text of [row.revision_date, row.creation_date]) {
    const time = text ? Date.parse(text) : Number.NaN;
    if (!Number.isNaN(time)) return new Date(time).toISOString();
  }
  return NEVER_REVISED;
}

export function toPolicyResponse(row: PolicyRow): PolicyResponse {
  return {
    object: 'policy',
    id: row.id,
    organizationId: row.organization_id,
    type: row.type,
    data: parseData(row.data),
    enabled: Boolean(row.enabled),
    revisionDate: revisionDateOf(row),
    canToggleState: true,
  };
}

/** A policy the organization never saved: off, with no data. */
export function defaultPolicyResponse(organizationId: string, type: PolicyType): PolicyResponse {
  return { object: 'policy', id: null, organizationId, type, data: null, enabled: false, revisionDate: NEVER_REVISED, canToggleState: true };
}

export { OrgParams } from '../../http/schemas.js';
