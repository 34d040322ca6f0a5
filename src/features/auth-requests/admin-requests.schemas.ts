import { Type, type Static } from 'typebox';
import { Guid, Nullable, NullableEncString } from '../../http/schemas.js';
import { deviceTypeName } from '../devices/device-types.js';
import type { AdminRequestRow } from './admin-requests.repository.js';

const USER_KEY = "The member's user key encrypted to the request's public key (RSA, type 4); required to approve.";

/** The official AdminAuthRequestUpdateRequestModel. */
export const AdminAnswerBody = Type.Object({
  requestApproved: Type.Boolean(),
  encryptedUserKey: NullableEncString(10_000, { description: USER_KEY }),
});
export type AdminAnswerBody = Static<typeof AdminAnswerBody>;

/** The official OrganizationAuthRequestUpdateManyRequestModel: one answer of a bulk. */
export const AdminAnswerManyItem = Type.Object({
  id: Guid,
  approved: Type.Boolean(),
  key: NullableEncString(10_000, { description: USER_KEY }),
});
export const AdminAnswerManyBody = Type.Array(AdminAnswerManyItem, { maxItems: 1000 });
export type AdminAnswerManyBody = Static<typeof AdminAnswerManyBody>;

/** The official BulkDenyAdminAuthRequestRequestModel. */
export const AdminDenyBody = Type.Object({ ids: Type.Array(Guid, { minItems: 1, maxItems: 1000 }) });
export type AdminDenyBody = Static<typeof AdminDenyBody>;

/** The official PendingOrganizationAuthRequestResponseModel (object `pending-org-auth-request`). */
export const PendingOrganizationAuthRequestResponse = Type.Object({
  object: Type.Literal('pending-org-auth-request'),
  id: Guid,
  userId: Guid,
  organizationUserId: Guid,
  email: Type.String(),
  publicKey: Type.String({ description: "The asking device's public key: the approval wraps the member's user key with it." }),
  requestDeviceIdentifier: Type.String(),
  requestDeviceType: Nullable(Type.String()),
  requestIpAddress: Nullable(Type.String()),
  requestCountryName: Nullable(Type.String()),
  creationDate: Type.String({ format: 'date-time' }),
});
export type PendingOrganizationAuthRequestResponse = Static<typeof PendingOrganizationAuthRequestResponse>;

export function toPendingOrganizationAuthRequest(row: AdminRequestRow): PendingOrganizationAuthRequestResponse {
  return {
    object: 'pending-org-auth-request',
    id: row.id,
    userId: row.user_id,
    organizationUserId: row.organization_user_id,
    email: row.email,
    publicKey: row.public_key,
    requestDeviceIdentifier: row.request_device_identifier,
    requestDeviceType: deviceTypeName(row.request_device_type) ?? null,
    requestIpAddress: row.request_ip_address,
    requestCountryName: null,
    creationDate: row.creation_date,
  };
}
