import type { Executor } from '../../db/database.js';
import { PolicyType } from './policy-type.js';
import { bindingPolicies } from './policies.repository.js';

/**
 * The organizations whose Require single sign-on policy (4) binds the user, as the official
 * RequireSsoPolicyRequirement reads them since July 2026 (policies bind from acceptance on):
 * accepted or confirmed memberships of enabled organizations that use policies, other than Owner
 * or Admin, which the official server exempts. One query.
 */
async function requiringOrganizations(db: Executor, userId: string): Promise<{ id: string; identifier: string | null }[]> {
  return (await bindingPolicies(db, userId, [PolicyType.RequireSso])).map((p) => ({ id: p.organizationId, identifier: p.identifier }));
}

/**
 * Whether Require single sign-on binds the user at login: then the identity service refuses
 * password, device-request and passkey logins; SSO and the personal API key are let in, as
 * officially.
 */
export async function ssoRequiredFor(db: Executor, userId: string): Promise<boolean> {
  return (await requiringOrganizations(db, userId)).length > 0;
}

/**
 * The SSO identifier a refused login names (`SsoOrganizationIdentifier`), so clients go straight
 * to that organization's sign-in: as the official SsoRequestValidator, only when exactly one
 * organization requires SSO of the user, and it has an identifier.
 */
export async function ssoOrganizationIdentifierOf(db: Executor, userId: string): Promise<string | null> {
  const orgs = await requiringOrganizations(db, userId);
  return orgs.length === 1 ? (orgs[0]?.identifier || null) : null;
}

/** The official MemberDecryptionType values the policies depend on (features/sso/sso-config.repository.ts). */
const KEY_CONNECTOR = 1;
const TRUSTED_DEVICES = 2;

/**
 * How members of the organization unlock after SSO (the official MemberDecryptionType) when its
 * SSO configuration is enabled; null when there is none or it is off. Read here rather than
 * through the SSO feature, which sits above the policies.
 */
export async function enabledSsoDecryption(db: Executor, organizationId: string): Promise<number | null> {
  const row = await db.selectFrom('sso_configs').select(['enabled', 'data']).where('organization_id', '=', organizationId).executeTakeFirst();
  if (!row?.enabled) return null;
  try {
    const data: unknown = JSON.parse(row.data);
    const type = typeof data === 'object' && data !== null ? (data as Record<string, unknown>).memberDecryptionType : undefined;
    return typeof type === 'number' ? type : null;
  } catch {
    return null;
  }
}

/**
 * The refusal, in the official words, of saving a policy that the organization's enabled SSO
 * decryption option needs (the official PolicyValidatorHelpers): trusted device encryption holds
 * Require single sign-on on, and Account recovery administration on with automatic enrolment;
 * Key Connector holds Require single sign-on and Single organization on. Null when nothing holds.
 */
export function ssoDecryptionHolds(type: PolicyType, enabling: boolean, data: Record<string, unknown> | null, decryption: number | null): string | null {
  if (decryption === TRUSTED_DEVICES) {
    const turnedOff = !enabling || (type === PolicyType.ResetPassword && data?.autoEnrollEnabled !== true);
    if (turnedOff && (type === PolicyType.RequireSso || type === PolicyType.ResetPassword)) return 'Trusted device encryption is on and requires this policy.';
  }
  if (decryption === KEY_CONNECTOR && !enabling && (type === PolicyType.RequireSso || type === PolicyType.SingleOrg)) {
    return 'Key Connector is enabled and requires this policy.';
  }
  return null;
}
