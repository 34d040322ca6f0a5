import { Type, type Static } from 'typebox';
import { isBase64, isEncString } from '../../http/enc-string.js';
import { BadRequest } from '../../http/errors.js';
import { Nullable } from '../../http/schemas.js';
import type { UserRow } from '../../platform/auth/users.repository.js';

/**
 * An account's keys as the clients send them (the official AccountKeysRequestModel: registration,
 * `POST /accounts/keys`, key rotation) and as Strongroom stores them: the public-key encryption
 * pair every account has and, for an account of version-2 keys (clients 2025.11 and later), the
 * public key signed by the account's own signature key, that signature key pair and the signed
 * security state. The server opens none of them; it refuses what no client could use and returns
 * the rest unchanged (docs/account-keys.md).
 */

/** A key id: 16 bytes, hex (the official KeyId). Upper case is accepted and stored lower-cased. */

const Public = Type.String({ minLength: 1, maxLength: 10_000 });
const Wrapped = Type.String({ minLength: 1, maxLength: 20_000 });

export const AccountKeysRequest = Type.Object({
  /** The flat pair clients before 2025.8 send, and later ones send beside publicKeyEncryptionKeyPair, which wins. */
  userKeyEncryptedAccountPrivateKey: Type.Optional(Nullable(Wrapped)),
  accountPublicKey: Type.Optional(Nullable(Public)),
  publicKeyEncryptionKeyPair: Type.Optional(
    Nullable(Type.Object({ wrappedPrivateKey: Wrapped, publicKey: Public, signedPublicKey: Type.Optional(Nullable(Type.String({ maxLength: 20_000 }))) })),
  ),
  signatureKeyPair: Type.Optional(
    Nullable(Type.Object({ signatureAlgorithm: Type.String({ maxLength: 20 }), wrappedSigningKey: Wrapped, verifyingKey: Public })),
  ),
  securityState: Type.Optional(
    Nullable(Type.Object({ securityState: Type.String({ minLength: 1, maxLength: 10_000 }), securityVersion: Type.Integer({ minimum: 1, maximum: 1_000_000 }) })),
  ),
});
export type AccountKeysRequest = Static<typeof AccountKeysRequest>;

/** The signature algorithms the official server accepts, by the names the clients send. */
const SIGNATURE_ALGORITHMS = new Set(['ed25519', 'mldsa44']);

/** What a version-2 account keeps beyond its key pair. */
export interface V2AccountKeys {
  signedPublicKey: string;
  signatureAlgorithm: string;
  wrappedSigningKey: string;
  verifyingKey: string;
  securityState: string;
  securityVersion: number;
}

export interface AccountKeys {
  publicKey: string;
  wrappedPrivateKey: string;
  /** Null for an account of version-1 keys. */
  v2: V2AccountKeys | null;
}

/**
 * The keys of a request, checked: publicKeyEncryptionKeyPair wins over the flat pair (as on the
 * official server); the signed public key, the signature key pair and the security state come
 * all together or not at all, since a client that finds only some of them cannot unlock the
 * account (the official server answers 500 there; this is a 400 naming the field). `prefix` is
 * where the keys sit in the body (`accountKeys`).
 */
