import { Type, type Static } from 'typebox';
import { Email, Guid, Nullable } from '../../http/schemas.js';
import type { EventRow } from '../events/events.repository.js';
import { PermissionsBody, type MemberUserDetails } from '../members/members.schemas.js';
import { OrganizationUserType, PERMISSION_FLAGS } from '../../platform/access/roles.js';
import type { PolicyResponse as WebPolicyResponse } from '../policies/policies.schemas.js';

/** The official public request models' limits. */
const EXTERNAL_ID = Type.String({ maxLength: 300 });
const Role = Type.Integer({ minimum: 0, maximum: 4, description: 'Owner 0, Admin 1, User 2, Manager 3, Custom 4' });

/** `{ id, readOnly, hidePasswords?, manage? }`: a member's or group's access to a collection (AssociationWithPermissionsRequestModel). */
export const Association = Type.Object({
  id: Guid,
  readOnly: Type.Boolean(),
  hidePasswords: Type.Optional(Nullable(Type.Boolean())),
  manage: Type.Optional(Nullable(Type.Boolean())),
});
const Associations = Type.Array(Association, { maxItems: 10_000 });

const AssociationResponse = Type.Object({ id: Type.String(), readOnly: Type.Boolean(), hidePasswords: Type.Boolean(), manage: Type.Boolean() });

// ---------------------------------------------------------------------------------------
// Members
// ---------------------------------------------------------------------------------------

const memberFields = {
  type: Role,
  externalId: Type.Optional(Nullable(EXTERNAL_ID)),
  permissions: Type.Optional(Nullable(PermissionsBody)),
  collections: Type.Optional(Nullable(Associations)),
  groups: Type.Optional(Nullable(Type.Array(Guid, { maxItems: 10_000 }))),
};

/** PUT /public/members/{id}: what is left out is reset (collections emptied, externalId cleared); groups left out stay. */
export const MemberUpdateBody = Type.Object(memberFields);
export type MemberUpdateBody = Static<typeof MemberUpdateBody>;

export const MemberCreateBody = Type.Object({ email: Email, ...memberFields });
export type MemberCreateBody = Static<typeof MemberCreateBody>;

export const GroupIdsBody = Type.Object({ groupIds: Type.Array(Guid, { maxItems: 10_000 }) });
export const MemberIdsBody = Type.Object({ memberIds: Type.Array(Guid, { maxItems: 10_000 }) });

const PermissionsResponse = Type.Object(Object.fromEntries(PERMISSION_FLAGS.map((flag) => [flag, Type.Boolean()])));

export const MemberResponse = Type.Object({
  object: Type.Literal('member'),
  id: Type.String(),
  userId: Nullable(Type.String()),
  name: Nullable(Type.String()),
  email: Nullable(Type.String()),
  twoFactorEnabled: Type.Boolean(),
  status: Type.Integer({ description: 'Revoked -1, Invited 0, Accepted 1, Confirmed 2' }),
  type: Type.Integer({ description: 'Owner 0, Admin 1, User 2, Manager 3, Custom 4' }),
  accessAll: Type.Boolean(),
  externalId: Nullable(Type.String()),
  resetPasswordEnrolled: Type.Boolean(),
  ssoExternalId: Type.Null(),
  collections: Type.Array(AssociationResponse),
  /** Only for Custom members; null otherwise. */
  permissions: Nullable(PermissionsResponse),
});
export type MemberResponse = Static<typeof MemberResponse>;

/** The public member from the member feature's own details (the web route's list model). */
export function toPublicMember(details: MemberUserDetails): MemberResponse {
  return {
    object: 'member',
    id: details.id,
    userId: details.userId,
    name: details.name,
    email: details.email,
    twoFactorEnabled: details.twoFactorEnabled,
    status: details.status,
    type: details.type,
    accessAll: details.accessAll,
    externalId: details.externalId,
    resetPasswordEnrolled: details.resetPasswordEnrolled,
    ssoExternalId: null,
    collections: details.collections,
    permissions: details.type === (OrganizationUserType.Custom as number) ? (details.permissions ?? null) : null,
  };
}

// ---------------------------------------------------------------------------------------
// Groups
// ---------------------------------------------------------------------------------------

/** POST and PUT /public/groups: on PUT, a left-out externalId is cleared and left-out collections are emptied. */
export const GroupBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 100 }),
  externalId: Type.Optional(Nullable(EXTERNAL_ID)),
  collections: Type.Optional(Nullable(Associations)),
});
export type GroupBody = Static<typeof GroupBody>;

export const GroupResponse = Type.Object({
  object: Type.Literal('group'),
  id: Type.String(),
  name: Type.String(),
  externalId: Nullable(Type.String()),
  collections: Type.Array(AssociationResponse),
});
export type GroupResponse = Static<typeof GroupResponse>;

export function toPublicGroup(details: { id: string; name: string; externalId: string | null; collections: Static<typeof AssociationResponse>[] }): GroupResponse {
  return { object: 'group', id: details.id, name: details.name, externalId: details.externalId, collections: details.collections };
}

// ---------------------------------------------------------------------------------------
// Collections
// ---------------------------------------------------------------------------------------

/** PUT /public/collections/{id}: a left-out externalId is cleared; left-out groups keep their access. */
export const CollectionBody = Type.Object({
  externalId: Type.Optional(Nullable(EXTERNAL_ID)),
  groups: Type.Optional(Nullable(Associations)),
});
export type CollectionBody = Static<typeof CollectionBody>;

