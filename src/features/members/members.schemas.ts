import { Type, type Static } from 'typebox';
import { EMAIL_ADDRESS_PATTERN, Guid, Nullable, NullableEncString } from '../../http/schemas.js';
import { parsePermissions, PERMISSION_FLAGS } from '../../platform/access/roles.js';

// Invitations trim the addresses they are sent, so spaces around one are allowed; control characters never are.
const Email = Type.String({ minLength: 3, maxLength: 256, pattern: `^\\s*${EMAIL_ADDRESS_PATTERN}\\s*$` });
const Role = Type.Integer({ minimum: 0, maximum: 4, description: 'Owner 0, Admin 1, User 2, Manager 3, Custom 4' });

export const CollectionAccessBody = Type.Object({
  id: Guid,
  readOnly: Type.Optional(Type.Boolean({ default: false })),
  hidePasswords: Type.Optional(Type.Boolean({ default: false })),
  manage: Type.Optional(Type.Boolean({ default: false })),
});
export type CollectionAccessBody = Static<typeof CollectionAccessBody>;

export const PermissionsBody = Type.Object(Object.fromEntries(PERMISSION_FLAGS.map((flag) => [flag, Type.Optional(Type.Boolean())])));
export type PermissionsBody = Partial<Record<(typeof PERMISSION_FLAGS)[number], boolean>>;

const memberFields = {
  type: Role,
  accessAll: Type.Optional(Type.Boolean()),
  collections: Type.Optional(Nullable(Type.Array(CollectionAccessBody, { maxItems: 1000 }))),
  groups: Type.Optional(Nullable(Type.Array(Guid, { maxItems: 1000 }))),
  permissions: Type.Optional(Nullable(PermissionsBody)),
  accessSecretsManager: Type.Optional(Type.Boolean()),
};

export const InviteBody = Type.Object({ emails: Type.Array(Email, { minItems: 1, maxItems: 20 }), ...memberFields });
export type InviteBody = Static<typeof InviteBody>;

export const UpdateBody = Type.Object(memberFields);
export type UpdateBody = Static<typeof UpdateBody>;

export const AcceptBody = Type.Object({
  token: Type.String({ minLength: 1, maxLength: 4000 }),
  // The user key encrypted to the organization's public key, for automatic account recovery enrolment.
  resetPasswordKey: NullableEncString(10_000),
});

/**
 * The encrypted "My Items" name current web vaults send when confirming or restoring, for the
 * members the data ownership policy binds.
 */
const defaultUserCollectionName = NullableEncString(1000);

export const ConfirmBody = Type.Object({
  key: Type.String({ minLength: 1, maxLength: 10_000 }),
  defaultUserCollectionName: Type.Optional(defaultUserCollectionName),
});

export const BulkConfirmBody = Type.Object({
  keys: Type.Array(Type.Object({ id: Guid, key: Type.String({ minLength: 1, maxLength: 10_000 }) }), { minItems: 1, maxItems: 500 }),
  defaultUserCollectionName: Type.Optional(defaultUserCollectionName),
});

export const IdsBody = Type.Object({ ids: Type.Array(Guid, { minItems: 1, maxItems: 500 }) });


/** Bulk revoke and restore: the official bulk model, whose collection name only a restore uses. */
export const StatusChangeBody = Type.Object({ ids: IdsBody.properties.ids, defaultUserCollectionName });

export const RestoreBody = Type.Object({ defaultUserCollectionName });

export const GroupIdsBody = Type.Object({ groupIds: Type.Array(Guid, { maxItems: 1000 }) });

export const ListQuery = Type.Object({
  includeGroups: Type.Optional(Type.Boolean({ default: false })),
  includeCollections: Type.Optional(Type.Boolean({ default: false })),
});
export const GetQuery = Type.Object({ includeGroups: Type.Optional(Type.Boolean({ default: false })) });

const PermissionsResponse = Type.Object(Object.fromEntries(PERMISSION_FLAGS.map((flag) => [flag, Type.Boolean()])));

const CollectionAccessResponse = Type.Object({ id: Type.String(), readOnly: Type.Boolean(), hidePasswords: Type.Boolean(), manage: Type.Boolean() });
export type CollectionAccessResponse = Static<typeof CollectionAccessResponse>;

/** The official RevocationReason of a revoked member; null for any other status. */
const RevocationReason = Nullable(
  Type.Integer({ description: '0 unknown (revoked before reasons were recorded), 1 by a member manager, 2 the Two-step login policy, 3 declined the data ownership policy' }),
);

/** OrganizationUserResponseModel's fields, after `object`. */
const baseFields = {
  id: Type.String(),
  userId: Nullable(Type.String()),
  type: Type.Integer(),
  status: Type.Integer(),
  externalId: Nullable(Type.String()),
  accessAll: Type.Boolean(),
  accessSecretsManager: Type.Boolean(),
  accessPam: Type.Boolean(),
  // Left out when null, as the official model does.
  permissions: Type.Optional(PermissionsResponse),
  resetPasswordEnrolled: Type.Boolean(),
  usesKeyConnector: Type.Boolean(),
  hasMasterPassword: Type.Boolean(),
};

