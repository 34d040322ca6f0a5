import { Type, type Static } from 'typebox';
import { EncString, Guid, Nullable } from '../../http/schemas.js';
import { CipherRequest } from '../vault/ciphers.schemas.js';
import { SendRequest } from '../sends/sends.schemas.js';
import { AccountKeysRequest } from '../accounts/account-keys.js';
import { MAX_PASSKEYS } from '../passkey-login/passkeys.schemas.js';
import type { prfPasskeys } from '../passkey-login/passkeys.repository.js';
import { OtherDeviceKeysUpdate } from '../devices/device-trust.schemas.js';
import type { DeviceRow } from '../../platform/auth/users.repository.js';

/**
 * The bounds of one rotation, fixed in the code (not settings). The whole body is also held to
 * BODY_LIMIT_BYTES (16 MiB by default), which a vault of 5,000 typical items fits in; an account
 * with more items than these, or a larger body than the operator allows, cannot rotate its key
 * (docs/key-rotation.md).
 */
export const ROTATION_LIMITS = { ciphers: 20_000, folders: 5_000, sends: 1_000, emergencyAccess: 200, organizations: 500, passkeys: MAX_PASSKEYS, devices: 100 };

const OptionalInt = Type.Optional(Nullable(Type.Integer()));

/** MasterPasswordUnlockAndAuthenticationDataModel: the new master password, flat, with the KDF it was made with. */
const MasterPasswordUnlockData = Type.Object({
  kdfType: Type.Integer(),
  kdfIterations: Type.Integer(),
  kdfMemory: OptionalInt,
  kdfParallelism: OptionalInt,
  email: Type.String({ minLength: 1, maxLength: 256 }),
  masterKeyAuthenticationHash: Type.String({ minLength: 1, maxLength: 300 }),
  masterKeyEncryptedUserKey: EncString(10_000, { description: 'The new user key wrapped with the master key' }),
  masterPasswordHint: Type.Optional(Nullable(Type.String({ maxLength: 50 }))),
  masterPasswordSalt: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 256 }))),
});

/** Each list a rotation re-wraps; optional, as older clients leave out the ones they have nothing for. */
const list = <T extends Parameters<typeof Type.Array>[0]>(item: T, maxItems: number) => Type.Optional(Type.Array(item, { maxItems }));

const UnlockData = Type.Object({
  masterPasswordUnlockData: MasterPasswordUnlockData,
  emergencyAccessUnlockData: list(Type.Object({ id: Guid, keyEncrypted: EncString(10_000, { description: "The new user key wrapped with the grantee's public key" }) }), ROTATION_LIMITS.emergencyAccess),
  organizationAccountRecoveryUnlockData: list(
    Type.Object({ organizationId: Guid, resetPasswordKey: EncString(10_000, { description: "The new user key wrapped with the organization's public key" }) }),
    ROTATION_LIMITS.organizations,
  ),
  /** WebAuthnLoginRotateKeyRequestModel: for each passkey that unlocks the vault, the new user key wrapped for its PRF key pair. */
  passkeyUnlockData: list(
    Type.Object({
      id: Guid,
      encryptedUserKey: EncString(2000, { description: "The new user key wrapped with the passkey's PRF public key" }),
      encryptedPublicKey: EncString(2000, { description: "The passkey's PRF public key encrypted with the new user key" }),
    }),
    ROTATION_LIMITS.passkeys,
  ),
  /** OtherDeviceKeysUpdateRequestModel: for each trusted device, the new user key wrapped with its public key, and that key wrapped with the new user key. */
  deviceKeyUnlockData: list(OtherDeviceKeysUpdate, ROTATION_LIMITS.devices),
});

const AccountData = Type.Object({
  ciphers: Type.Array(Type.Object({ ...CipherRequest.properties, id: Guid }), { maxItems: ROTATION_LIMITS.ciphers }),
  folders: Type.Array(Type.Object({ id: Guid, name: EncString(1000) }), { maxItems: ROTATION_LIMITS.folders }),
  sends: Type.Array(Type.Object({ ...SendRequest.properties, id: Guid }), { maxItems: ROTATION_LIMITS.sends }),
});

/** RotateUserAccountKeysAndDataRequestModel. */
export const RotateUserAccountKeysRequest = Type.Object({
  oldMasterKeyAuthenticationHash: Type.String({ minLength: 1, maxLength: 1000 }),
  accountUnlockData: UnlockData,
  /** AccountKeysRequestModel: the flat pair of clients before 2025.8, or the pair object, with the version-2 keys. */
  accountKeys: AccountKeysRequest,
  accountData: AccountData,
  /**
   * The new user key's id (the official KeyId): the SDK sends it for v2 keys, but the 2026 clients
   * also derive one for a v1 key and report it (`PUT /accounts/key-id`), so it is kept when sent.
   */
  newUserKeyId: Type.Optional(Nullable(Type.String({ pattern: '^[0-9a-fA-F]{32}$' }))),
});
export type RotateUserAccountKeysRequest = Static<typeof RotateUserAccountKeysRequest>;
export type RotationCipher = RotateUserAccountKeysRequest['accountData']['ciphers'][number];
export type RotationSend = RotateUserAccountKeysRequest['accountData']['sends'][number];

