import { randomUUID } from 'node:crypto';
import type { Clock } from '../../shared/clock.js';
import type { Db, Executor } from '../../db/database.js';
import { BadRequest, NotFound } from '../../http/errors.js';
import type { UserCaller } from '../../http/request-context.js';
import type { PasswordHasher } from '../../platform/auth/password-hasher.js';
import { verifySecret, type SecretVerificationBody } from '../../platform/auth/secret-verification.js';
import type { UserRow } from '../../platform/auth/users.repository.js';
import { stampOf, type IssuedChallenge, type PasskeyCeremony } from './passkey-ceremony.js';
import { deletePasskey, findPasskeyByCredentialId, insertPasskey, listPasskeys, spendChallenge, ssoRequired, updatePasskey } from './passkeys.repository.js';
import { MAX_PASSKEYS, toPasskeyResponse, type CreatePasskeyBody, type PasskeyResponse, type UpdatePasskeyBody } from './passkeys.schemas.js';

const SSO_REQUIRED = 'Passkeys cannot be created for your account. SSO login is required.';
const CREATE_TOKEN_INVALID = 'The token associated with your request is expired. A valid token is required to continue.';
const UPDATE_TOKEN_INVALID = 'The token associated with your request is invalid or has expired. A valid token is required to continue.';
const TOO_MANY = `Unable to complete WebAuthn registration. An account logs in with at most ${MAX_PASSKEYS} passkeys: remove one to add another.`;

/**
 * The caller's passkeys for logging in (the official WebAuthnController): list them, register one
 * (optionally with the user key wrapped for its PRF output, so it also unlocks the vault), wrap
 * the keys for a passkey registered without them, and remove one. Asking for options and removing
 * need the master password hash; the registration and key update answer the options' token.
 */