export const MemberUserDetailsResponse = Type.Object({
  object: Type.Literal('organizationUserUserDetails'),
  ...baseFields,
  name: Nullable(Type.String()),
  email: Nullable(Type.String()),
  avatarColor: Nullable(Type.String()),
  twoFactorEnabled: Type.Boolean(),
  ssoBound: Type.Boolean(),
  claimedByOrganization: Type.Boolean(),
  collections: Type.Array(CollectionAccessResponse),
  groups: Type.Array(Type.String()),
  revocationReason: RevocationReason,
  creationDate: Type.String(),
});

export const MemberDetailsResponse = Type.Object({
  object: Type.Literal('organizationUserDetails'),
  ...baseFields,
  claimedByOrganization: Type.Boolean(),
  ssoExternalId: Nullable(Type.String()),
  collections: Type.Array(CollectionAccessResponse),
  groups: Type.Optional(Type.Array(Type.String())),
  revocationReason: RevocationReason,
  creationDate: Type.String(),
});

export const MiniDetailsResponse = Type.Object({
  object: Type.Literal('organizationUserUserMiniDetails'),
  id: Type.String(),
  userId: Nullable(Type.String()),
  type: Type.Integer(),
  status: Type.Integer(),
  name: Nullable(Type.String()),
  email: Nullable(Type.String()),
});

/** Per-id outcome of a bulk command; `error` is "" on success. The name is the official model's, capital and all. */
export const BulkResultResponse = Type.Object({ object: Type.Literal('OrganizationBulkConfirmResponseModel'), id: Type.String(), error: Type.String() });
export type BulkResult = Static<typeof BulkResultResponse>;

export function bulkResult(id: string, error = ''): BulkResult {
  return { object: 'OrganizationBulkConfirmResponseModel', id, error };
}

/** The stored custom permissions, every flag present. */
export function permissionsJson(body: PermissionsBody | null | undefined): string | null {
  if (!body) return null;
  const permissions: Record<string, boolean> = Object.fromEntries(PERMISSION_FLAGS.map((flag) => [flag, body[flag] === true]));
  return JSON.stringify(permissions);
}

export type MemberUserDetails = Static<typeof MemberUserDetailsResponse>;
export type MemberDetails = Static<typeof MemberDetailsResponse>;
export type MiniDetails = Static<typeof MiniDetailsResponse>;

interface MemberRowLike {
  id: string;
  user_id: string | null;
  email: string | null;
  type: number;
  status: number;
  external_id: string | null;
  access_all: boolean | number;
  access_secrets_manager: boolean | number;
  permissions: string | null;
  reset_password_key: string | null;
  creation_date: string;
  revocation_reason: number | null;
}

function baseOf(row: MemberRowLike, hasMasterPassword: boolean) {
  const permissions = parsePermissions(row.permissions);
  return {
    id: row.id,
    userId: row.user_id,
    type: row.type,
    status: row.status,
    externalId: row.external_id,
    accessAll: Boolean(row.access_all),
    accessSecretsManager: Boolean(row.access_secrets_manager),
    accessPam: false,
    ...(permissions ? { permissions } : {}),
    resetPasswordEnrolled: row.reset_password_key !== null,
    usesKeyConnector: false,
    hasMasterPassword,
  };
}

export function toCollectionAccess(row: { collection_id: string; read_only: boolean | number; hide_passwords: boolean | number; manage: boolean | number }): CollectionAccessResponse {
  return { id: row.collection_id, readOnly: Boolean(row.read_only), hidePasswords: Boolean(row.hide_passwords), manage: Boolean(row.manage) };
}

export function toMemberUserDetails(
  row: MemberRowLike & { user_email: string | null; user_name: string | null; avatar_color: string | null; has_master_password: boolean; two_factor_enabled?: boolean; sso_external_id?: string | null },
  collections: CollectionAccessResponse[],
  groups: string[],
): MemberUserDetails {
  return {
    object: 'organizationUserUserDetails',
    ...baseOf(row, row.has_master_password),
    name: row.user_name,
    email: row.user_email ?? row.email,
    avatarColor: row.avatar_color,
    twoFactorEnabled: Boolean(row.two_factor_enabled),
    ssoBound: Boolean(row.sso_external_id),
    claimedByOrganization: false,
    collections,
    groups,
    revocationReason: row.revocation_reason,
    creationDate: row.creation_date,
  };
}

export function toMemberDetails(row: MemberRowLike & { has_master_password: boolean; sso_external_id?: string | null }, collections: CollectionAccessResponse[], groups: string[] | null): MemberDetails {
  return {
    object: 'organizationUserDetails',
    ...baseOf(row, row.has_master_password),
    claimedByOrganization: false,
    ssoExternalId: row.sso_external_id ?? null,
    collections,
    ...(groups ? { groups } : {}),
    revocationReason: row.revocation_reason,
    creationDate: row.creation_date,
  };
}

export function toMiniDetails(row: MemberRowLike & { user_email: string | null; user_name: string | null }): MiniDetails {
  return { object: 'organizationUserUserMiniDetails', id: row.id, userId: row.user_id, type: row.type, status: row.status, name: row.user_name, email: row.user_email ?? row.email };
}

export { OrgIdParams, OrgParams } from '../../http/schemas.js';
