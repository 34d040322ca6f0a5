import { Type, type Static } from 'typebox';
import { Nullable } from '../../http/schemas.js';
import type { CollectionGrant } from '../../platform/access/grants.js';
import type { ReportedMember } from './member-access.repository.js';

/** One row of the official MemberAccessDetailReportResponseModel. */
export const MemberAccessRow = Type.Object({
  userGuid: Type.String({ description: "The member's membership id (organization user id), as the official report names it" }),
  userName: Nullable(Type.String()),
  email: Nullable(Type.String()),
  twoFactorEnabled: Type.Boolean(),
  accountRecoveryEnabled: Type.Boolean(),
  usesKeyConnector: Type.Boolean({ description: 'Always false: Key Connector is not offered' }),
  collectionId: Nullable(Type.String()),
  groupId: Nullable(Type.String({ description: 'The group the access comes through; null for direct access' })),
  groupName: Nullable(Type.String()),
  collectionName: Nullable(Type.String({ description: "The collection's encrypted name" })),
  readOnly: Nullable(Type.Boolean()),
  hidePasswords: Nullable(Type.Boolean()),
  manage: Nullable(Type.Boolean()),
  cipherIds: Type.Array(Type.String(), { description: "The collection's items that are not in the trash" }),
});
export type MemberAccessRow = Static<typeof MemberAccessRow>;

/** How one member reaches one collection, or (collection null) that the member reaches none. */
export interface MemberAccess {
  collection: { id: string; name: string; cipherIds: string[] } | null;
  group: { id: string; name: string } | null;
  grant: CollectionGrant | null;
}

/** A report row: the member, and one way they reach one collection. */
export function toMemberAccessRow(member: ReportedMember, accountRecoveryEnabled: boolean, access: MemberAccess): MemberAccessRow {
  return {
    userGuid: member.id,
    userName: member.userName,
    email: member.email,
    twoFactorEnabled: member.twoFactorEnabled,
    accountRecoveryEnabled,
    usesKeyConnector: false,
    collectionId: access.collection?.id ?? null,
    groupId: access.group?.id ?? null,
    groupName: access.group?.name ?? null,
    collectionName: access.collection?.name ?? null,
    readOnly: access.grant?.readOnly ?? null,
    hidePasswords: access.grant?.hidePasswords ?? null,
    manage: access.grant?.manage ?? null,
    cipherIds: access.collection?.cipherIds ?? [],
  };
}
