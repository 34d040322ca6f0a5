import { Type, type Static } from 'typebox';
import { EncString, Nullable } from '../../http/schemas.js';
import type { PasskeyRow } from './passkeys.repository.js';

/** The official WebAuthnPrfStatus: whether a passkey can unlock the vault. */
export const WebAuthnPrfStatus = { Enabled: 0, Supported: 1, Unsupported: 2 } as const;

/** The most passkeys one account logs in with (the official CreateWebAuthnLoginCredentialCommand's limit). */
export const MAX_PASSKEYS = 5;

const B64u = (maxLength: number) => Type.String({ maxLength });
const Options = Type.Object({}, { additionalProperties: true, description: 'The options for navigator.credentials (Fido2NetLib field names, base64url)' });
const Token = Type.String({ minLength: 1, maxLength: 4000, description: 'The token that came with the options' });

/** An attestation as the web vault sends it (Fido2NetLib's AuthenticatorAttestationRawResponse, base64url fields). */
const AttestationResponse = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 1400 }),
    rawId: Type.Optional(B64u(1400)),
    type: Type.Optional(Type.Literal('public-key')),
    extensions: Type.Optional(Nullable(Type.Object({}, { additionalProperties: true }))),
    response: Type.Object(
      {
        attestationObject: Type.Optional(B64u(20_000)),
        AttestationObject: Type.Optional(B64u(20_000)),
        clientDataJson: Type.Optional(B64u(20_000)),
        clientDataJSON: Type.Optional(B64u(20_000)),
        transports: Type.Optional(Nullable(Type.Array(Type.String({ maxLength: 20 }), { maxItems: 10 }))),
      },
      { additionalProperties: true },
    ),
  },
  { additionalProperties: true },
);

/** An assertion as the clients send it (AuthenticatorAssertionRawResponse, base64url fields). */
export const AssertionResponse = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 1400 }),
    rawId: Type.Optional(B64u(1400)),
    type: Type.Optional(Type.Literal('public-key')),
    extensions: Type.Optional(Nullable(Type.Object({}, { additionalProperties: true }))),
    response: Type.Object(
      {
        authenticatorData: B64u(20_000),
        signature: B64u(2_000),
        clientDataJSON: Type.Optional(B64u(20_000)),
        clientDataJson: Type.Optional(B64u(20_000)),
        userHandle: Type.Optional(Nullable(B64u(200))),
      },
      { additionalProperties: true },
    ),
  },
  { additionalProperties: true },
);

const WrappedKey = EncString(2000);

export const CreatePasskeyBody = Type.Object({
  deviceResponse: AttestationResponse,
  name: Type.String({ minLength: 1, maxLength: 50 }),
  token: Token,
  supportsPrf: Type.Boolean(),
  encryptedUserKey: Type.Optional(Nullable(WrappedKey)),
  encryptedPublicKey: Type.Optional(Nullable(WrappedKey)),
  encryptedPrivateKey: Type.Optional(Nullable(WrappedKey)),
});
export type CreatePasskeyBody = Static<typeof CreatePasskeyBody>;

export const UpdatePasskeyBody = Type.Object({
  deviceResponse: AssertionResponse,
  token: Token,
  encryptedUserKey: WrappedKey,
  encryptedPublicKey: WrappedKey,
  encryptedPrivateKey: WrappedKey,
});
export type UpdatePasskeyBody = Static<typeof UpdatePasskeyBody>;

export const PasskeyResponse = Type.Object({
  object: Type.Literal('webauthnCredential'),
  id: Type.String(),
  name: Type.String(),
  prfStatus: Type.Integer({ description: 'WebAuthnPrfStatus: 0 Enabled (unlocks the vault), 1 Supported, 2 Unsupported' }),
  encryptedUserKey: Nullable(Type.String()),
  encryptedPublicKey: Nullable(Type.String()),
});
export type PasskeyResponse = Static<typeof PasskeyResponse>;

export const CreateOptionsResponse = Type.Object({ object: Type.Literal('webauthnCredentialCreateOptions'), options: Options, token: Type.String() });

export const AssertionOptionsResponse = Type.Object({ object: Type.Literal('webAuthnLoginAssertionOptions'), options: Options, token: Type.String() });

/** sync's userDecryption.webAuthnPrfOptions[]: what a passkey's PRF output unlocks the vault with. */
export const PrfOption = Type.Object({
  encryptedPrivateKey: Type.String(),
  encryptedUserKey: Type.String(),
  credentialId: Type.String(),
  transports: Type.Array(Type.String()),
});
export type PrfOption = Static<typeof PrfOption>;

const hasKeySet = (row: Pick<PasskeyRow, 'encrypted_user_key' | 'encrypted_public_key' | 'encrypted_private_key'>) =>
  row.encrypted_user_key !== null && row.encrypted_public_key !== null && row.encrypted_private_key !== null;

export function prfStatusOf(row: PasskeyRow): number {
  if (!row.supports_prf) return WebAuthnPrfStatus.Unsupported;
  return hasKeySet(row) ? WebAuthnPrfStatus.Enabled : WebAuthnPrfStatus.Supported;
}

export function toPasskeyResponse(row: PasskeyRow): PasskeyResponse {
  return {
    object: 'webauthnCredential',
    id: row.id,
    name: row.name,
    prfStatus: prfStatusOf(row),
    encryptedUserKey: row.encrypted_user_key,
    encryptedPublicKey: row.encrypted_public_key,
  };
}

/**
 * The unlock option of a passkey whose keys are stored, as the official server writes it: the
 * transports are an empty list there too (its rows keep none), and the clients accept either.
 */
export function toPrfOption(row: Pick<PasskeyRow, 'credential_id' | 'encrypted_user_key' | 'encrypted_private_key'>): PrfOption {
  return { encryptedPrivateKey: row.encrypted_private_key ?? '', encryptedUserKey: row.encrypted_user_key ?? '', credentialId: row.credential_id, transports: [] };
}

/** The token answer's UserDecryptionOptions.WebAuthnPrfOption (PascalCase, as the identity answer's keys are), or null when the passkey holds no keys. */
export function toTokenPrfOption(row: PasskeyRow): Record<string, unknown> | null {
  if (prfStatusOf(row) !== WebAuthnPrfStatus.Enabled) return null;
  const option = toPrfOption(row);
  return { EncryptedPrivateKey: option.encryptedPrivateKey, EncryptedUserKey: option.encryptedUserKey, CredentialId: option.credentialId, Transports: option.transports };
}
