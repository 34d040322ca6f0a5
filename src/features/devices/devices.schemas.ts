import { Type, type Static } from 'typebox';
import { Nullable } from '../../http/schemas.js';
import type { DeviceRow } from '../../platform/auth/users.repository.js';
import { isTrusted } from './device-trust.schemas.js';

/**
 * The official DeviceResponseModel with the trust fields of trusted-device encryption
 * (docs/trusted-devices.md), and the list's DevicePendingAuthRequest.
 */
export const DeviceResponse = Type.Object({
  object: Type.Literal('device'),
  id: Type.String(),
  userId: Type.String(),
  name: Type.String(),
  type: Type.Integer(),
  identifier: Type.String(),
  creationDate: Type.String(),
  revisionDate: Type.String(),
  isTrusted: Type.Boolean(),
  encryptedUserKey: Nullable(Type.String()),
  encryptedPublicKey: Nullable(Type.String()),
  /** The device's newest login request when it is unanswered and not expired (the list only). */
  devicePendingAuthRequest: Nullable(Type.Object({ id: Type.String(), creationDate: Type.String() })),
  lastActivityDate: Nullable(Type.String()),
});

export const KnownDeviceHeaders = Type.Object({
  'x-request-email': Type.String({ minLength: 1, maxLength: 2000, description: 'The account email, base64url-encoded' }),
  'x-device-identifier': Type.String({ minLength: 1, maxLength: 100 }),
});


export function toDeviceResponse(row: DeviceRow, pending: { id: string; creationDate: string } | null = null): Static<typeof DeviceResponse> {
  return {
    object: 'device',
    id: row.id,
    userId: row.user_id,
    name: row.name,
    type: row.type,
    identifier: row.identifier,
    creationDate: row.creation_date,
    revisionDate: row.revision_date,
    isTrusted: isTrusted(row),
    encryptedUserKey: row.encrypted_user_key,
    encryptedPublicKey: row.encrypted_public_key,
    devicePendingAuthRequest: pending,
    // Each login updates the device row, so its revision date is when it was last used to log in.
    lastActivityDate: row.revision_date,
  };
}
