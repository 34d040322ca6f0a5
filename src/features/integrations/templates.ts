import { EventType } from '../../platform/audit/event-type.js';
import { deviceTypeName } from '../devices/device-types.js';
import { OrganizationUserType } from '../../platform/access/roles.js';

/**
 * Templates as the official server renders them (IntegrationTemplateProcessor): every `#Name#`
 * whose Name is a property of the template context is replaced by that property's text,
 * escaped as a JSON string body (so a template that is a JSON document stays one); unknown
 * names stay as they are. Values follow .NET's ToString: enum names (`#Type#` is
 * `Cipher_Created`, `#TypeId#` 1100), lower-case GUIDs, `#Date#` in the invariant culture
 * (`11/24/2026 00:42:11`), `#DateIso8601#` round-trip (`2026-11-24T00:42:11.1230000Z`),
 * null as the empty string.
 */

/** One event as forwarded: the official EventMessage's fields. */
export interface ForwardedEvent {
  date: string;
  type: number;
  userId: string | null;
  organizationId: string | null;
  installationId: string | null;
  providerId: string | null;
  cipherId: string | null;
  collectionId: string | null;
  groupId: string | null;
  policyId: string | null;
  organizationUserId: string | null;
  providerUserId: string | null;
  providerOrganizationId: string | null;
  actingUserId: string | null;
  deviceType: number | null;
  ipAddress: string | null;
  /** A stable id of this event (of this secret of a read set): receivers deduplicate on it. */
  idempotencyId: string;
  systemUser: number | null;
  domainName: string | null;
  secretId: string | null;
  projectId: string | null;
  serviceAccountId: string | null;
  grantedServiceAccountId: string | null;
  sendId: string | null;
}

/** Names and details only some templates ask for, looked up when they do. */
export interface TemplateLookups {
  user?: { name: string | null; email: string | null; type: number | null } | null;
  actingUser?: { name: string | null; email: string | null; type: number | null } | null;
  groupName?: string | null;
  organizationName?: string | null;
}

const USER_TOKENS = ['#UserName#', '#UserEmail#', '#UserType#'];
const ACTING_USER_TOKENS = ['#ActingUserName#', '#ActingUserEmail#', '#ActingUserType#'];

