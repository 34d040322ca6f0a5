import { Type, type Static } from 'typebox';
import { Nullable, NullableEncString } from '../../http/schemas.js';
import { accountSalt, MasterPasswordAuthenticationBody, MasterPasswordUnlockBody } from '../../platform/auth/master-password.js';
import type { MemberWithAccount } from './account-recovery.repository.js';

const Hash = Type.String({ minLength: 1, maxLength: 300 });
const OptionalHash = Type.Optional(Nullable(Hash));

/**
 * The official OrganizationUserResetPasswordEnrollmentRequestModel: the member's user key wrapped
 * with the organization's public key (null withdraws), and the member's master password hash,
 * which enrolling needs and withdrawing does not.
 */
export const EnrollmentBody = Type.Object({
  resetPasswordKey: NullableEncString(10_000),
  masterPasswordHash: Type.Optional(Nullable(Type.String({ maxLength: 1000 }))),
});
export type EnrollmentBody = Static<typeof EnrollmentBody>;

/**
 * The official OrganizationUserResetPasswordRequestModel: what to reset, and the new master
 * password either as the 2026 authentication and unlock objects or as the obsolete
 * `newMasterPasswordHash` and `key`, which clients before 2026.8 still send.
 */
export const RecoverAccountBody = Type.Object({
  resetMasterPassword: Type.Optional(Type.Boolean()),
  resetTwoFactor: Type.Optional(Type.Boolean()),
  newMasterPasswordHash: OptionalHash,
  key: NullableEncString(10_000),
  authenticationData: Type.Optional(Nullable(MasterPasswordAuthenticationBody)),
  unlockData: Type.Optional(Nullable(MasterPasswordUnlockBody)),
});
export type RecoverAccountBody = Static<typeof RecoverAccountBody>;

/** The deprecated `…/reset-password` body (web vaults before 2026.4.2): a new master password only. */
export const ResetPasswordBody = Type.Object({
  newMasterPasswordHash: OptionalHash,
  key: NullableEncString(10_000),
  authenticationData: Type.Optional(Nullable(MasterPasswordAuthenticationBody)),
  unlockData: Type.Optional(Nullable(MasterPasswordUnlockBody)),
});

/** The official UpdateTempPasswordRequestModel. */
export const UpdateTempPasswordBody = Type.Object({
  newMasterPasswordHash: OptionalHash,
  key: NullableEncString(10_000),
  masterPasswordHint: Type.Optional(Nullable(Type.String({ maxLength: 50 }))),
  authenticationData: Type.Optional(Nullable(MasterPasswordAuthenticationBody)),
  unlockData: Type.Optional(Nullable(MasterPasswordUnlockBody)),
});
export type UpdateTempPasswordBody = Static<typeof UpdateTempPasswordBody>;

/** A new master password in either form the clients send. */
export type NewPasswordPayload = Pick<RecoverAccountBody, 'newMasterPasswordHash' | 'key' | 'authenticationData' | 'unlockData'>;

/** The official OrganizationUserResetPasswordDetailsResponseModel. */
export const ResetPasswordDetailsResponse = Type.Object({
  object: Type.Literal('organizationUserResetPasswordDetails'),
  organizationUserId: Type.String(),
  kdf: Type.Integer(),
  kdfIterations: Type.Integer(),
  kdfMemory: Nullable(Type.Integer()),
  kdfParallelism: Nullable(Type.Integer()),
  masterPasswordSalt: Type.String(),
  resetPasswordKey: Nullable(Type.String()),
  encryptedPrivateKey: Nullable(Type.String()),
});
export type ResetPasswordDetailsResponse = Static<typeof ResetPasswordDetailsResponse>;

export function toResetPasswordDetails(member: MemberWithAccount, organizationPrivateKey: string | null): ResetPasswordDetailsResponse {
  return {
    object: 'organizationUserResetPasswordDetails',
    organizationUserId: member.id,
    kdf: member.kdf,
    kdfIterations: member.kdf_iterations,
    kdfMemory: member.kdf_memory,
    kdfParallelism: member.kdf_parallelism,
    masterPasswordSalt: accountSalt(member),
    resetPasswordKey: member.reset_password_key,
    encryptedPrivateKey: organizationPrivateKey,
  };
}
