import { isIP } from 'node:net';
import { BadRequest } from '../../http/errors.js';
import { MemberDecryptionType, SsoType, type SsoConfigData } from './sso-config.repository.js';
import type { OrganizationSsoRequest } from './sso-config.schemas.js';

/**
 * What an SSO configuration may hold, checked before anything is fetched or written: the
 * official request's rules (authority, client id and secret for OpenID Connect) and ours (only
 * OpenID Connect, no Key Connector, URLs that are URLs, bounded claim lists). Each refusal is a
 * 400 naming its field.
 */

/** A claim or scope list: at most this many entries, each at most CLAIM_MAX characters. */
export const LIST_MAX = 20;
const CLAIM_MAX = 200;

const field = (name: string, message: string) => BadRequest.field(name, message);

function blank(value: string | null | undefined): value is null | undefined | '' {
  return value === null || value === undefined || value.trim() === '';
}

/** Loopback by name or address: the only hosts reached over plain http (a local identity provider, tests). */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  if (isIP(host) === 6) return host === '::1' || /^::ffff:(127\.|7f)/.test(host);
  return false;
}

/** An absolute https URL (http for loopback hosts) without credentials or fragment; the parsed URL. */
export function providerUrl(name: string, value: string): URL {
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw field(name, `${name} must be an absolute URL, such as https://idp.example.com/realms/acme.`);
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(url.hostname))) {
    throw field(name, `${name} must be an https URL (plain http only for a loopback address such as 127.0.0.1).`);
  }
  if (url.username || url.password) throw field(name, `${name} must not carry a user name or password.`);
  if (url.hash) throw field(name, `${name} must not have a fragment (#...).`);
  return url;
}

