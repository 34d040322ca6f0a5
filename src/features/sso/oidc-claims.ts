import type { SsoConfigData } from './sso-config.repository.js';

/**
 * Who the identity provider says the person is, read from its claims with the organization's
 * claim names first and then the official server's defaults (its SSO AccountController: the
 * external id from `sub`, then `nameid`, `uid`, `upn`, `eppn`; the email from `email` and the
 * SAML/WS-Fed names, then `preferred_username` or `uid` when it looks like an address; the name
 * from `name`, or the given and family names).
 */

const WS = 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims';
const USER_ID_CLAIMS = ['sub', `${WS}/nameidentifier`, 'uid', 'upn', 'eppn'];
const EMAIL_CLAIMS = ['email', `${WS}/emailaddress`, 'urn:oid:0.9.2342.19200300.100.1.3', 'mail', 'emailaddress'];
const USERNAME_CLAIMS = ['preferred_username', 'urn:oid:0.9.2342.19200300.100.1.1', 'uid'];
const NAME_CLAIMS = ['name', `${WS}/name`, 'urn:oid:2.16.840.1.113730.3.1.241', 'urn:oid:2.5.4.3', 'displayname', 'cn'];
const GIVEN_NAME_CLAIMS = ['given_name', 'urn:oid:2.5.4.42', 'givenname', 'firstname', 'fn', 'fname', 'nickname'];
const SURNAME_CLAIMS = ['family_name', 'urn:oid:2.5.4.4', 'sn', 'surname', 'lastname'];

export interface ExternalIdentity {
  externalId: string;
  email: string | null;
  /** The provider's `email_verified`: null when it does not say. */
  emailVerified: boolean | null;
  name: string | null;
}

/** The configured claim names: the official form takes them separated by commas (spaces too, here). */
export function claimNames(list: string | null | undefined): string[] {
  return (list ?? '').split(/[\s,]+/).filter(Boolean);
}

function text(value: unknown): string | null {
  if (typeof value === 'string' && value.trim() !== '') return value.trim();
  if (typeof value === 'number') return String(value);
  if (Array.isArray(value)) return text(value[0]);
  return null;
}

function first(claims: Record<string, unknown>, names: readonly string[], accept: (value: string) => boolean = () => true): string | null {
  for (const name of names) {
    const value = text(claims[name]);
    if (value !== null && accept(value)) return value;
  }
  return null;
}

function verified(value: unknown): boolean | null {
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  return null;
}

/** `null` when no claim names the person (the caller refuses the login with that). */
export function identityOf(claims: Record<string, unknown>, data: SsoConfigData): ExternalIdentity | null {
  const externalId = first(claims, [...claimNames(data.additionalUserIdClaimTypes), ...USER_ID_CLAIMS]);
  if (externalId === null) return null;
  const isAddress = (value: string) => value.includes('@');
  const email = first(claims, [...claimNames(data.additionalEmailClaimTypes), ...EMAIL_CLAIMS], isAddress) ?? first(claims, USERNAME_CLAIMS, isAddress);
  const given = first(claims, GIVEN_NAME_CLAIMS);
  const surname = first(claims, SURNAME_CLAIMS);
  const name = first(claims, [...claimNames(data.additionalNameClaimTypes), ...NAME_CLAIMS]) ?? ([given, surname].filter(Boolean).join(' ') || null);
  return { externalId, email: email?.toLowerCase() ?? null, emailVerified: verified(claims.email_verified), name };
}