export function needsUser(template: string): boolean {
  return USER_TOKENS.some((t) => template.includes(t));
}
export function needsActingUser(template: string): boolean {
  return ACTING_USER_TOKENS.some((t) => template.includes(t));
}
export function needsGroup(template: string): boolean {
  return template.includes('#GroupName#');
}
export function needsOrganization(template: string): boolean {
  return template.includes('#OrganizationName#');
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** .NET DateTime.ToString() in the invariant culture: `MM/dd/yyyy HH:mm:ss`. */
export function dotnetDate(iso: string): string {
  const d = new Date(iso);
  return `${pad(d.getUTCMonth() + 1)}/${pad(d.getUTCDate())}/${d.getUTCFullYear()} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
}

/** .NET's round-trip ("o") format of a UTC DateTime: seven fraction digits and Z. */
export function dotnetRoundTrip(iso: string): string {
  const d = new Date(iso);
  const fraction = /\.(\d+)/.exec(iso)?.[1] ?? '';
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}.${fraction.padEnd(7, '0').slice(0, 7)}Z`;
}

/** A DateTime as System.Text.Json writes it: round-trip form, trailing zeros of the fraction dropped. */
function jsonDate(iso: string): string {
  const full = dotnetRoundTrip(iso);
  return full.replace(/\.?0+Z$/, 'Z').replace(/\.Z$/, 'Z');
}

/**
 * A string escaped as System.Text.Json's default encoder writes a JSON string, without the
 * quotes: HTML-sensitive characters (`"` `'` `&` `<` `>` `+` `` ` ``) and everything outside
 * printable ASCII as \uXXXX, backslash and the common controls as short escapes.
 */
export function jsonEscape(value: string): string {
  let out = '';
  for (const ch of value) {
    const code = ch.codePointAt(0) ?? 0;
    switch (ch) {
      case '\\': out += '\\\\'; continue;
      case '\n': out += '\\n'; continue;
      case '\r': out += '\\r'; continue;
      case '\t': out += '\\t'; continue;
      case '\b': out += '\\b'; continue;
      case '\f': out += '\\f'; continue;
    }
    if (code >= 0x20 && code <= 0x7e && !`"'&<>+\``.includes(ch)) {
      out += ch;
      continue;
    }
    // Characters beyond the BMP are written as their two UTF-16 halves.
    for (let i = 0; i < ch.length; i++) out += `\\u${ch.charCodeAt(i).toString(16).toUpperCase().padStart(4, '0')}`;
  }
  return out;
}

/** The event as the official EventMessage serializes (PascalCase, enums as numbers, nulls written). */
export function eventMessageJson(e: ForwardedEvent): string {
  const str = (v: string | null) => (v === null ? 'null' : `"${jsonEscape(v)}"`);
  const num = (v: number | null) => (v === null ? 'null' : String(v));
  return (
    `{"Date":"${jsonDate(e.date)}","Type":${e.type},"UserId":${str(e.userId)},"OrganizationId":${str(e.organizationId)},` +
    `"InstallationId":${str(e.installationId)},"ProviderId":${str(e.providerId)},"CipherId":${str(e.cipherId)},` +
    `"CollectionId":${str(e.collectionId)},"GroupId":${str(e.groupId)},"PolicyId":${str(e.policyId)},` +
    `"OrganizationUserId":${str(e.organizationUserId)},"ProviderUserId":${str(e.providerUserId)},` +
    `"ProviderOrganizationId":${str(e.providerOrganizationId)},"ActingUserId":${str(e.actingUserId)},` +
    `"DeviceType":${num(e.deviceType)},"IpAddress":${str(e.ipAddress)},"IdempotencyId":${str(e.idempotencyId)},` +
    `"SystemUser":${num(e.systemUser)},"DomainName":${str(e.domainName)},"SecretId":${str(e.secretId)},` +
    `"ProjectId":${str(e.projectId)},"ServiceAccountId":${str(e.serviceAccountId)},` +
    `"GrantedServiceAccountId":${str(e.grantedServiceAccountId)},"SendId":${str(e.sendId)}}`
  );
}

const userTypeName = (type: number | null | undefined) => (type === null || type === undefined ? null : (OrganizationUserType[type] ?? String(type)));

/** The template context's properties (the official IntegrationTemplateContext), as text or null. */
function contextValues(e: ForwardedEvent, lookups: TemplateLookups): Record<string, () => string | null> {
  return {
    DomainName: () => e.domainName,
    IpAddress: () => e.ipAddress,
    DeviceType: () => (e.deviceType === null ? null : (deviceTypeName(e.deviceType) ?? String(e.deviceType))),
    DeviceTypeId: () => (e.deviceType === null ? null : String(e.deviceType)),
    ActingUserId: () => e.actingUserId,
    OrganizationUserId: () => e.organizationUserId,
    Date: () => dotnetDate(e.date),
    Type: () => EventType[e.type] ?? String(e.type),
    TypeId: () => String(e.type),
    UserId: () => e.userId,
    OrganizationId: () => e.organizationId,
    CipherId: () => e.cipherId,
    CollectionId: () => e.collectionId,
    GroupId: () => e.groupId,
    PolicyId: () => e.policyId,
    IdempotencyId: () => e.idempotencyId,
    ProviderId: () => e.providerId,
    ProviderUserId: () => e.providerUserId,
    ProviderOrganizationId: () => e.providerOrganizationId,
    InstallationId: () => e.installationId,
    SecretId: () => e.secretId,
    ProjectId: () => e.projectId,
    ServiceAccountId: () => e.serviceAccountId,
    GrantedServiceAccountId: () => e.grantedServiceAccountId,
    DateIso8601: () => dotnetRoundTrip(e.date),
    EventMessage: () => eventMessageJson(e),
    UserName: () => lookups.user?.name ?? null,
    UserEmail: () => lookups.user?.email ?? null,
    UserType: () => userTypeName(lookups.user?.type),
    ActingUserName: () => lookups.actingUser?.name ?? null,
    ActingUserEmail: () => lookups.actingUser?.email ?? null,
    ActingUserType: () => userTypeName(lookups.actingUser?.type),
    GroupName: () => lookups.groupName ?? null,
    OrganizationName: () => lookups.organizationName ?? null,
    SystemUser: () => (e.systemUser === null ? null : String(e.systemUser)),
  };
}

/** The template with every known `#Name#` replaced from the event. */
export function renderTemplate(template: string, event: ForwardedEvent, lookups: TemplateLookups = {}): string {
  if (!template) return template;
  const values = contextValues(event, lookups);
  return template.replace(/#(\w+)#/g, (match, name: string) => {
    const value = Object.hasOwn(values, name) ? values[name] : undefined;
    if (!value) return match;
    return jsonEscape(value() ?? '');
  });
}
