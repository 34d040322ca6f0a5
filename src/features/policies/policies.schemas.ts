import { Type, type Static } from 'typebox';
import { Guid, Nullable } from '../../http/schemas.js';
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

export const PolicyBody = Type.Object({
  type: Type.Optional(Type.Integer()),
  enabled: Type.Boolean(),
  /** A JSON object whose shape depends on the type; checked by the service. */
  data: Type.Optional(Type.Unknown()),
});
export type PolicyBody = Static<typeof PolicyBody>;

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
  revisionDate: Nullable(Type.String()),
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

export function toPolicyResponse(row: PolicyRow): PolicyResponse {
  return {
    object: 'policy',
    id: row.id,
    organizationId: row.organization_id,
    type: row.type,
    data: parseData(row.data),
    enabled: Boolean(row.enabled),
    revisionDate: row.revision_date,
    canToggleState: true,
  };
}

/** A policy the organization never saved: off, with no data. */
export function defaultPolicyResponse(organizationId: string, type: PolicyType): PolicyResponse {
  return { object: 'policy', id: null, organizationId, type, data: null, enabled: false, revisionDate: null, canToggleState: true };
}

export { OrgParams } from '../../http/schemas.js';