export function accountKeysOfRequest(keys: AccountKeysRequest, prefix: string): AccountKeys {
  const pair = keys.publicKeyEncryptionKeyPair;
  const [publicKey, privateKey, where, publicField, privateField] = pair
    ? [pair.publicKey, pair.wrappedPrivateKey, `${prefix}.publicKeyEncryptionKeyPair`, 'publicKey', 'wrappedPrivateKey']
    : [keys.accountPublicKey, keys.userKeyEncryptedAccountPrivateKey, prefix, 'accountPublicKey', 'userKeyEncryptedAccountPrivateKey'];
  const required = 'The account keys are required: send publicKeyEncryptionKeyPair, or userKeyEncryptedAccountPrivateKey and accountPublicKey.';
  if (!privateKey) throw BadRequest.field(`${where}.${privateField}`, required);
  if (!publicKey) throw BadRequest.field(`${where}.${publicField}`, required);
  if (!isEncString(privateKey)) throw BadRequest.field(`${where}.${privateField}`, 'The wrapped private key is not a valid encrypted string.');
  if (!isBase64(publicKey)) throw BadRequest.field(`${where}.${publicField}`, 'The public key is not base64.');

  const signed = pair?.signedPublicKey ?? null;
  const signature = keys.signatureKeyPair ?? null;
  const state = keys.securityState ?? null;
  if (!signed && !signature && !state) return { publicKey, wrappedPrivateKey: privateKey, v2: null };
  const partial = 'Version-2 account keys need the signed public key, the signature key pair and the security state together.';
  if (!pair) throw BadRequest.field(`${prefix}.publicKeyEncryptionKeyPair`, partial);
  if (!signed) throw BadRequest.field(`${prefix}.publicKeyEncryptionKeyPair.signedPublicKey`, partial);
  if (!signature) throw BadRequest.field(`${prefix}.signatureKeyPair`, partial);
  if (!state) throw BadRequest.field(`${prefix}.securityState`, partial);
  if (!isBase64(signed)) throw BadRequest.field(`${prefix}.publicKeyEncryptionKeyPair.signedPublicKey`, 'The signed public key is not base64.');
  if (!SIGNATURE_ALGORITHMS.has(signature.signatureAlgorithm)) {
    throw BadRequest.field(`${prefix}.signatureKeyPair.signatureAlgorithm`, `Unsupported signature algorithm: ${signature.signatureAlgorithm}`);
  }
  if (!isEncString(signature.wrappedSigningKey)) throw BadRequest.field(`${prefix}.signatureKeyPair.wrappedSigningKey`, 'The wrapped signing key is not a valid encrypted string.');
  if (!isBase64(signature.verifyingKey)) throw BadRequest.field(`${prefix}.signatureKeyPair.verifyingKey`, 'The verifying key is not base64.');
  if (!isBase64(state.securityState)) throw BadRequest.field(`${prefix}.securityState.securityState`, 'The security state is not base64.');
  return {
    publicKey,
    wrappedPrivateKey: privateKey,
    v2: {
      signedPublicKey: signed,
      signatureAlgorithm: signature.signatureAlgorithm,
      wrappedSigningKey: signature.wrappedSigningKey,
      verifyingKey: signature.verifyingKey,
      securityState: state.securityState,
      securityVersion: state.securityVersion,
    },
  };
}

/** The users columns of the version-2 keys; null (version-1 keys) clears them. */
export function v2KeyColumns(v2: V2AccountKeys | null) {
  return {
    signed_public_key: v2?.signedPublicKey ?? null,
    signature_algorithm: v2?.signatureAlgorithm ?? null,
    wrapped_signing_key: v2?.wrappedSigningKey ?? null,
    verifying_key: v2?.verifyingKey ?? null,
    security_state: v2?.securityState ?? null,
    security_version: v2?.securityVersion ?? null,
  };
}

/** The users columns that hold an account's keys; a version-1 set clears any version-2 ones. */
export function accountKeysColumns(keys: AccountKeys) {
  return { public_key: keys.publicKey, private_key: keys.wrappedPrivateKey, ...v2KeyColumns(keys.v2) };
}

/** The users columns that together make an account's version-2 keys. */
export type V2KeyFields = Pick<UserRow, 'wrapped_signing_key' | 'verifying_key' | 'security_state' | 'security_version'>;

/**
 * Whether the account holds version-2 keys: the signature pair and the security state, all of
 * them. The one rule both the keys answers (accountKeysOf) and the login client-version rule
 * use, so an account is never v2 for one and v1 for the other; only clients from 2025.11 on can
 * use such an account.
 */
export function hasV2Keys(user: V2KeyFields): boolean {
  return Boolean(user.wrapped_signing_key && user.verifying_key && user.security_state && user.security_version !== null);
}
