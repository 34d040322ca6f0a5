import { describe, expect, it } from 'vitest';
import { BadRequest } from '../../http/errors.js';
import { agreedMasterPassword, type MasterPasswordAuthenticationBody, type MasterPasswordUnlockBody } from './master-password.js';

/**
 * agreedMasterPassword is what every flow that takes the 2026 objects calls (password and KDF
 * change, key rotation, account recovery, emergency takeover), so each refusal is checked here
 * once for all of them, without a server.
 */
const user = { master_password_salt: null, email: 'Ada@Example.com', kdf: 0, kdf_iterations: 600_000, kdf_memory: null, kdf_parallelism: null };
const kdf = { kdfType: 0, iterations: 600_000, memory: null, parallelism: null };
const authentication: MasterPasswordAuthenticationBody = { kdf, masterPasswordAuthenticationHash: 'aGFzaA==', salt: 'ada@example.com' };
const unlock: MasterPasswordUnlockBody = { kdf, masterKeyWrappedUserKey: '2.aXZpdml2aXZpdml2aXZpdg==|Y3Q=|bWFjbWFjbWFjbWFjbWFjbWFjbWFjbWFjbWFjbWFjbWE=', salt: 'ada@example.com' };
const fields = { authentication: 'authenticationData', unlock: 'unlockData' };

function refusedField(run: () => unknown): string[] {
  try {
    run();
  } catch (error) {
    if (error instanceof BadRequest) return Object.keys(error.validationErrors ?? {});
    throw error;
  }
  throw new Error('not refused');
}

describe('agreedMasterPassword', () => {
  it('answers the agreed hash, wrapped key and validated KDF', () => {
    expect(agreedMasterPassword(user, authentication, unlock, fields)).toEqual({
      kdf: { kdf: 0, iterations: 600_000, memory: null, parallelism: null },
      authenticationHash: authentication.masterPasswordAuthenticationHash,
      wrappedUserKey: unlock.masterKeyWrappedUserKey,
    });
  });

  it('refuses a wrapped user key that is no EncString, for every caller', () => {
    expect(refusedField(() => agreedMasterPassword(user, authentication, { ...unlock, masterKeyWrappedUserKey: 'plain' }, fields))).toEqual(['unlockData.masterKeyWrappedUserKey']);
    expect(refusedField(() => agreedMasterPassword(user, authentication, { ...unlock, masterKeyWrappedUserKey: 'plain' }, { ...fields, unlock: 'x.unlock' }))).toEqual(['x.unlock.masterKeyWrappedUserKey']);
  });

  it('compares the salt exactly with the account\'s trimmed, lower-cased email', () => {
    for (const salt of ['Ada@Example.com', ' ada@example.com', 'ada@example.org']) {
      expect(refusedField(() => agreedMasterPassword(user, { ...authentication, salt }, { ...unlock, salt }, fields)), salt).toEqual(['unlockData.salt']);
    }
  });
});
