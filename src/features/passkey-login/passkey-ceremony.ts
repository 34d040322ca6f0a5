import { createHash } from 'node:crypto';
import type { AuthenticatorTransportFuture } from '@simplewebauthn/server';
import type { SigningKeys } from '../../platform/auth/signing-keys.js';
import type { UserRow } from '../../platform/auth/users.repository.js';
import { toAuthenticationJson, toRegistrationJson } from '../two-factor/webauthn.js';
import type { PasskeyRow } from './passkeys.repository.js';

/** @simplewebauthn/server (about 12 MB), loaded when a passkey is first registered or used. */
const webauthnLibrary = () => import('@simplewebauthn/server');

const TIMEOUT_MS = 60_000;
/** The official lifetimes: a creation token covers one ceremony, an assertion token also the PRF assertion and naming the passkey. */
const CREATE_TOKEN_SECONDS = 7 * 60;
const ASSERTION_TOKEN_SECONDS = 17 * 60;
const CREATE_TYP = 'passkey-create+jwt';
const ASSERTION_TYP = 'passkey-assertion+jwt';

/** The official WebAuthnLoginAssertionOptionsScope: logging in, or wrapping the user key for an existing passkey. */
export type AssertionScope = 'Authentication' | 'UpdateKeySet';

/** A challenge this server issued, read back from its token. */
export interface IssuedChallenge {
  challenge: string;
  /** SHA-256 of the challenge: the key it is spent under. */
  hash: string;
  expirationDate: string;
  /**
   * A digest of the user's security stamp when the token was issued (null for login): a key
   * rotation changes the stamp, so keys wrapped before it are refused (see stampOf).
   */
  stamp: string | null;
}

/** A passkey as an attestation proved it, ready to be stored. */
export interface AttestedPasskey {
  credentialId: string;
  publicKey: string;
  counter: number;
  type: string;
  aaGuid: string;
  transports: string[] | null;
}

/** RFC 4122 byte order: the user handle the authenticator keeps and hands back at login. */
const userHandleOf = (userId: string) => new Uint8Array(Buffer.from(userId.replace(/-/g, ''), 'hex'));

