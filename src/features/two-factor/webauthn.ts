import { createHash } from 'node:crypto';
import type { AuthenticationResponseJSON, AuthenticatorTransportFuture, RegistrationResponseJSON } from '@simplewebauthn/server';
import type { Clock } from '../../shared/clock.js';
import type { Db } from '../../db/database.js';
import type { UserRow } from '../../platform/auth/users.repository.js';
import { findCode, putCode, type ProviderRow } from './two-factor.repository.js';
import { takeCode } from '../../platform/auth/one-time-codes.js';

/** A registered security key; ids 1–5, the slots the web vault numbers them by. */
export interface WebAuthnKey {
  id: number;
  name: string;
  credentialId: string;
  publicKey: string;
  counter: number;
  transports?: string[];
}

export const MAX_WEBAUTHN_KEYS = 5;
const CHALLENGE_MINUTES = 5;
const TIMEOUT_MS = 60_000;
const Purpose = { Register: 'webauthn-register', Login: 'webauthn-login' } as const;

/** @simplewebauthn/server (about 12 MB), loaded when a security key is first registered or used. */
const webauthnLibrary = () => import('@simplewebauthn/server');

export function keysOf(row: ProviderRow | undefined): WebAuthnKey[] {
  if (!row) return [];
  try {
    const keys = (JSON.parse(row.metadata) as { keys?: unknown }).keys;
    return Array.isArray(keys) ? (keys as WebAuthnKey[]) : [];
  } catch {
    return [];
  }
}

/** Standard or URL-safe base64 (the clients send either) as unpadded base64url. */
const b64u = (value: unknown) => (typeof value === 'string' ? value.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '') : '');

/** The official clients send Fido2NetLib's field names (`AttestationObject`, `clientDataJson`); the library reads the W3C ones. */
function field(response: Record<string, unknown>, ...names: string[]): string {
  for (const name of names) if (typeof response[name] === 'string') return b64u(response[name]);
  return '';
}

const CLIENT_DATA = ['clientDataJSON', 'clientDataJson', 'ClientDataJson', 'ClientDataJSON'];

const objectOf = (value: unknown): Record<string, unknown> => (value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {});

export function toRegistrationJson(device: Record<string, unknown>): RegistrationResponseJSON {
  const response = objectOf(device.response);
  const transports = Array.isArray(response.transports) ? response.transports.filter((t): t is AuthenticatorTransportFuture => typeof t === 'string') : undefined;
  return {
    id: b64u(device.id),
    rawId: b64u(device.rawId ?? device.id),
    type: 'public-key',
    clientExtensionResults: {},
    response: {
      attestationObject: field(response, 'attestationObject', 'AttestationObject'),
      clientDataJSON: field(response, ...CLIENT_DATA),
      ...(transports ? { transports } : {}),
    },
  };
}

/** The login token (the assertion as JSON, as the clients send it for provider 7), or null when it is not one. */
export function toAuthenticationJson(token: string): AuthenticationResponseJSON | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(token);
  } catch {
    return null;
  }
  const device = objectOf(parsed);
  const response = objectOf(device.response);
  const id = b64u(device.id ?? device.rawId);
  const authenticatorData = field(response, 'authenticatorData', 'AuthenticatorData');
  const clientDataJSON = field(response, ...CLIENT_DATA);
  const signature = field(response, 'signature', 'Signature');
  if (!id || !authenticatorData || !clientDataJSON || !signature) return null;
  const userHandle = field(response, 'userHandle', 'UserHandle');
  return {
    id,
    rawId: b64u(device.rawId ?? device.id),
    type: 'public-key',
    clientExtensionResults: {},
    response: { authenticatorData, clientDataJSON, signature, ...(userHandle ? { userHandle } : {}) },
  };
}

const hash = (text: string) => createHash('sha256').update(text).digest('base64url');

/**
 * WebAuthn (FIDO2) as a second factor with @simplewebauthn/server, for the relying party of
 * PUBLIC_URL (its host is the RP ID, its origin the one expected in client data). Challenges
 * are kept for five minutes in one_time_codes, one per user and ceremony, and used once.
 */
