import { Type, type Static } from 'typebox';
import { Email, Nullable } from '../../http/schemas.js';

// The official OrganizationSsoRequestModel / OrganizationSsoResponseModel, with their field names.
// Every text is bounded here; what the values may be is checked in sso-config.rules.ts, so each
// refusal names its field in words rather than as a schema path.

// Type lists rather than unions, so that a bad value is reported once, naming the field.
const Text = (maxLength: number) => Type.Optional(Type.Unsafe<string | null>({ type: ['string', 'null'], maxLength }));
const Flag = Type.Optional(Type.Unsafe<boolean | null>({ type: ['boolean', 'null'] }));
const Int = Type.Optional(Type.Unsafe<number | null>({ type: ['integer', 'null'], minimum: -1, maximum: 255 }));

/** A URL as the form sends one; 2048 characters is more than any identity provider's needs. */
export const URL_MAX = 2048;

export const SsoConfigurationDataRequest = Type.Object({
  configType: Type.Integer({ minimum: 0, maximum: 255, description: 'SsoType: 1 OpenID Connect (2 SAML 2.0 is not offered yet)' }),
  memberDecryptionType: Int,
  /** The pre-2023 form of memberDecryptionType: true asked for Key Connector. */
  keyConnectorEnabled: Flag,
  keyConnectorUrl: Text(URL_MAX),
  authority: Text(URL_MAX),
  clientId: Text(1024),
  clientSecret: Text(4096),
  metadataAddress: Text(URL_MAX),
  redirectBehavior: Int,
  getClaimsFromUserInfoEndpoint: Flag,
  additionalScopes: Text(1024),
  additionalUserIdClaimTypes: Text(1024),
  additionalEmailClaimTypes: Text(1024),
  additionalNameClaimTypes: Text(1024),
  acrValues: Text(1024),
  expectedReturnAcrValue: Text(256),
  // SAML 2.0: taken so that the form's request parses, refused unless empty (not offered yet).
  spUniqueEntityId: Flag,
  spNameIdFormat: Int,
  spOutboundSigningAlgorithm: Text(256),
  spSigningBehavior: Int,
  spWantAssertionsSigned: Flag,
  spValidateCertificates: Flag,
  spMinIncomingSigningAlgorithm: Text(256),
  idpEntityId: Text(URL_MAX),
  idpBindingType: Int,
  idpSingleSignOnServiceUrl: Text(URL_MAX),
  idpSingleLogoutServiceUrl: Text(URL_MAX),
  idpArtifactResolutionServiceUrl: Text(URL_MAX),
  idpX509PublicCert: Text(8192),
  idpOutboundSigningAlgorithm: Text(256),
  idpAllowUnsolicitedAuthnResponse: Flag,
  idpDisableOutboundLogoutRequests: Flag,
  idpWantAuthnRequestsSigned: Flag,
});
export type SsoConfigurationDataRequest = Static<typeof SsoConfigurationDataRequest>;

export const OrganizationSsoRequest = Type.Object({
  enabled: Type.Boolean(),
  identifier: Text(50),
  data: SsoConfigurationDataRequest,
});
export type OrganizationSsoRequest = Static<typeof OrganizationSsoRequest>;

const S = Nullable(Type.String());
const B = Type.Boolean();
const I = Type.Integer();

/** The official SsoConfigurationData as answered: OpenID Connect settings, SAML ones at their defaults. */
export const SsoConfigurationDataResponse = Type.Object({
  configType: I,
  memberDecryptionType: I,
  keyConnectorEnabled: B,
  keyConnectorUrl: S,
  authority: S,
  clientId: S,
  clientSecret: Type.Null({ description: 'Never answered: the secret is kept sealed; a save without it keeps it' }),
  metadataAddress: S,
  redirectBehavior: I,
  getClaimsFromUserInfoEndpoint: B,
  additionalScopes: S,
  additionalUserIdClaimTypes: S,
  additionalEmailClaimTypes: S,
  additionalNameClaimTypes: S,
  acrValues: S,
  expectedReturnAcrValue: S,
  idpEntityId: S,
  idpSingleSignOnServiceUrl: S,
  idpSingleLogoutServiceUrl: S,
  idpX509PublicCert: S,
  idpArtifactResolutionServiceUrl: S,
  idpOutboundSigningAlgorithm: S,
  idpBindingType: I,
  idpAllowUnsolicitedAuthnResponse: B,
  idpDisableOutboundLogoutRequests: B,
  idpWantAuthnRequestsSigned: B,
  spUniqueEntityId: B,
  spWantAssertionsSigned: B,
  spValidateCertificates: B,
  spNameIdFormat: I,
  spOutboundSigningAlgorithm: S,
  spSigningBehavior: I,
  spMinIncomingSigningAlgorithm: S,
});
export type SsoConfigurationDataResponse = Static<typeof SsoConfigurationDataResponse>;

export const SsoUrls = Type.Object({
  callbackPath: Type.String(),
  signedOutCallbackPath: Type.String(),
  spEntityId: Type.String(),
  spEntityIdStatic: Type.String(),
  spMetadataUrl: Type.String(),
  spAcsUrl: Type.String(),
});

export const OrganizationSsoResponse = Type.Object({
  object: Type.Literal('organizationSso'),
  enabled: Type.Boolean(),
  identifier: S,
  data: Nullable(SsoConfigurationDataResponse),
  urls: SsoUrls,
});
export type OrganizationSsoResponse = Static<typeof OrganizationSsoResponse>;

/** `POST /organizations/domain/sso/verified`: the email whose domain the login page asks about. */
export const DomainSsoDetailsRequest = Type.Object({ email: Email });

export const VerifiedDomainSsoDetail = Type.Object({
  object: Type.Literal('verifiedOrganizationDomainSsoDetails'),
  domainName: Type.String(),
  organizationIdentifier: Type.String(),
  organizationName: Type.String(),
});
