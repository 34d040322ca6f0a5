import { Type, type Static } from 'typebox';
import { Email, Guid, KeyIdString, Nullable } from '../../http/schemas.js';
import { accountSalt, MasterPasswordAuthenticationBody, MasterPasswordUnlockBody } from '../../platform/auth/master-password.js';
import type { UserRow } from '../../platform/auth/users.repository.js';
import type { KdfType } from '../../platform/auth/kdf.js';
import type { MasterPasswordPolicyResponse } from '../policies/policies.service.js';
import { AccountKeysRequest, hasV2Keys } from './account-keys.js';

const Hash = Type.String({ minLength: 1, maxLength: 1000 });
const Enc = Type.String({ minLength: 1, maxLength: 10_000 });
const Hint = Nullable(Type.String({ maxLength: 50 }));
const Int = Type.Integer();
const OptionalInt = Type.Optional(Nullable(Type.Integer()));

const KdfObject = Type.Object({
  kdfType: Type.Integer(),
  iterations: Int,
  memory: OptionalInt,
  parallelism: OptionalInt,
});

const KeyPair = Type.Object({ publicKey: Type.String({ minLength: 1, maxLength: 10_000 }), encryptedPrivateKey: Enc });

/** POST /identity/accounts/register/finish, as current clients send it (both field sets). */
export const RegisterFinishBody = Type.Object({
  email: Email,
  name: Type.Optional(Nullable(Type.String({ maxLength: 50 }))),
  masterPasswordHash: Type.Optional(Hash),
  masterPasswordHint: Type.Optional(Hint),
  userSymmetricKey: Type.Optional(Enc),
  userAsymmetricKeys: Type.Optional(KeyPair),
  kdf: Type.Optional(Type.Integer()),
  kdfIterations: Type.Optional(Int),
  kdfMemory: OptionalInt,
  kdfParallelism: OptionalInt,
  masterPasswordAuthentication: Type.Optional(
    Type.Object({ salt: Type.String({ minLength: 1 }), kdf: KdfObject, masterPasswordAuthenticationHash: Hash }),
  ),
  masterPasswordUnlock: Type.Optional(
    Type.Object({ salt: Type.String({ minLength: 1 }), kdf: KdfObject, masterKeyWrappedUserKey: Enc, containedKeyId: Type.Optional(Nullable(KeyIdString)) }),
  ),
  /** The account keys of 2025.8+ clients; a version-2 registration (the SDK's) sends only these. */
  accountKeys: Type.Optional(Nullable(AccountKeysRequest)),
  emailVerificationToken: Type.Optional(Nullable(Type.String())),
  orgInviteToken: Type.Optional(Nullable(Type.String())),
  organizationUserId: Type.Optional(Nullable(Type.String())),
  acceptEmergencyAccessInviteToken: Type.Optional(Nullable(Type.String({ maxLength: 4000 }))),
  acceptEmergencyAccessId: Type.Optional(Nullable(Type.String())),
});
export type RegisterFinishBody = Static<typeof RegisterFinishBody>;

/** POST /api/accounts/register: the older flat shape (spec; vaultwarden). */
export const RegisterBody = Type.Object({
  email: Email,
  name: Type.Optional(Nullable(Type.String({ maxLength: 50 }))),
  masterPasswordHash: Hash,
  masterPasswordHint: Type.Optional(Hint),
  key: Enc,
  keys: Type.Optional(Nullable(KeyPair)),
  kdf: Type.Optional(Type.Integer()),
  kdfIterations: Type.Optional(Int),
  kdfMemory: OptionalInt,
  kdfParallelism: OptionalInt,
  organizationUserId: Type.Optional(Nullable(Type.String())),
  token: Type.Optional(Nullable(Type.String())),
});
export type RegisterBody = Static<typeof RegisterBody>;

export const SendVerificationEmailBody = Type.Object({
  email: Email,
  name: Type.Optional(Nullable(Type.String({ maxLength: 50 }))),
  receiveMarketingEmails: Type.Optional(Type.Boolean()),
});