export function createWebAuthn(deps: { db: Db; clock: Clock; rpName: string; publicUrl: string }) {
  const { db, clock } = deps;
  const url = new URL(deps.publicUrl);
  const origin = url.origin;
  const rpID = url.hostname;

  async function remember(userId: string, purpose: string, challenge: string): Promise<void> {
    const now = clock.now();
    await putCode(db, {
      user_id: userId,
      purpose,
      code_hash: hash(challenge),
      target: challenge,
      expiration_date: new Date(now.getTime() + CHALLENGE_MINUTES * 60_000).toISOString(),
      creation_date: now.toISOString(),
    });
  }

  /** The stored challenge, once: it is spent whatever the outcome, and of racing uses only one gets it. */
  async function takeChallenge(userId: string, purpose: string): Promise<string | null> {
    const row = await findCode(db, userId, purpose);
    if (!row?.target || !(await takeCode(db, userId, purpose, row.code_hash))) return null;
    return row.expiration_date > clock.now().toISOString() ? row.target : null;
  }

  return {
    origin,
    rpID,

    /** Registration options (the web vault passes them to navigator.credentials.create). */
    async registrationOptions(user: UserRow, keys: readonly WebAuthnKey[]) {
      const { generateRegistrationOptions } = await webauthnLibrary();

      const options = await generateRegistrationOptions({
        rpName: deps.rpName,
        rpID,
        userName: user.email,
        userID: new Uint8Array(Buffer.from(user.id.replace(/-/g, ''), 'hex')),
        userDisplayName: user.name ?? user.email,
        attestationType: 'none',
        excludeCredentials: keys.map((key) => ({ id: key.credentialId })),
        authenticatorSelection: { residentKey: 'discouraged', requireResidentKey: false, userVerification: 'discouraged' },
        timeout: TIMEOUT_MS,
      });
      await remember(user.id, Purpose.Register, options.challenge);
      return { ...options, status: 'ok', errorMessage: '' };
    },

    /** Verifies an attestation against the pending challenge (spent either way); the new key, or null. */
    async register(user: UserRow, slot: number, name: string, device: Record<string, unknown>): Promise<WebAuthnKey | null> {
      const challenge = await takeChallenge(user.id, Purpose.Register);
      if (!challenge) return null;
      // Outside the try: a library that fails to load is the server's fault, not a bad key.
      const { verifyRegistrationResponse } = await webauthnLibrary();
      try {
        const verified = await verifyRegistrationResponse({
          response: toRegistrationJson(device),
          expectedChallenge: challenge,
          expectedOrigin: origin,
          expectedRPID: rpID,
          requireUserVerification: false,
        });
        if (!verified.verified || !verified.registrationInfo) return null;
        const { credential } = verified.registrationInfo;
        return {
          id: slot,
          name,
          credentialId: credential.id,
          publicKey: Buffer.from(credential.publicKey).toString('base64url'),
          counter: credential.counter,
          ...(credential.transports?.length ? { transports: credential.transports } : {}),
        };
      } catch {
        return null;
      }
    },

    /** The login challenge's assertion options (TwoFactorProviders2["7"]); replaces any earlier one. */
    async assertionOptions(user: UserRow, keys: readonly WebAuthnKey[]) {
      const { generateAuthenticationOptions } = await webauthnLibrary();

      const options = await generateAuthenticationOptions({
        rpID,
        allowCredentials: keys.map((key) => ({ id: key.credentialId, ...(key.transports ? { transports: key.transports as AuthenticatorTransportFuture[] } : {}) })),
        userVerification: 'discouraged',
        timeout: TIMEOUT_MS,
      });
      await remember(user.id, Purpose.Login, options.challenge);
      return { ...options, status: 'ok', errorMessage: '' };
    },

    /**
     * Verifies a login assertion against the pending challenge (spent either way) and one of
     * the user's keys, including its sign counter; answers the keys with the new counter, or null.
     */
    async verify(user: UserRow, keys: readonly WebAuthnKey[], token: string): Promise<WebAuthnKey[] | null> {
      const challenge = await takeChallenge(user.id, Purpose.Login);
      const response = toAuthenticationJson(token);
      const key = response ? keys.find((k) => k.credentialId === response.id) : undefined;
      if (!challenge || !response || !key) return null;
      const { verifyAuthenticationResponse } = await webauthnLibrary();
      try {
        const result = await verifyAuthenticationResponse({
          response,
          expectedChallenge: challenge,
          expectedOrigin: origin,
          expectedRPID: rpID,
          credential: { id: key.credentialId, publicKey: new Uint8Array(Buffer.from(key.publicKey, 'base64url')), counter: key.counter },
          requireUserVerification: false,
        });
        if (!result.verified) return null;
        return keys.map((k) => (k.id === key.id ? { ...k, counter: result.authenticationInfo.newCounter } : k));
      } catch {
        return null;
      }
    },
  };
}

export type WebAuthn = ReturnType<typeof createWebAuthn>;
