import { Type, type Static } from 'typebox';
import { Guid, Nullable } from '../../http/schemas.js';
import type { CollectionGrant } from '../../platform/access/grants.js';
import type { AccessRow, CollectionRow } from './collections.repository.js';

/** One member's or group's access to a collection, as clients send it. Missing flags are false. */
export const AccessSelection = Type.Object({
  id: Guid,
  readOnly: Type.Optional(Type.Boolean()),
  hidePasswords: Type.Optional(Type.Boolean()),
  manage: Type.Optional(Type.Boolean()),
});
export type AccessSelection = Static<typeof AccessSelection>;

export const AccessSelectionResponse = Type.Object({
  id: Type.String(),
  readOnly: Type.Boolean(),
  hidePasswords: Type.Boolean(),
  manage: Type.Boolean(),
});
export type AccessSelectionResponse = Static<typeof AccessSelectionResponse>;

const AccessList = Type.Array(AccessSelection, { maxItems: 10_000 });
const Name = Type.String({ minLength: 1, maxLength: 1000 });
const ExternalId = Nullable(Type.String({ maxLength: 300 }));

export const CreateCollectionBody = Type.Object({
  name: Name,
  externalId: Type.Optional(ExternalId),
  groups: Type.Optional(Nullable(AccessList)),
  users: Type.Optional(Nullable(AccessList)),
});
export type CreateCollectionBody = Static<typeof CreateCollectionBody>;

/** Leaving out `groups` or `users` keeps that side of the collection's access as it is. */
export const UpdateCollectionBody = CreateCollectionBody;
export type UpdateCollectionBody = CreateCollectionBody;

export const CollectionUsersBody = AccessList;

/** `POST …/collections/bulk-access`: access added to several collections at once. */
export const BulkAccessBody = Type.Object({
  collectionIds: Type.Array(Guid, { minItems: 1, maxItems: 500 }),
  users: Type.Optional(Nullable(Type.Array(AccessSelection, { maxItems: 1000 }))),
  groups: Type.Optional(Nullable(Type.Array(AccessSelection, { maxItems: 1000 }))),
});
export type BulkAccessBody = Static<typeof BulkAccessBody>;



const collectionFields = {
  id: Type.String(),
  organizationId: Type.String(),
  name: Type.String(),
  externalId: Nullable(Type.String()),
  type: Type.Integer(),
  defaultUserCollectionEmail: Nullable(Type.String()),
};

export const CollectionResponse = Type.Object({ object: Type.Literal('collection'), ...collectionFields });

export const CollectionDetailsResponse = Type.Object({
  object: Type.Literal('collectionDetails'),
  ...collectionFields,
  readOnly: Type.Boolean(),
  hidePasswords: Type.Boolean(),
  manage: Type.Boolean(),
});
export type CollectionDetailsResponse = Static<typeof CollectionDetailsResponse>;

export const CollectionAccessDetailsResponse = Type.Object({
  object: Type.Literal('collectionAccessDetails'),
  ...collectionFields,
  groups: Type.Array(AccessSelectionResponse),
  users: Type.Array(AccessSelectionResponse),
  assigned: Type.Boolean(),
  readOnly: Type.Boolean(),
  hidePasswords: Type.Boolean(),
  manage: Type.Boolean(),
  unmanaged: Type.Boolean(),
});
export type CollectionAccessDetailsResponse = Static<typeof CollectionAccessDetailsResponse>;

export function toAccessSelection(row: AccessRow): AccessSelectionResponse {
  return { id: row.id, readOnly: Boolean(row.read_only), hidePasswords: Boolean(row.hide_passwords), manage: Boolean(row.manage) };
}

function baseFields(row: CollectionRow) {
  return {
    id: row.id,
    organizationId: row.organization_id,
    name: row.name,
    externalId: row.external_id,
    type: row.type,
    defaultUserCollectionEmail: row.default_user_collection_email ?? null,
  };
}

export function toCollectionResponse(row: CollectionRow): Static<typeof CollectionResponse> {
  return { object: 'collection', ...baseFields(row) };
}

export function toCollectionDetails(row: CollectionRow, grant: CollectionGrant): CollectionDetailsResponse {
  return { object: 'collectionDetails', ...baseFields(row), readOnly: grant.readOnly, hidePasswords: grant.hidePasswords, manage: grant.manage };
}

export function toCollectionAccessDetails(
  row: CollectionRow,
  access: { groups: AccessRow[]; users: AccessRow[] },
  grant: CollectionGrant | undefined,
): CollectionAccessDetailsResponse {
  const groups = access.groups.map(toAccessSelection);
  const users = access.users.map(toAccessSelection);
  return {
    object: 'collectionAccessDetails',
    ...baseFields(row),
    groups,
    users,
    assigned: grant !== undefined,
    readOnly: grant?.readOnly ?? false,
    hidePasswords: grant?.hidePasswords ?? false,
    manage: grant?.manage ?? false,
    unmanaged: !groups.some((g) => g.manage) && !users.some((u) => u.manage),
  };
}

export { OrgParams, OrgIdParams } from '../../http/schemas.js';