export const VerificationEmailClickedBody = Type.Object({
  email: Email,
  emailVerificationToken: Type.String({ minLength: 1, maxLength: 4000 }),
});

export const RegisterResponse = Type.Object({ object: Type.Literal('registerFinish'), captchaBypassToken: Type.Null() });

export const PreloginBody = Type.Object({ email: Type.String({ maxLength: 256 }) });

export const PreloginResponse = Type.Object({
  kdf: Type.Integer(),
  kdfIterations: Type.Integer(),
  kdfMemory: Nullable(Type.Integer()),
  kdfParallelism: Nullable(Type.Integer()),
  kdfSettings: Type.Object({
    kdfType: Type.Integer(),
    iterations: Type.Integer(),
    memory: Nullable(Type.Integer()),
    parallelism: Nullable(Type.Integer()),
  }),
  salt: Type.String(),
});

const PublicKeyEncryptionKeyPair = Type.Object({
  wrappedPrivateKey: Type.String(),
  publicKey: Type.String(),
  signedPublicKey: Nullable(Type.String()),
  object: Type.Literal('publicKeyEncryptionKeyPair'),
});

/**
 * The official PrivateKeysResponseModel. Inner names are camelCase even inside the PascalCase
 * token response: the CLI checks them with `in`. The signature pair and the security state are
 * null for an account of version-1 keys.
 */
export const AccountKeys = Type.Object({
  publicKeyEncryptionKeyPair: PublicKeyEncryptionKeyPair,
  signatureKeyPair: Nullable(Type.Object({ wrappedSigningKey: Type.String(), verifyingKey: Type.String(), object: Type.Literal('signatureKeyPair') })),
  securityState: Nullable(Type.Object({ securityState: Type.String(), securityVersion: Type.Integer() })),
  object: Type.Literal('privateKeys'),
});

export const ProfileResponse = Type.Object({
  object: Type.Literal('profile'),
  id: Type.String(),
  name: Nullable(Type.String()),
  email: Type.String(),
  emailVerified: Type.Boolean(),
  premium: Type.Boolean(),
  premiumFromOrganization: Type.Boolean(),
  culture: Type.String(),
  twoFactorEnabled: Type.Boolean(),
  key: Nullable(Type.String()),
  privateKey: Nullable(Type.String()),
  accountKeys: Nullable(AccountKeys),
  securityStamp: Type.String(),
  forcePasswordReset: Type.Boolean(),
  usesKeyConnector: Type.Boolean(),
  avatarColor: Nullable(Type.String()),
  creationDate: Type.String(),
  verifyDevices: Type.Boolean(),
  organizations: Type.Array(Type.Unknown()),
  /** Confirmed and Accepted memberships: the 2026 clients prefer it to `organizations` when present. */
  organizationsNew: Type.Array(Type.Unknown()),
  providers: Type.Array(Type.Unknown()),
  providerOrganizations: Type.Array(Type.Unknown()),
});

export const ProfileBody = Type.Object({
  name: Type.Optional(Nullable(Type.String({ maxLength: 50 }))),
  culture: Type.Optional(Nullable(Type.String({ maxLength: 10 }))),
  masterPasswordHint: Type.Optional(Hint),
  avatarColor: Type.Optional(Nullable(Type.String({ maxLength: 7 }))),
});

/** The official UpdateAvatarRequestModel: a `#rrggbb` colour, or null for the default. */
export const AvatarBody = Type.Object({
  avatarColor: Nullable(Type.String({ maxLength: 7 })),
});

export const SecretVerificationBody = Type.Object({
  masterPasswordHash: Type.Optional(Nullable(Hash)),
  otp: Type.Optional(Nullable(Type.String())),
});

/** The official SetVerifyDevicesRequestModel: the secret check plus the new setting. */
export const VerifyDevicesBody = Type.Object({
  ...SecretVerificationBody.properties,
  verifyDevices: Type.Boolean(),
});

