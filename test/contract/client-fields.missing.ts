/**
 * Response fields the official clients read that Strongroom does not send (yet), each with the
 * reason: the issue that will send it, why it is not offered, when it is sent (as the official
 * server, only on some answers), or that a route's schema does not write it out (`Model.*`: the
 * live check reads those). test/contract/client-fields.test.ts fails on an entry that is now sent
 * or no longer read, so this list only shrinks. Keys are `Model.Field` as
 * test/contract/official-client-fields.json names them.
 */
const CIPHER_DATA = 'sent only when an item is sealed whole (a blob); the clients read an absent `data` as an item encrypted field by field (docs/item-types.md)';
const V2_KEYS = '#41 version-2 account keys: the upgrade token (V2UpgradeToken) is not built yet';
const PASSKEY_LOGIN = 'sent only when the user has a passkey that unlocks the vault, as the official server does (docs/passkey-login.md)';
const ONLY_ARGON2 = 'sent only when the account uses Argon2id; the clients read the absent field as null';
const MP_POLICY = 'sent only when a master password policy applies to the user, as the official server does';

export const MISSING: Record<string, string> = {
  // Vault items
  'CipherResponse.Data': CIPHER_DATA,
  'sdk:CipherResponseModel.data': CIPHER_DATA,
  'CipherResponse.CollectionIds': 'not offered on GET/POST/PUT /ciphers/{id}: the official CipherResponseModel has none there; the clients take them from sync and /details',
  'CipherResponse.*': 'undescribed: GET /ciphers/organization-details lists items as open objects',

  // Sync and profile
  'UserDecryptionResponse.V2UpgradeToken': V2_KEYS,
  'sdk:UserDecryptionResponseModel.v2UpgradeToken': V2_KEYS,
  'sdk:MasterPasswordUnlockResponseModel.containedKeyId': 'sent only when the account has a user key id (registered by a 2026 client, or backfilled; docs/account-keys.md)',
  'UserDecryptionResponse.WebAuthnPrfOptions': PASSKEY_LOGIN,
  'sdk:UserDecryptionResponseModel.webAuthnPrfOptions': PASSKEY_LOGIN,
  'UserDecryptionOptionsResponse.WebAuthnPrfOption': PASSKEY_LOGIN,
  'sdk:UserDecryptionOptionsApiResponse.WebAuthnPrfOption': PASSKEY_LOGIN,
  'ProfileOrganizationResponse.*': 'undescribed: the profile schema lists organizations as open objects',
  'ProfileProviderResponse.*': 'not offered: providers (the list is always empty)',
  'ProfileProviderOrganizationResponse.*': 'not offered: providers (the list is always empty)',

  // The token answer
  'IdentityTokenResponse.*': 'undescribed: the token answer schema names the OAuth fields only (additionalProperties)',
  'sdk:IdentityTokenSuccessResponse.*': 'undescribed: the token answer schema names the OAuth fields only (additionalProperties)',
  'sdk:LoginSuccessApiResponse.*': 'undescribed: the token answer schema names the OAuth fields only (additionalProperties)',
  'IdentityTokenResponse.TwoFactorToken': 'sent only when the client asks to remember two-step login, as the official server does',
  'sdk:IdentityTokenSuccessResponse.twoFactorToken': 'sent only when the client asks to remember two-step login, as the official server does',
  'sdk:LoginSuccessApiResponse.TwoFactorToken': 'sent only when the client asks to remember two-step login, as the official server does',
  'IdentityTokenResponse.KdfMemory': ONLY_ARGON2,
  'IdentityTokenResponse.KdfParallelism': ONLY_ARGON2,
  'sdk:LoginSuccessApiResponse.KdfMemory': ONLY_ARGON2,
  'sdk:LoginSuccessApiResponse.KdfParallelism': ONLY_ARGON2,
  'KdfConfigResponse.Memory': ONLY_ARGON2,
  'KdfConfigResponse.Parallelism': ONLY_ARGON2,
  'sdk:MasterPasswordUnlockKdfResponseModel.memory': ONLY_ARGON2,
  'sdk:MasterPasswordUnlockKdfResponseModel.parallelism': ONLY_ARGON2,
  'MasterPasswordPolicyResponse.MinComplexity': MP_POLICY,
  'MasterPasswordPolicyResponse.MinLength': MP_POLICY,
  'MasterPasswordPolicyResponse.RequireUpper': MP_POLICY,
  'MasterPasswordPolicyResponse.RequireLower': MP_POLICY,
  'MasterPasswordPolicyResponse.RequireNumbers': MP_POLICY,
  'MasterPasswordPolicyResponse.RequireSpecial': MP_POLICY,
  'MasterPasswordPolicyResponse.EnforceOnLogin': MP_POLICY,
  'sdk:MasterPasswordPolicyResponseModel.minComplexity': MP_POLICY,
  'sdk:MasterPasswordPolicyResponseModel.minLength': MP_POLICY,
  'sdk:MasterPasswordPolicyResponseModel.requireLower': MP_POLICY,
  'sdk:MasterPasswordPolicyResponseModel.requireUpper': MP_POLICY,
  'sdk:MasterPasswordPolicyResponseModel.requireNumbers': MP_POLICY,
  'sdk:MasterPasswordPolicyResponseModel.requireSpecial': MP_POLICY,
  'sdk:MasterPasswordPolicyResponseModel.enforceOnLogin': MP_POLICY,
  'UserDecryptionOptionsResponse.TrustedDeviceOption': 'sent only when the login went through single sign-on of an organization that uses trusted devices (docs/trusted-devices.md); the logins this test records are password logins',
  'sdk:UserDecryptionOptionsApiResponse.TrustedDeviceOption': 'sent only when the login went through single sign-on of an organization that uses trusted devices (docs/trusted-devices.md); the logins this test records are password logins',
  'UserDecryptionOptionsResponse.KeyConnectorOption': 'not offered: Key Connector',
  'sdk:UserDecryptionOptionsApiResponse.KeyConnectorOption': 'not offered: Key Connector',
  'IdentityTokenResponse.ApiUseKeyConnector': 'not offered: Key Connector',
  'sdk:IdentityTokenSuccessResponse.apiUseKeyConnector': 'not offered: Key Connector',
  'sdk:LoginSuccessApiResponse.ApiUseKeyConnector': 'not offered: Key Connector',
  'sdk:IdentityTokenSuccessResponse.keyConnectorUrl': 'not offered: Key Connector',
  'sdk:IdentityTokenSuccessResponse.extra': 'not offered: a catch-all field of the SDK struct that no server sends',

  // Config
  'EnvironmentServerConfigResponse.FillAssistRules': 'not offered: Strongroom hosts no fill-assist rules',

  // Members, emergency access, login requests
  'OrganizationUserUserDetailsResponse.Permissions': 'sent only when the member has custom permissions, as the official server does',
};
