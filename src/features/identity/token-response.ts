import type { Db } from '../../db/database.js';
import type { DeviceRow, UserRow } from '../../platform/auth/users.repository.js';
import type { IssuedTokens } from '../../platform/auth/tokens.js';
import { accountSalt } from '../../platform/auth/master-password.js';
import { accountKeysOf, kdfJson } from '../accounts/accounts.schemas.js';
import { masterPasswordPolicyFor } from '../policies/policies.service.js';

/** What a login was, for the ways to unlock it offers beyond the master password. */
export interface LoginFacts {
  user: UserRow;
  /** The device row of a user login; null on a refresh, which names no device. */
  device: DeviceRow | null;
  /** The organization whose single sign-on this login went through, if it did. */
  ssoOrganizationId?: string;
}

/**
 * More ways to unlock, answered in `UserDecryptionOptions` on every user login and refresh: a
 * trusted device's keys (`TrustedDeviceOption`) when the account's organization uses trusted
 * devices. Each provider answers the fields it owns; they are merged in order.
 */
export type DecryptionOptions = (login: LoginFacts) => Promise<Record<string, unknown>>;

/** The token response with the account fields the official clients require. */
export function createTokenResponses(deps: { db: Db; decryptionOptions?: DecryptionOptions }) {
  const { db } = deps;
  return async function userTokenResponse(
    login: LoginFacts,
    tokens: IssuedTokens,
    scope: string,
    extra: Record<string, unknown> = {},
    /** More ways to unlock (a passkey login's WebAuthnPrfOption). */
    decryption: Record<string, unknown> = {},
  ): Promise<Record<string, unknown>> {
    const { user } = login;
    const kdf = kdfJson(user);
    const accountKeys = accountKeysOf(user);
    const hasMasterPassword = Boolean(user.master_password_hash);
    const more = deps.decryptionOptions ? await deps.decryptionOptions(login) : {};
    return {
      access_token: tokens.accessToken,
      expires_in: tokens.expiresIn,
      token_type: 'Bearer',
      ...(tokens.refreshToken ? { refresh_token: tokens.refreshToken } : {}),
      scope,
      ...(user.private_key ? { PrivateKey: user.private_key } : {}),
      ...(accountKeys ? { AccountKeys: accountKeys } : {}),
      ...(user.key ? { Key: user.key } : {}),
      Kdf: kdf.kdfType,
      KdfIterations: kdf.iterations,
      ...(kdf.memory !== null ? { KdfMemory: kdf.memory } : {}),
      ...(kdf.parallelism !== null ? { KdfParallelism: kdf.parallelism } : {}),
      // Older clients and the SDK still read ResetMasterPassword.
      ResetMasterPassword: false,
      ForcePasswordReset: Boolean(user.force_password_reset),
      MasterPasswordPolicy: await masterPasswordPolicyFor(db, user.id),
      UserDecryptionOptions: {
        HasMasterPassword: hasMasterPassword,
        // An account without a master password (single sign-on with trusted devices, or one yet
        // to set it) has nothing to unlock with one: the clients then offer the other ways.
        ...(hasMasterPassword && user.key
          ? {
              MasterPasswordUnlock: {
                Kdf: {
                  KdfType: kdf.kdfType,
                  Iterations: kdf.iterations,
                  ...(kdf.memory !== null ? { Memory: kdf.memory } : {}),
                  ...(kdf.parallelism !== null ? { Parallelism: kdf.parallelism } : {}),
                },
                MasterKeyEncryptedUserKey: user.key,
                MasterKeyWrappedUserKey: user.key,
                Salt: accountSalt(user),
                ...(user.user_key_id ? { ContainedKeyId: user.user_key_id } : {}),
              },
            }
          : {}),
        ...more,
        ...decryption,
        Object: 'userDecryptionOptions',
      },
      ...extra,
    };
  };
}