/** No name: collection names are encrypted with the organization key, which an API key does not hold. */
export const CollectionResponse = Type.Object({
  object: Type.Literal('collection'),
  id: Type.String(),
  externalId: Nullable(Type.String()),
  groups: Type.Array(AssociationResponse),
});
export type CollectionResponse = Static<typeof CollectionResponse>;

export function toPublicCollection(details: { id: string; externalId: string | null; groups: Static<typeof AssociationResponse>[] }): CollectionResponse {
  return { object: 'collection', id: details.id, externalId: details.externalId, groups: details.groups };
}

// ---------------------------------------------------------------------------------------
// Policies
// ---------------------------------------------------------------------------------------

const HIGHEST_POLICY_TYPE = 22;
export const PolicyTypeParams = Type.Object({ type: Type.Integer({ minimum: 0, maximum: HIGHEST_POLICY_TYPE, description: 'PolicyType' }) });

export const PolicyBody = Type.Object({
  enabled: Type.Boolean(),
  /** A JSON object whose shape depends on the type; checked as the web route checks it. */
  data: Type.Optional(Type.Unknown()),
});
export type PolicyBody = Static<typeof PolicyBody>;

export const PolicyResponse = Type.Object({
  object: Type.Literal('policy'),
  id: Type.String(),
  type: Type.Integer(),
  enabled: Type.Boolean(),
  data: Type.Unknown(),
});
export type PolicyResponse = Static<typeof PolicyResponse>;

export function toPublicPolicy(policy: WebPolicyResponse & { id: string }): PolicyResponse {
  return { object: 'policy', id: policy.id, type: policy.type, enabled: policy.enabled, data: policy.data };
}

// ---------------------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------------------

const NullableId = Nullable(Type.String());

/** The public event: the item is the cipher, the member the membership, the device the client's DeviceType. */
export const EventResponse = Type.Object({
  object: Type.Literal('event'),
  type: Type.Integer(),
  itemId: NullableId,
  collectionId: NullableId,
  groupId: NullableId,
  policyId: NullableId,
  memberId: NullableId,
  actingUserId: NullableId,
  installationId: Type.Null(),
  date: Type.String(),
  device: Nullable(Type.Integer()),
  ipAddress: Nullable(Type.String()),
  secretId: NullableId,
  projectId: NullableId,
  serviceAccountId: NullableId,
});

export function toPublicEvent(row: EventRow): Static<typeof EventResponse> {
  return {
    object: 'event',
    type: row.type,
    itemId: row.cipher_id,
    collectionId: row.collection_id,
    groupId: row.group_id,
    policyId: row.policy_id,
    memberId: row.organization_user_id,
    actingUserId: row.acting_user_id,
    installationId: null,
    date: row.date,
    device: row.device_type,
    ipAddress: row.ip_address,
    secretId: row.secret_id,
    projectId: row.project_id,
    serviceAccountId: row.service_account_id,
  };
}

// ---------------------------------------------------------------------------------------
// Directory import
// ---------------------------------------------------------------------------------------

/** The official server accepts a number where the external id is expected (directory tools send numeric ids). */
const ImportExternalId = Type.Union([Type.String({ minLength: 1, maxLength: 300 }), Type.Number()]);

export const ImportBody = Type.Object({
  groups: Type.Optional(
    Nullable(
      Type.Array(
        Type.Object({
          name: Type.String({ minLength: 1, maxLength: 100 }),
          externalId: ImportExternalId,
          memberExternalIds: Type.Optional(Nullable(Type.Array(ImportExternalId))),
        }),
      ),
    ),
  ),
  members: Type.Optional(
    Nullable(
      Type.Array(
        Type.Object({
          email: Type.Optional(Nullable(Email)),
          externalId: ImportExternalId,
          deleted: Type.Optional(Type.Boolean()),
        }),
      ),
    ),
  ),
  overwriteExisting: Type.Boolean(),
  largeImport: Type.Optional(Type.Boolean()),
});
export type ImportBody = Static<typeof ImportBody>;

// ---------------------------------------------------------------------------------------
// Subscription
// ---------------------------------------------------------------------------------------

const Count = Type.Integer({ minimum: 0, maximum: 1_000_000 });

/**
 * PUT /public/organization/subscription: absolute figures; at least one of the two parts. There is
 * no automatic scaling here, so the official `maxAutoScale…` fields are not taken (and answer null).
 */
export const SubscriptionBody = Type.Object({
  passwordManager: Type.Optional(
    Nullable(
      Type.Object({
        seats: Type.Optional(Nullable(Count)),
        storage: Type.Optional(Nullable(Count)),
      }),
    ),
  ),
  secretsManager: Type.Optional(
    Nullable(
      Type.Object({
        seats: Type.Optional(Nullable(Count)),
        serviceAccounts: Type.Optional(Nullable(Count)),
      }),
    ),
  ),
});
export type SubscriptionBody = Static<typeof SubscriptionBody>;

const NullableCount = Nullable(Type.Integer());

export const SubscriptionResponse = Type.Object({
  object: Type.Literal('organizationSubscription'),
  passwordManager: Type.Object({ seats: NullableCount, maxAutoScaleSeats: NullableCount, storage: NullableCount }),
  secretsManager: Type.Object({ seats: NullableCount, maxAutoScaleSeats: NullableCount, serviceAccounts: NullableCount, maxAutoScaleServiceAccounts: NullableCount }),
  /** On PUT: "Subscription updated successfully.", or why the Secrets Manager part was left alone. */
  message: Type.Optional(Type.String()),
});
export type SubscriptionResponse = Static<typeof SubscriptionResponse>;