/** A comma- or space-separated list of claim names or scopes, bounded; stored as given, trimmed. */
function claimList(name: string, value: string | null | undefined): string | null {
  if (blank(value)) return null;
  const entries = value.split(/[\s,]+/).filter(Boolean);
  if (entries.length > LIST_MAX) throw field(name, `${name} may name at most ${LIST_MAX} entries.`);
  for (const entry of entries) {
    if (entry.length > CLAIM_MAX) throw field(name, `${name}: each entry may be at most ${CLAIM_MAX} characters.`);
    // eslint-disable-next-line no-control-regex
    if (/[\x00-\x1f\x7f"<>]/.test(entry)) throw field(name, `${name}: "${entry.slice(0, 40)}" is not a claim or scope name.`);
  }
  return value.trim();
}

function optionalText(value: string | null | undefined): string | null {
  return blank(value) ? null : value.trim();
}

const SAML_FIELDS = ['idpEntityId', 'idpSingleSignOnServiceUrl', 'idpSingleLogoutServiceUrl', 'idpX509PublicCert'] as const;

export interface CheckedSso {
  enabled: boolean;
  identifier: string | null;
  /** The settings to store, `clientSecret` still plain: '' when the request kept the stored one. */
  data: SsoConfigData;
  /** A new secret was given. */
  newSecret: boolean;
}

/**
 * Checks a save against the rules; `hasStoredSecret` says whether an empty secret may keep the
 * stored one. The answer has the data to store (the secret not yet sealed).
 */
export function checkSsoRequest(body: OrganizationSsoRequest, hasStoredSecret: boolean): CheckedSso {
  const { data, enabled } = body;
  const identifier = optionalText(body.identifier);
  // eslint-disable-next-line no-control-regex
  if (identifier !== null && /[\x00-\x1f\x7f]/.test(identifier)) throw field('identifier', 'The SSO identifier must not contain control characters.');
  if (enabled && identifier === null) throw field('identifier', 'An SSO identifier is required to turn single sign-on on; members type it on the login page.');

  if (data.configType === SsoType.Saml2) {
    throw field('data.configType', 'SAML 2.0 is not offered yet; choose OpenID Connect (configType 1).');
  }
  if (data.configType !== SsoType.OpenIdConnect && !(data.configType === 0 && !enabled)) {
    throw field('data.configType', 'The SSO type must be OpenID Connect (configType 1).');
  }
  if (SAML_FIELDS.some((name) => !blank(data[name]))) {
    throw field('data.configType', 'SAML 2.0 is not offered yet; leave the SAML fields empty.');
  }

  const decryption = data.keyConnectorEnabled === true ? MemberDecryptionType.KeyConnector : (data.memberDecryptionType ?? MemberDecryptionType.MasterPassword);
  if (decryption === MemberDecryptionType.KeyConnector) {
    throw field('data.memberDecryptionType', 'Key Connector is not offered; choose master password (0) or trusted devices (2).');
  }
  if (decryption !== MemberDecryptionType.MasterPassword && decryption !== MemberDecryptionType.TrustedDeviceEncryption) {
    throw field('data.memberDecryptionType', 'The member decryption option must be master password (0) or trusted devices (2).');
  }
  const redirectBehavior = data.redirectBehavior ?? 0;
  if (redirectBehavior !== 0 && redirectBehavior !== 1) throw field('data.redirectBehavior', 'The OIDC redirect behavior must be 0 (redirect GET) or 1 (form POST).');

  const openId = data.configType === SsoType.OpenIdConnect;
  // Required to turn SSO on; a disabled configuration may be saved half-filled, but what it has must be well formed.
  if (enabled && blank(data.authority)) throw field('data.authority', 'The authority (the identity provider URL) is required.');
  if (enabled && blank(data.clientId)) throw field('data.clientId', 'The client ID is required.');
  if (enabled && blank(data.clientSecret) && !hasStoredSecret) throw field('data.clientSecret', 'The client secret is required.');
  // Stored as typed (trimmed): the login flow and the issuer check use the admin's own URL.
  const authority = blank(data.authority) ? '' : (providerUrl('data.authority', data.authority), data.authority.trim());
  const metadataAddress = blank(data.metadataAddress) ? null : (providerUrl('data.metadataAddress', data.metadataAddress), data.metadataAddress.trim());
  // The login (openid-client) fetches only an address with /.well-known/ as given; any other it
  // takes for an issuer and appends the well-known path to.
  if (metadataAddress !== null && !metadataAddress.includes('/.well-known/')) {
    throw field('data.metadataAddress', 'The metadata address must be the full address of the discovery document, with /.well-known/ in it (such as https://idp.example.com/.well-known/openid-configuration); or leave it empty to use the authority\'s.');
  }
  const clientId = optionalText(data.clientId) ?? '';
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x1f\x7f]/.test(clientId)) throw field('data.clientId', 'The client ID must not contain control characters.');

  const stored: SsoConfigData = {
    configType: openId ? SsoType.OpenIdConnect : 0,
    memberDecryptionType: decryption,
    keyConnectorUrl: null,
    authority,
    clientId,
    clientSecret: blank(data.clientSecret) ? '' : data.clientSecret,
    metadataAddress,
    redirectBehavior,
    getClaimsFromUserInfoEndpoint: data.getClaimsFromUserInfoEndpoint === true,
    additionalScopes: claimList('data.additionalScopes', data.additionalScopes),
    additionalUserIdClaimTypes: claimList('data.additionalUserIdClaimTypes', data.additionalUserIdClaimTypes),
    additionalEmailClaimTypes: claimList('data.additionalEmailClaimTypes', data.additionalEmailClaimTypes),
    additionalNameClaimTypes: claimList('data.additionalNameClaimTypes', data.additionalNameClaimTypes),
    acrValues: claimList('data.acrValues', data.acrValues),
    expectedReturnAcrValue: optionalText(data.expectedReturnAcrValue),
  };
  return { enabled, identifier, data: stored, newSecret: !blank(data.clientSecret) };
}

/**
 * A save without a secret keeps the stored one, but only for the provider it was given for:
 * otherwise a member who may manage SSO could point the authority, metadata address or client
 * ID at a provider of their own and have the real secret posted there at the next login.
 */
export function checkKeptSecret(stored: SsoConfigData | undefined, checked: CheckedSso): void {
  if (checked.newSecret || !stored || (stored.clientSecret ?? '') === '') return;
  const changed = [
    ...((stored.authority ?? '') !== checked.data.authority ? ['authority'] : []),
    ...((stored.metadataAddress ?? null) !== checked.data.metadataAddress ? ['metadata address'] : []),
    ...((stored.clientId ?? '') !== checked.data.clientId ? ['client ID'] : []),
  ];
  if (changed.length > 0) {
    throw field('data.clientSecret', `The client secret is required when the ${changed.join(', ')} changes: the stored secret is only sent to the provider it was saved for.`);
  }
}