function userIdOfHandle(handle: string | undefined): string | null {
  if (!handle) return null;
  const hex = Buffer.from(handle, 'base64url').toString('hex');
  if (hex.length !== 32) return null;
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const hashOf = (challenge: string) => createHash('sha256').update(challenge).digest('base64url');

/** What a token carries of the security stamp: a digest, as the token's payload is readable by its holder. */
export const stampOf = (securityStamp: string) => createHash('sha256').update(`passkey-stamp:${securityStamp}`).digest('base64url');

/**
 * The WebAuthn ceremonies of passkey login with @simplewebauthn/server, for the relying party of
 * PUBLIC_URL (its host is the RP ID, its origin the one expected in client data), as two-step
 * login's security keys use. Options travel with a token this server signs (the challenge, the
 * scope, the user where one is bound), so an anonymous request for login options stores nothing;
 * the challenge is spent when an answer to it is accepted (passkeys.repository.ts spendChallenge).
 * Passkeys require user verification, which is why a passkey login needs no second factor.
 */
export function createPasskeyCeremony(deps: { keys: SigningKeys; rpName: string; publicUrl: string }) {
  const url = new URL(deps.publicUrl);
  const origin = url.origin;
  const rpID = url.hostname;

  async function readToken(token: string, typ: string): Promise<(IssuedChallenge & { scope: unknown; sub: unknown }) | null> {
    const payload = await deps.keys.verify(token, { typ });
    if (!payload || typeof payload.challenge !== 'string' || typeof payload.exp !== 'number') return null;
    const stamp = typeof payload.stamp === 'string' ? payload.stamp : null;
    return { challenge: payload.challenge, hash: hashOf(payload.challenge), expirationDate: new Date(payload.exp * 1000).toISOString(), stamp, scope: payload.scope, sub: payload.sub };
  }

  return {
    origin,
    rpID,

    /** Creation options for a new login passkey (a discoverable credential with user verification) and their token. */
    async creationOptions(user: UserRow, existing: readonly PasskeyRow[]) {
      const { generateRegistrationOptions } = await webauthnLibrary();
      const options = await generateRegistrationOptions({
        rpName: deps.rpName,
        rpID,
        userName: user.email,
        userID: userHandleOf(user.id),
        userDisplayName: user.name ?? '',
        attestationType: 'none',
        excludeCredentials: existing.map((row) => ({ id: row.credential_id })),
        authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: 'required' },
        timeout: TIMEOUT_MS,
      });
      const token = await deps.keys.sign({ sub: user.id, challenge: options.challenge, stamp: stampOf(user.security_stamp) }, { typ: CREATE_TYP, expiresInSeconds: CREATE_TOKEN_SECONDS });
      return { options: { ...options, status: 'ok', errorMessage: '' }, token };
    },

    /** The challenge of a creation token issued to `userId`, or null (expired, forged, another user's). */
    async creationChallenge(token: string, userId: string): Promise<IssuedChallenge | null> {
      const read = await readToken(token, CREATE_TYP);
      return read && read.sub === userId ? read : null;
    },

    /** Verifies an attestation answering `challenge`; the passkey it proves, or null. */
    async verifyCreation(device: Record<string, unknown>, challenge: IssuedChallenge): Promise<AttestedPasskey | null> {
      // Outside the try: a library that fails to load is the server's fault, not a bad passkey.
      const { verifyRegistrationResponse } = await webauthnLibrary();
      try {
        const verified = await verifyRegistrationResponse({
          response: toRegistrationJson(device),
          expectedChallenge: challenge.challenge,
          expectedOrigin: origin,
          expectedRPID: rpID,
          requireUserVerification: true,
        });
        if (!verified.verified || !verified.registrationInfo) return null;
        const { credential, aaguid, credentialType } = verified.registrationInfo;
        return {
          credentialId: credential.id,
          publicKey: Buffer.from(credential.publicKey).toString('base64url'),
          counter: credential.counter,
          type: credentialType,
          aaGuid: aaguid,
          transports: credential.transports?.length ? credential.transports : null,
        };
      } catch {
        return null;
      }
    },

    /**
     * Assertion options for any of the relying party's discoverable passkeys (an empty allow
     * list: the authenticator offers its own, and the user handle names the account) and their
     * token, for `scope`; bound to `user` (and their security stamp) when given.
     */
    async assertionOptions(scope: AssertionScope, user: Pick<UserRow, 'id' | 'security_stamp'> | null) {
      const { generateAuthenticationOptions } = await webauthnLibrary();
      const options = await generateAuthenticationOptions({ rpID, allowCredentials: [], userVerification: 'required', timeout: TIMEOUT_MS });
      const token = await deps.keys.sign({ scope, challenge: options.challenge, ...(user ? { sub: user.id, stamp: stampOf(user.security_stamp) } : {}) }, { typ: ASSERTION_TYP, expiresInSeconds: ASSERTION_TOKEN_SECONDS });
      return { options: { ...options, allowCredentials: [], status: 'ok', errorMessage: '' }, token };
    },

    /** The challenge of an assertion token of `scope` (issued to `userId` when given), or null. */
    async assertionChallenge(token: string, scope: AssertionScope, userId: string | null): Promise<IssuedChallenge | null> {
      const read = await readToken(token, ASSERTION_TYP);
      if (!read || read.scope !== scope || (userId !== null && read.sub !== userId)) return null;
      return read;
    },

    /** The credential id and user handle an assertion (JSON text, as the clients send it) claims, or null when it is not one. */
    claimOf(deviceResponse: string): { credentialId: string; userId: string | null } | null {
      const response = toAuthenticationJson(deviceResponse);
      return response ? { credentialId: response.id, userId: userIdOfHandle(response.response.userHandle) } : null;
    },

    /** Verifies an assertion answering `challenge` with `passkey`, user verification included; the new sign count, or null. */
    async verifyAssertion(deviceResponse: string, challenge: IssuedChallenge, passkey: PasskeyRow): Promise<number | null> {
      const response = toAuthenticationJson(deviceResponse);
      if (!response || response.id !== passkey.credential_id) return null;
      const { verifyAuthenticationResponse } = await webauthnLibrary();
      try {
        const result = await verifyAuthenticationResponse({
          response,
          expectedChallenge: challenge.challenge,
          expectedOrigin: origin,
          expectedRPID: rpID,
          credential: {
            id: passkey.credential_id,
            publicKey: new Uint8Array(Buffer.from(passkey.public_key, 'base64url')),
            counter: Number(passkey.counter),
            ...(passkey.transports ? { transports: JSON.parse(passkey.transports) as AuthenticatorTransportFuture[] } : {}),
          },
          requireUserVerification: true,
        });
        return result.verified ? result.authenticationInfo.newCounter : null;
      } catch {
        return null;
      }
    },
  };
}

export type PasskeyCeremony = ReturnType<typeof createPasskeyCeremony>;
