import { Type, type Static } from 'typebox';
import { Guid, Nullable } from '../../http/schemas.js';
import type { AccessRow } from '../collections/collections.repository.js';
import { AccessSelection, AccessSelectionResponse, toAccessSelection } from '../collections/collections.schemas.js';
import type { GroupRow } from './groups.repository.js';

const Name = Type.String({ minLength: 1, maxLength: 100 });
const ExternalId = Nullable(Type.String({ maxLength: 300 }));
const Collections = Nullable(Type.Array(AccessSelection, { maxItems: 10_000 }));
const Users = Nullable(Type.Array(Guid, { maxItems: 10_000 }));

/** POST: `collections` is required unless the group has access to all collections. */
export const CreateGroupBody = Type.Object({
  name: Name,
  accessAll: Type.Optional(Type.Boolean()),
  externalId: Type.Optional(ExternalId),
  collections: Type.Optional(Collections),
  users: Type.Optional(Users),
});
export type CreateGroupBody = Static<typeof CreateGroupBody>;

/**
 * PUT replaces the group: name, collections and users must all be given. `accessAll` and
 * `externalId` keep their values when left out, since current clients no longer send them.
 */
export const UpdateGroupBody = Type.Object({
  name: Name,
  accessAll: Type.Optional(Type.Boolean()),
  externalId: Type.Optional(ExternalId),
  collections: Collections,
  users: Users,
});
export type UpdateGroupBody = Static<typeof UpdateGroupBody>;

export const GroupUsersBody = Type.Array(Guid, { maxItems: 10_000 });


export const OrgIdUserParams = Type.Object({ orgId: Guid, id: Guid, orgUserId: Guid });

const groupFields = {
  id: Type.String(),
  organizationId: Type.String(),
  name: Type.String(),
  accessAll: Type.Boolean(),
  externalId: Nullable(Type.String()),
};

export const GroupResponse = Type.Object({ object: Type.Literal('group'), ...groupFields });
export const GroupDetailsResponse = Type.Object({ object: Type.Literal('groupDetails'), ...groupFields, collections: Type.Array(AccessSelectionResponse) });

function fields(row: GroupRow) {
  return { id: row.id, organizationId: row.organization_id, name: row.name, accessAll: Boolean(row.access_all), externalId: row.external_id };
}

export function toGroupResponse(row: GroupRow): Static<typeof GroupResponse> {
  return { object: 'group', ...fields(row) };
}

export function toGroupDetails(row: GroupRow, collections: AccessRow[]): Static<typeof GroupDetailsResponse> {
  return { object: 'groupDetails', ...fields(row), collections: collections.map(toAccessSelection) };
}

export { OrgParams, OrgIdParams } from '../../http/schemas.js';
