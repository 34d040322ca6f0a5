import { Type } from 'typebox';
import { Email, Nullable } from '../../http/schemas.js';

const Hash = Type.String({ minLength: 1, maxLength: 1000 });
const Token = Type.String({ minLength: 1, maxLength: 4000, description: 'The userVerificationToken a get-* route answered' });

/** The master password hash (the `otp` of Key Connector accounts is not offered here). */
const secretFields = {
  masterPasswordHash: Type.Optional(Nullable(Hash)),
  otp: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
  secret: Type.Optional(Nullable(Hash)),
};

export const SecretBody = Type.Object(secretFields);

/** Current clients send the verification token from get-*; older ones the master password hash. */
const changeFields = { ...secretFields, userVerificationToken: Type.Optional(Nullable(Token)) };

export const AuthenticatorBody = Type.Object({
  ...changeFields,
  key: Type.String({ minLength: 1, maxLength: 50, description: 'The Base32 key the app was given' }),
  token: Type.String({ minLength: 1, maxLength: 50, description: 'A code the app shows for the key' }),
});

export const DisableAuthenticatorBody = Type.Object({ ...changeFields, key: Type.Optional(Nullable(Type.String({ maxLength: 50 }))) });

export const DisableTypeBody = Type.Object({ ...secretFields, type: Type.Integer({ minimum: 0, maximum: 8, description: 'TwoFactorProviderType' }) });

export const ChangeBody = Type.Object(changeFields);

export const EmailSetupBody = Type.Object({ ...changeFields, email: Email });

export const EmailUpdateBody = Type.Object({ ...changeFields, email: Email, token: Type.String({ minLength: 1, maxLength: 50 }) });

export const EmailLoginBody = Type.Object({
  email: Email,
  masterPasswordHash: Type.Optional(Nullable(Hash)),
  otp: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
  secret: Type.Optional(Nullable(Hash)),
  authRequestId: Type.Optional(Nullable(Type.String({ maxLength: 50 }))),
  authRequestAccessCode: Type.Optional(Nullable(Type.String({ maxLength: 50 }))),
  ssoEmail2FaSessionToken: Type.Optional(Nullable(Type.String({ maxLength: 4000 }))),
});

export const RecoverBody = Type.Object({
  email: Email,
  masterPasswordHash: Hash,
  recoveryCode: Type.String({ minLength: 1, maxLength: 100 }),
});

export const ProviderResponse = Type.Object({ object: Type.Literal('twoFactorProvider'), enabled: Type.Boolean(), type: Type.Integer() });

const AuthenticatorDetails = Type.Object({ enabled: Type.Boolean(), key: Type.String() });

/** The `authenticator` object current clients read, and the flat fields of older web vaults. */
export const AuthenticatorResponse = Type.Object({
  object: Type.Literal('twoFactorAuthenticator'),
  authenticator: AuthenticatorDetails,
  userVerificationToken: Type.String(),
  enabled: Type.Boolean(),
  key: Type.String(),
});

export const AuthenticatorUpdateResponse = Type.Object({
  object: Type.Literal('twoFactorAuthenticatorUpdate'),
  authenticator: AuthenticatorDetails,
  enabled: Type.Boolean(),
  key: Type.String(),
});

const EmailDetails = Type.Object({ enabled: Type.Boolean(), email: Nullable(Type.String()) });

export const EmailResponse = Type.Object({ object: Type.Literal('twoFactorEmail'), email: EmailDetails, userVerificationToken: Type.String() });

export const EmailUpdateResponse = Type.Object({ object: Type.Literal('twoFactorEmailUpdate'), email: EmailDetails });

export const RecoverResponse = Type.Object({ object: Type.Literal('twoFactorRecover'), code: Type.String() });

const KeyId = Type.Integer({ minimum: 1, maximum: 5, description: 'The key slot (1–5)' });

/** The attestation as the clients send it: Fido2NetLib's AuthenticatorAttestationRawResponse (base64url fields). */
const DeviceResponse = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 1400 }),
    rawId: Type.Optional(Type.String({ maxLength: 1400 })),
    type: Type.Optional(Type.Literal('public-key')),
    extensions: Type.Optional(Nullable(Type.Object({}, { additionalProperties: true }))),
    response: Type.Object(
      {
        AttestationObject: Type.Optional(Type.String({ maxLength: 20_000 })),
        attestationObject: Type.Optional(Type.String({ maxLength: 20_000 })),
        clientDataJson: Type.Optional(Type.String({ maxLength: 20_000 })),
        clientDataJSON: Type.Optional(Type.String({ maxLength: 20_000 })),
      },
      { additionalProperties: true },
    ),
  },
  { additionalProperties: true },
);

export const WebAuthnUpdateBody = Type.Object({
  ...changeFields,
  id: KeyId,
  name: Type.Optional(Nullable(Type.String({ maxLength: 50 }))),
  deviceResponse: DeviceResponse,
});

export const WebAuthnDeleteBody = Type.Object({ ...changeFields, id: KeyId });

const WebAuthnDetails = Type.Object({
  enabled: Type.Boolean(),
  keys: Type.Array(Type.Object({ name: Type.String(), id: Type.Integer(), migrated: Type.Boolean() })),
});

export const WebAuthnResponse = Type.Object({ object: Type.Literal('twoFactorWebAuthn'), webAuthn: WebAuthnDetails, userVerificationToken: Type.String() });

export const WebAuthnChallengeResponse = Type.Object({
  object: Type.Literal('twoFactorWebAuthnChallenge'),
  options: Type.Object({}, { additionalProperties: true, description: 'PublicKeyCredentialCreationOptions (base64url), for navigator.credentials.create' }),
});

export const WebAuthnUpdateResponse = Type.Object({ object: Type.Literal('twoFactorWebAuthnUpdate'), webAuthn: WebAuthnDetails });

export const WebAuthnDeleteResponse = Type.Object({ object: Type.Literal('twoFactorWebAuthnDelete'), webAuthn: WebAuthnDetails });