/**
 * The official PasswordRequestModel of `POST /accounts/password`: the current hash, then the new
 * password either as the 2025–2026 `authenticationData` and `unlockData` objects or as the
 * older flat `newMasterPasswordHash` and `key` (which clients of 2025 send alongside the
 * objects). The service says which are required.
 */
export const PasswordChangeBody = Type.Object({
  masterPasswordHash: Hash,
  newMasterPasswordHash: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 300 }))),
  key: Type.Optional(Nullable(Enc)),
  masterPasswordHint: Type.Optional(Hint),
  authenticationData: Type.Optional(MasterPasswordAuthenticationBody),
  unlockData: Type.Optional(MasterPasswordUnlockBody),
});
export type PasswordChangeBody = Static<typeof PasswordChangeBody>;

/**
 * `POST /accounts/kdf`: the current hash and both objects, with the new KDF. The official server
 * declares the password change's model here but its ChangeKdfCommand reads only these three, so
 * the flat fields and the hint that clients send beside them are dropped, not stored.
 */
export const KdfChangeBody = Type.Object({
  masterPasswordHash: Hash,
  authenticationData: MasterPasswordAuthenticationBody,
  unlockData: MasterPasswordUnlockBody,
});
export type KdfChangeBody = Static<typeof KdfChangeBody>;

/** `POST /accounts/delete-recover` (DeleteRecoverRequestModel): the address to mail the link to. */
export const DeleteRecoverBody = Type.Object({ email: Email });

/** `POST /accounts/delete-recover-token` (VerifyDeleteRecoverRequestModel), from the mailed link. */
export const VerifyDeleteRecoverBody = Type.Object({ userId: Guid, token: Type.String({ minLength: 1, maxLength: 4096 }) });

/** The official KeysRequestModel: the flat pair, and the version-2 keys with their user key's id from 2025.11 clients. */
export const KeysBody = Type.Object({
  publicKey: Type.String({ minLength: 1, maxLength: 10_000 }),
  encryptedPrivateKey: Enc,
  accountKeys: Type.Optional(Nullable(AccountKeysRequest)),
  userKeyId: Type.Optional(Nullable(KeyIdString)),
});
export type KeysBody = Static<typeof KeysBody>;

export const KeysResponse = Type.Object({
  object: Type.Literal('keys'),
  key: Nullable(Type.String()),
  publicKey: Nullable(Type.String()),
  privateKey: Nullable(Type.String()),
  accountKeys: Nullable(AccountKeys),
});

export const ApiKeyResponse = Type.Object({ object: Type.Literal('apiKey'), apiKey: Type.String(), revisionDate: Type.String() });

export const UserKeyIdBody = Type.Object({ userKeyId: KeyIdString });

export const UserPublicKeyResponse = Type.Object({ object: Type.Literal('userKey'), userId: Type.String(), publicKey: Nullable(Type.String()) });

export const KdfJson = Type.Object({
  kdfType: Type.Integer(),
  iterations: Type.Integer(),
  memory: Nullable(Type.Integer()),
  parallelism: Nullable(Type.Integer()),
});

export const UserDecryption = Type.Object({
  masterPasswordUnlock: Nullable(
    Type.Object({
      kdf: KdfJson,
      masterKeyEncryptedUserKey: Nullable(Type.String()),
      masterKeyWrappedUserKey: Nullable(Type.String()),
      salt: Type.String(),
      containedKeyId: Nullable(Type.String()),
    }),
  ),
  userKeyId: Nullable(Type.String()),
});

const bool = (value: boolean | number) => Boolean(value);