export function createPasskeyService(deps: { db: Db; clock: Clock; hasher: PasswordHasher; ceremony: PasskeyCeremony }) {
  const { db, clock, ceremony } = deps;

  const verifiedUser = (userId: string, body: SecretVerificationBody): Promise<UserRow> =>
    verifySecret(db, deps.hasher, clock, userId, body, () => BadRequest.field('masterPasswordHash', 'User verification failed.'));

  async function refuseWhenSsoRequired(userId: string): Promise<void> {
    if (await ssoRequired(db, userId)) throw new BadRequest(SSO_REQUIRED);
  }

  /**
   * Locks the user's row and refuses a token issued before the security stamp last changed: a
   * key rotation changes it, and keys the client wrapped with the old user key would never unlock.
   */
  async function refuseAfterRotation(tx: Executor, userId: string, challenge: IssuedChallenge, message: string): Promise<void> {
    const user = await tx.selectFrom('users').select('security_stamp').where('id', '=', userId).forUpdate().executeTakeFirst();
    if (!user || challenge.stamp !== stampOf(user.security_stamp)) throw BadRequest.field('token', message);
  }

  /** Spends the challenge in `tx`; a second answer to it (a replay, or a racing request) is refused like an expired token. */
  async function spend(tx: Executor, challenge: IssuedChallenge, field: string, message: string): Promise<void> {
    if (!(await spendChallenge(tx, challenge.hash, challenge.expirationDate, clock.now().toISOString()))) throw BadRequest.field(field, message);
  }

  return {
    async list({ userId }: UserCaller): Promise<PasskeyResponse[]> {
      return (await listPasskeys(db, userId)).map(toPasskeyResponse);
    },

    /** Creation options for a new passkey; refused while an organization requires single sign-on, or when the account has all it may have. */
    async attestationOptions({ userId }: UserCaller, body: SecretVerificationBody) {
      const user = await verifiedUser(userId, body);
      await refuseWhenSsoRequired(userId);
      const existing = await listPasskeys(db, userId);
      // Refused here too, before the authenticator makes a credential the server would not keep.
      if (existing.length >= MAX_PASSKEYS) throw new BadRequest(TOO_MANY);
      const { options, token } = await ceremony.creationOptions(user, existing);
      return { object: 'webauthnCredentialCreateOptions' as const, options, token };
    },

    async create({ userId }: UserCaller, body: CreatePasskeyBody): Promise<PasskeyResponse> {
      await refuseWhenSsoRequired(userId);
      const challenge = await ceremony.creationChallenge(body.token, userId);
      if (!challenge) throw BadRequest.field('token', CREATE_TOKEN_INVALID);
      const keys = [body.encryptedUserKey, body.encryptedPublicKey, body.encryptedPrivateKey];
      const given = keys.filter((key) => key !== undefined && key !== null).length;
      // A partial key set could never unlock the vault; the official server would keep it and list the passkey as only "supported".
      if (given !== 0 && given !== keys.length) throw BadRequest.field('encryptedUserKey', 'Send encryptedUserKey, encryptedPublicKey and encryptedPrivateKey together, or none of them.');
      if (given > 0 && !body.supportsPrf) throw BadRequest.field('supportsPrf', 'Only a passkey that supports PRF can hold the keys that unlock the vault.');
      const attested = await ceremony.verifyCreation(body.deviceResponse, challenge);
      if (!attested) throw BadRequest.field('deviceResponse', 'Unable to complete WebAuthn registration.');
      const now = clock.now().toISOString();
      const row = {
        id: randomUUID(),
        user_id: userId,
        name: body.name,
        credential_id: attested.credentialId,
        public_key: attested.publicKey,
        counter: attested.counter,
        type: attested.type,
        aa_guid: attested.aaGuid,
        transports: attested.transports ? JSON.stringify(attested.transports) : null,
        supports_prf: body.supportsPrf,
        encrypted_user_key: body.encryptedUserKey ?? null,
        encrypted_public_key: body.encryptedPublicKey ?? null,
        encrypted_private_key: body.encryptedPrivateKey ?? null,
        creation_date: now,
        revision_date: now,
      };
      await db.transaction().execute(async (tx) => {
        // The user's row is locked so that two registrations at once cannot both pass the limit,
        // and so that a key rotation cannot commit between this check and the insert.
        await refuseAfterRotation(tx, userId, challenge, CREATE_TOKEN_INVALID);
        const existing = await listPasskeys(tx, userId);
        if (existing.length >= MAX_PASSKEYS) throw new BadRequest(TOO_MANY);
        if (existing.some((passkey) => passkey.credential_id === attested.credentialId)) throw BadRequest.field('deviceResponse', 'This passkey is already registered.');
        await spend(tx, challenge, 'token', CREATE_TOKEN_INVALID);
        await insertPasskey(tx, row);
      });
      return toPasskeyResponse(row);
    },

    /** Assertion options (and their token, bound to the caller) for wrapping the keys of an existing passkey. */
    async assertionOptions({ userId }: UserCaller, body: SecretVerificationBody) {
      const user = await verifiedUser(userId, body);
      const { options, token } = await ceremony.assertionOptions('UpdateKeySet', user);
      return { object: 'webAuthnLoginAssertionOptions' as const, options, token };
    },

    /**
     * Stores the user key wrapped for a passkey's PRF output, after an assertion by that passkey
     * (one of the caller's, and one that supports PRF) answering the options' challenge.
     */
    async updateKeySet({ userId }: UserCaller, body: UpdatePasskeyBody): Promise<void> {
      const challenge = await ceremony.assertionChallenge(body.token, 'UpdateKeySet', userId);
      if (!challenge) throw BadRequest.field('token', UPDATE_TOKEN_INVALID);
      const assertion = JSON.stringify(body.deviceResponse);
      const claim = ceremony.claimOf(assertion);
      const passkey = claim ? await findPasskeyByCredentialId(db, userId, claim.credentialId) : undefined;
      const counter = passkey?.supports_prf ? await ceremony.verifyAssertion(assertion, challenge, passkey) : null;
      if (!passkey || counter === null) throw BadRequest.field('deviceResponse', 'Unable to update credential.');
      await db.transaction().execute(async (tx) => {
        await spend(tx, challenge, 'token', UPDATE_TOKEN_INVALID);
        await updatePasskey(tx, passkey.id, {
          counter,
          encrypted_user_key: body.encryptedUserKey,
          encrypted_public_key: body.encryptedPublicKey,
          encrypted_private_key: body.encryptedPrivateKey,
          revision_date: clock.now().toISOString(),
        });
        // Checked after the passkey's row is written (so locked), in the order a key rotation locks them.
        await refuseAfterRotation(tx, userId, challenge, UPDATE_TOKEN_INVALID);
      });
    },

    async remove({ userId }: UserCaller, id: string, body: SecretVerificationBody): Promise<void> {
      await verifiedUser(userId, body);
      if (!(await deletePasskey(db, userId, id))) throw new NotFound('Credential not found.');
    },
  };
}

export type PasskeyService = ReturnType<typeof createPasskeyService>;
