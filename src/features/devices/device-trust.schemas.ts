import { Type, type Static } from 'typebox';
import { EncString, Guid, Nullable } from '../../http/schemas.js';
import type { DeviceRow } from '../../platform/auth/users.repository.js';

/**
 * The wrapped keys' bounds: the official response model holds the user key and public key to
 * 2,000 characters; the private key (an RSA-2048 key wrapped with the device key) is larger.
 */
const WrappedUserKey = EncString(2000, { description: "The user key wrapped with the device's public key (RSA-OAEP, type 4)" });
const WrappedPublicKey = EncString(2000, { description: "The device's public key wrapped with the user key" });
const WrappedPrivateKey = EncString(10_000, { description: "The device's private key wrapped with its device key, which only the device holds" });

/** The official DeviceKeysRequestModel: what a device sends when it becomes trusted. */
export const DeviceKeysBody = Type.Object({
  encryptedUserKey: WrappedUserKey,
  encryptedPublicKey: WrappedPublicKey,
  encryptedPrivateKey: WrappedPrivateKey,
});
export type DeviceKeysBody = Static<typeof DeviceKeysBody>;

/** The official DeviceKeysUpdateRequestModel: a trusted device's keys re-wrapped for a new user key. */
const DeviceKeysUpdate = Type.Object({ encryptedPublicKey: WrappedPublicKey, encryptedUserKey: WrappedUserKey });
/** OtherDeviceKeysUpdateRequestModel: the same, for another of the account's devices. */
export const OtherDeviceKeysUpdate = Type.Object({ deviceId: Guid, ...DeviceKeysUpdate.properties });
export type OtherDeviceKeysUpdate = Static<typeof OtherDeviceKeysUpdate>;

/** The devices one account may re-wrap at once (also the key rotation's bound). */
export const MAX_TRUSTED_DEVICES = 100;

/** The official UpdateDevicesTrustRequestModel, a SecretVerificationRequestModel. */
export const UpdateDevicesTrustBody = Type.Object({
  masterPasswordHash: Type.Optional(Nullable(Type.String({ maxLength: 300 }))),
  secret: Type.Optional(Nullable(Type.String({ maxLength: 300 }))),
  otp: Type.Optional(Nullable(Type.String({ maxLength: 300 }))),
  authRequestAccessCode: Type.Optional(Nullable(Type.String({ maxLength: 300 }))),
  currentDevice: DeviceKeysUpdate,
  otherDevices: Type.Optional(Nullable(Type.Array(OtherDeviceKeysUpdate, { maxItems: MAX_TRUSTED_DEVICES }))),
});
export type UpdateDevicesTrustBody = Static<typeof UpdateDevicesTrustBody>;

/** The official UntrustDevicesRequestModel. */
export const UntrustDevicesBody = Type.Object({ devices: Type.Array(Guid, { maxItems: MAX_TRUSTED_DEVICES }) });

/** The official ProtectedDeviceResponseModel (`retrieve-keys`). */
export const ProtectedDeviceResponse = Type.Object({
  object: Type.Literal('protectedDevice'),
  id: Type.String(),
  name: Type.String(),
  type: Type.Integer(),
  identifier: Type.String(),
  creationDate: Type.String(),
  encryptedUserKey: Nullable(Type.String()),
  encryptedPublicKey: Nullable(Type.String()),
});

export function toProtectedDeviceResponse(row: DeviceRow): Static<typeof ProtectedDeviceResponse> {
  return {
    object: 'protectedDevice',
    id: row.id,
    name: row.name,
    type: row.type,
    identifier: row.identifier,
    creationDate: row.creation_date,
    encryptedUserKey: row.encrypted_user_key,
    encryptedPublicKey: row.encrypted_public_key,
  };
}

/** The official DeviceExtensions.IsTrusted: all three wrapped keys are there. */
export function isTrusted(row: Pick<DeviceRow, 'encrypted_user_key' | 'encrypted_public_key' | 'encrypted_private_key'>): boolean {
  return Boolean(row.encrypted_user_key && row.encrypted_public_key && row.encrypted_private_key);
}

/** What untrusting a device writes: none of its keys. */
export const NO_DEVICE_KEYS = { encrypted_user_key: null, encrypted_public_key: null, encrypted_private_key: null } as const;