export function accountKeysOf(user: UserRow): Static<typeof AccountKeys> | null {
  if (!user.public_key || !user.private_key) return null;
  // As the official server: the signature pair and the security state only when both are there.
  const v2 = hasV2Keys(user);
  return {
    publicKeyEncryptionKeyPair: {
      wrappedPrivateKey: user.private_key,
      publicKey: user.public_key,
      signedPublicKey: user.signed_public_key,
      object: 'publicKeyEncryptionKeyPair',
    },
    signatureKeyPair: v2 ? { wrappedSigningKey: user.wrapped_signing_key as string, verifyingKey: user.verifying_key as string, object: 'signatureKeyPair' } : null,
    securityState: v2 ? { securityState: user.security_state as string, securityVersion: user.security_version as number } : null,
    object: 'privateKeys',
  };
}

export function kdfJson(user: UserRow): Static<typeof KdfJson> {
  return { kdfType: user.kdf, iterations: user.kdf_iterations, memory: user.kdf_memory, parallelism: user.kdf_parallelism };
}

export function toKeysResponse(user: UserRow): Static<typeof KeysResponse> {
  return { object: 'keys', key: user.key, publicKey: user.public_key, privateKey: user.private_key, accountKeys: accountKeysOf(user) };
}

export function toProfileResponse(user: UserRow, organizations: unknown[], twoFactorEnabled: boolean, organizationsNew: unknown[]): Static<typeof ProfileResponse> {
  return {
    object: 'profile',
    id: user.id,
    name: user.name,
    email: user.email,
    emailVerified: bool(user.email_verified),
    premium: bool(user.premium),
    premiumFromOrganization: false,
    culture: user.culture,
    twoFactorEnabled,
    key: user.key,
    privateKey: user.private_key,
    accountKeys: accountKeysOf(user),
    securityStamp: user.security_stamp,
    forcePasswordReset: bool(user.force_password_reset),
    usesKeyConnector: false,
    avatarColor: user.avatar_color,
    creationDate: user.creation_date,
    verifyDevices: bool(user.verify_devices),
    organizations,
    organizationsNew,
    providers: [],
    providerOrganizations: [],
  };
}

/** Sync's `userDecryption`: returning `userKeyId` spares the CLI its key-id backfill. */
export function toUserDecryption(user: UserRow): Static<typeof UserDecryption> {
  return {
    masterPasswordUnlock: user.master_password_hash
      ? {
          kdf: kdfJson(user),
          masterKeyEncryptedUserKey: user.key,
          masterKeyWrappedUserKey: user.key,
          salt: accountSalt(user),
          containedKeyId: user.user_key_id,
        }
      : null,
    userKeyId: user.user_key_id,
  };
}

export function preloginOf(kdf: KdfType, iterations: number, memory: number | null, parallelism: number | null, salt: string) {
  return {
    kdf,
    kdfIterations: iterations,
    kdfMemory: memory,
    kdfParallelism: parallelism,
    kdfSettings: { kdfType: kdf, iterations, memory, parallelism },
    salt,
  };
}

/** What `/accounts/verify-password` answers: the strictest master password policy of the caller's organizations. */
export const VerifiedPasswordPolicyResponse = Type.Object({
  object: Type.Literal('masterPasswordPolicy'),
  minComplexity: Nullable(Type.Integer()),
  minLength: Nullable(Type.Integer()),
  requireLower: Nullable(Type.Boolean()),
  requireUpper: Nullable(Type.Boolean()),
  requireNumbers: Nullable(Type.Boolean()),
  requireSpecial: Nullable(Type.Boolean()),
  enforceOnLogin: Nullable(Type.Boolean()),
});

/** The token response's PascalCase policy, in the camelCase of the API service. */
export function toVerifiedPasswordPolicy(policy: MasterPasswordPolicyResponse): Static<typeof VerifiedPasswordPolicyResponse> {
  return {
    object: 'masterPasswordPolicy',
    minComplexity: policy.MinComplexity ?? null,
    minLength: policy.MinLength ?? null,
    requireLower: policy.RequireLower ?? null,
    requireUpper: policy.RequireUpper ?? null,
    requireNumbers: policy.RequireNumbers ?? null,
    requireSpecial: policy.RequireSpecial ?? null,
    enforceOnLogin: policy.EnforceOnLogin ?? null,
  };
}