const OrganizationPasswordResetKeyData = Type.Object({
  object: Type.Literal('organizationPasswordResetKeyData'),
  organizationId: Guid,
  organizationName: Type.String(),
  organizationPublicKey: Type.String(),
});

const EmergencyAccessKeyData = Type.Object({
  object: Type.Literal('emergencyAccessKeyData'),
  id: Guid,
  granteeId: Nullable(Guid),
  granteeName: Nullable(Type.String()),
  granteeEmail: Nullable(Type.String()),
  publicKey: Type.String(),
});

/** PasskeyKeyDataResponseModel: a passkey that unlocks the vault, with the keys the client re-wraps. */
const PasskeyKeyData = Type.Object({
  object: Type.Literal('passkeyKeyData'),
  id: Guid,
  encryptedPublicKey: Type.String(),
  encryptedUserKey: Type.String(),
});

/** KeyRotationDataResponseModel: what the new user key must be wrapped for. Every list is always present. */
export const KeyRotationDataResponse = Type.Object({
  object: Type.Literal('keyRotationData'),
  organizationPasswordResetKeyData: Type.Array(OrganizationPasswordResetKeyData),
  emergencyAccessKeyData: Type.Array(EmergencyAccessKeyData),
  trustedDeviceKeyData: Type.Array(Type.Object({ object: Type.Literal('trustedDeviceKeyData'), id: Guid, encryptedPublicKey: Type.String(), encryptedUserKey: Type.String() })),
  passkeyKeyData: Type.Array(PasskeyKeyData),
});
export type KeyRotationDataResponse = Static<typeof KeyRotationDataResponse>;

export interface RecoveryEnrollmentRow {
  organization_id: string;
  name: string;
  public_key: string | null;
}

export interface GrantKeyRow {
  id: string;
  grantee_id: string | null;
  grantee_name: string | null;
  grantee_email: string | null;
  grantee_public_key: string | null;
}

/**
 * What the new user key can be wrapped for, and so what a rotation requires: an enrollment whose
 * organization has a public key, a grant whose grantee exists and has one. The rotation data lists
 * exactly these and the rotation requires exactly these, so a client that wraps what it was given
 * is never refused for one it could not wrap.
 */
export const canWrapFor = {
  enrollment: (e: Pick<RecoveryEnrollmentRow, 'public_key'>): boolean => Boolean(e.public_key),
  grant: (g: Pick<GrantKeyRow, 'grantee_id' | 'grantee_public_key'>): boolean => Boolean(g.grantee_id && g.grantee_public_key),
};

/** A passkey that unlocks the vault: all three of its wrapped keys are stored. */
export type PasskeyKeyRow = Pick<Awaited<ReturnType<typeof prfPasskeys>>[number], 'id' | 'encrypted_user_key' | 'encrypted_public_key'>;

/**
 * The rotation data as the official KeyRotationDataQuery builds it: organizations with a public
 * key, grants whose grantee has one (a wrap needs the key), and the passkeys that unlock the vault
 * (the client decrypts each one's public key with the old user key and wraps the new key with it),
 * and the trusted devices, whose public keys the client reads the same way.
 */
export function toKeyRotationDataResponse(
  enrollments: readonly RecoveryEnrollmentRow[],
  grants: readonly GrantKeyRow[],
  passkeys: readonly PasskeyKeyRow[],
  trustedDevices: readonly DeviceRow[] = [],
): KeyRotationDataResponse {
  return {
    object: 'keyRotationData',
    organizationPasswordResetKeyData: enrollments
      .filter(canWrapFor.enrollment)
      .map((e) => ({ object: 'organizationPasswordResetKeyData', organizationId: e.organization_id, organizationName: e.name, organizationPublicKey: e.public_key as string })),
    emergencyAccessKeyData: grants
      .filter(canWrapFor.grant)
      .map((g) => ({
        object: 'emergencyAccessKeyData',
        id: g.id,
        granteeId: g.grantee_id,
        granteeName: g.grantee_name,
        granteeEmail: g.grantee_email,
        publicKey: g.grantee_public_key as string,
      })),
    trustedDeviceKeyData: trustedDevices.map((d) => ({
      object: 'trustedDeviceKeyData',
      id: d.id,
      encryptedPublicKey: d.encrypted_public_key as string,
      encryptedUserKey: d.encrypted_user_key as string,
    })),
    passkeyKeyData: passkeys.map((p) => ({
      object: 'passkeyKeyData',
      id: p.id,
      encryptedPublicKey: p.encrypted_public_key,
      encryptedUserKey: p.encrypted_user_key,
    })),
  };
}
