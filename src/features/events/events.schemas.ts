import { Type } from 'typebox';
import { Guid, Nullable } from '../../http/schemas.js';
import type { EventRow } from './events.repository.js';

export { OrgParams } from '../../http/schemas.js';

/** `?start&end&actingUserId&itemId&continuationToken` of the event-log queries. */
export const EventQuery = Type.Object({
  start: Type.Optional(Type.String({ minLength: 1, description: 'ISO 8601; with end, the window to read (default: the last 30 days)' })),
  end: Type.Optional(Type.String({ minLength: 1, description: 'ISO 8601' })),
  actingUserId: Type.Optional(Guid),
  /** Only the events about this cipher, collection, group, policy, member, secret, project or service account. */
  itemId: Type.Optional(Guid),
  continuationToken: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
});

const NullableGuid = Nullable(Type.String());

/** Bitwarden's EventResponseModel. Ids this server has no notion of (providers, sends, installations) are null. */
export const EventResponse = Type.Object({
  object: Type.Literal('event'),
  type: Type.Integer(),
  userId: NullableGuid,
  organizationId: NullableGuid,
  providerId: Type.Null(),
  cipherId: NullableGuid,
  collectionId: NullableGuid,
  groupId: NullableGuid,
  policyId: NullableGuid,
  organizationUserId: NullableGuid,
  providerUserId: Type.Null(),
  providerOrganizationId: Type.Null(),
  actingUserId: NullableGuid,
  installationId: Type.Null(),
  date: Type.String(),
  deviceType: Nullable(Type.Integer()),
  ipAddress: Nullable(Type.String()),
  systemUser: Nullable(Type.Integer()),
  domainName: Type.Null(),
  secretId: NullableGuid,
  projectId: NullableGuid,
  serviceAccountId: NullableGuid,
  grantedServiceAccountId: NullableGuid,
  sendId: Type.Null(),
});

export function toEventResponse(row: EventRow) {
  return {
    object: 'event' as const,
    type: row.type,
    userId: row.user_id,
    organizationId: row.organization_id,
    providerId: null,
    cipherId: row.cipher_id,
    collectionId: row.collection_id,
    groupId: row.group_id,
    policyId: row.policy_id,
    organizationUserId: row.organization_user_id,
    providerUserId: null,
    providerOrganizationId: null,
    actingUserId: row.acting_user_id,
    installationId: null,
    date: row.date,
    deviceType: row.device_type,
    ipAddress: row.ip_address,
    systemUser: row.system_user,
    domainName: null,
    secretId: row.secret_id,
    projectId: row.project_id,
    serviceAccountId: row.service_account_id,
    grantedServiceAccountId: row.granted_service_account_id ?? null,
    sendId: null,
  };
}
