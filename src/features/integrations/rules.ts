import { BadRequest } from '../../http/errors.js';
import { EventType } from '../../platform/audit/event-type.js';
import type { ForwardedEvent } from './templates.js';

/** The official IntegrationType values Strongroom forwards to. */
export enum IntegrationType {
  Slack = 3,
  Webhook = 4,
  Hec = 5,
  Datadog = 6,
  Teams = 7,
}

/** The official OrganizationIntegrationStatus. */
export enum IntegrationStatus {
  NotApplicable = 0,
  Invalid = 1,
  Initiated = 2,
  InProgress = 3,
  Completed = 4,
}

export const INTEGRATION_TYPES: readonly IntegrationType[] = [IntegrationType.Slack, IntegrationType.Webhook, IntegrationType.Hec, IntegrationType.Datadog, IntegrationType.Teams];

export function routingKey(type: IntegrationType): string {
  return IntegrationType[type].toLowerCase();
}

/** Where and how one delivery goes: the integration's configuration merged with the configuration's. */
export interface Target {
  uri: URL;
  scheme: string | null;
  token: string | null;
  apiKey: string | null;
}

type Json = Record<string, unknown>;

/** A JSON object from a configuration string; keys are matched without regard to case, as the web vault and hand-written JSON differ. */
function parseObject(text: string | null | undefined, field: string, what: string): Json | null {
  if (text === null || text === undefined || text.trim() === '') return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw BadRequest.field(field, `Must include valid ${what} configuration (a JSON object).`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw BadRequest.field(field, `Must include valid ${what} configuration (a JSON object).`);
  return value as Json;
}

function pick(obj: Json | null, key: string): unknown {
  if (!obj) return undefined;
  const found = Object.keys(obj).find((k) => k.toLowerCase() === key.toLowerCase());
  return found === undefined ? undefined : obj[found];
}

function optionalString(obj: Json | null, key: string, field: string): string | null {
  const value = pick(obj, key);
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw BadRequest.field(field, `${key} must be a string.`);
  return value;
}

function httpUri(obj: Json | null, key: string, field: string, required: boolean): URL | null {
  const value = optionalString(obj, key, field);
  if (value === null || value === '') {
    if (required) throw BadRequest.field(field, `${key} is required: the http(s) address events are sent to.`);
    return null;
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw BadRequest.field(field, `${key} must be an absolute http or https URL.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw BadRequest.field(field, `${key} must be an absolute http or https URL.`);
  if (url.username || url.password) throw BadRequest.field(field, `${key} must not carry a user name or password; use Scheme and Token.`);
  return url;
}

const NAMES: Record<IntegrationType, string> = {
  [IntegrationType.Slack]: 'SlackIntegration',
  [IntegrationType.Webhook]: 'WebhookIntegration',
  [IntegrationType.Hec]: 'HecIntegration',
  [IntegrationType.Datadog]: 'DatadogIntegration',
  [IntegrationType.Teams]: 'TeamsIntegration',
};

/** Checks an integration's own configuration (POST/PUT /organizations/{id}/integrations). */
export function validateIntegrationConfiguration(type: number, configuration: string | null | undefined): void {
  if (!INTEGRATION_TYPES.includes(type)) {
    if (type === 1 || type === 2) throw BadRequest.field('type', `Type integrations are not yet supported.`);
    throw BadRequest.field('type', `Integration type '${type}' is not recognized.`);
  }
  const kind = type as IntegrationType;
  const field = 'configuration';
  const obj = parseObject(configuration, field, NAMES[kind]);
  switch (kind) {
    case IntegrationType.Webhook:
      // May be empty: each configuration then names its own Uri.
      httpUri(obj, 'Uri', field, false);
      optionalString(obj, 'Scheme', field);
      optionalString(obj, 'Token', field);
      return;
    case IntegrationType.Hec:
      if (!obj) throw BadRequest.field(field, `Must include valid ${NAMES[kind]} configuration.`);
      httpUri(obj, 'Uri', field, true);
      if (!optionalString(obj, 'Scheme', field)) throw BadRequest.field(field, 'Scheme is required (Splunk HEC uses "Splunk").');
      if (!optionalString(obj, 'Token', field)) throw BadRequest.field(field, 'Token is required: the HEC token.');
      optionalString(obj, 'Service', field);
      return;
    case IntegrationType.Datadog:
      if (!obj) throw BadRequest.field(field, `Must include valid ${NAMES[kind]} configuration.`);
      httpUri(obj, 'Uri', field, true);
      if (!optionalString(obj, 'ApiKey', field)) throw BadRequest.field(field, 'ApiKey is required: the Datadog API key.');
      return;
    case IntegrationType.Slack:
    case IntegrationType.Teams:
      // Strongroom posts to an incoming-webhook address the admin makes in Slack or Teams (no OAuth app).
      if (!obj) throw BadRequest.field(field, `Must include valid ${NAMES[kind]} configuration: {"Uri": "<incoming webhook URL>"}.`);
      httpUri(obj, 'Uri', field, true);
      return;
  }
}

/** The official status of an integration as its configuration stands. */
export function integrationStatus(type: number, configuration: string | null): IntegrationStatus {
  const blank = configuration === null || configuration.trim() === '';
  switch (type as IntegrationType) {
    case IntegrationType.Webhook:
      return IntegrationStatus.Completed;
    case IntegrationType.Slack:
    case IntegrationType.Teams:
      return blank ? IntegrationStatus.Initiated : IntegrationStatus.Completed;
    case IntegrationType.Hec:
    case IntegrationType.Datadog:
      return blank ? IntegrationStatus.Invalid : IntegrationStatus.Completed;
    default:
      return IntegrationStatus.NotApplicable;
  }
}

/** Checks a configuration's own fields against its integration's type. */
export function validateConfiguration(type: IntegrationType, input: { configuration: string | null; eventType: number | null; filters: string | null; template: string | null }): void {
  if (input.template === null || input.template.trim() === '') throw BadRequest.field('template', 'A template is required: the body sent for each event.');
  if (input.eventType !== null && EventType[input.eventType] === undefined) throw BadRequest.field('eventType', `${input.eventType} is not an event type.`);
  if (input.filters !== null) parseFilters(input.filters);
  const obj = parseObject(input.configuration, 'configuration', NAMES[type]);
  switch (type) {
    case IntegrationType.Webhook:
      if (!obj) throw BadRequest.field('configuration', 'Must include valid WebhookIntegrationConfiguration configuration.');
      httpUri(obj, 'Uri', 'configuration', false);
      optionalString(obj, 'Scheme', 'configuration');
      optionalString(obj, 'Token', 'configuration');
      return;
    case IntegrationType.Slack:
    case IntegrationType.Teams:
      // Optional: another incoming webhook (another channel) for this configuration.
      httpUri(obj, 'Uri', 'configuration', false);
      return;
    case IntegrationType.Hec:
    case IntegrationType.Datadog:
      if (obj) throw BadRequest.field('configuration', `${IntegrationType[type]} configurations take no configuration of their own (null); the integration holds it.`);
      return;
  }
}

/** The delivery target of a configuration: its own fields over its integration's. */
export function targetOf(integrationConfiguration: string | null, configuration: string | null): Target {
  const merged: Json = { ...(parseObject(integrationConfiguration, 'configuration', 'integration') ?? {}) };
  const own = parseObject(configuration, 'configuration', 'configuration') ?? {};
  for (const [key, value] of Object.entries(own)) {
    for (const existing of Object.keys(merged)) if (existing.toLowerCase() === key.toLowerCase()) delete merged[existing];
    merged[key] = value;
  }
  const uri = httpUri(merged, 'Uri', 'configuration', true) as URL;
  return { uri, scheme: optionalString(merged, 'Scheme', 'configuration'), token: optionalString(merged, 'Token', 'configuration'), apiKey: optionalString(merged, 'ApiKey', 'configuration') };
}

// ---------------------------------------------------------------------------------------
// Filters (the official IntegrationFilterGroup)
// ---------------------------------------------------------------------------------------

/** Event fields a rule may test (the official filterable properties). */
const FILTERABLE = {
  UserId: 'userId',
  InstallationId: 'installationId',
  ProviderId: 'providerId',
  CipherId: 'cipherId',
  CollectionId: 'collectionId',
  GroupId: 'groupId',
  PolicyId: 'policyId',
  OrganizationUserId: 'organizationUserId',
  ProviderUserId: 'providerUserId',
  ProviderOrganizationId: 'providerOrganizationId',
  ActingUserId: 'actingUserId',
  SecretId: 'secretId',
  ServiceAccountId: 'serviceAccountId',
} as const satisfies Record<string, keyof ForwardedEvent>;

export enum FilterOperation {
  Equals = 0,
  NotEquals = 1,
  In = 2,
  NotIn = 3,
}

export interface FilterRule {
  property: keyof typeof FILTERABLE;
  operation: FilterOperation;
  values: string[];
}

export interface FilterGroup {
  and: boolean;
  rules: FilterRule[];
  groups: FilterGroup[];
}

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function parseGroup(value: unknown, path: string): FilterGroup {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw BadRequest.field('filters', `${path} must be a filter group object.`);
  const obj = value as Json;
  const and = pick(obj, 'AndOperator');
  if (and !== undefined && typeof and !== 'boolean') throw BadRequest.field('filters', `${path}.AndOperator must be true or false.`);
  const rules = pick(obj, 'Rules') ?? [];
  const groups = pick(obj, 'Groups') ?? [];
  if (!Array.isArray(rules)) throw BadRequest.field('filters', `${path}.Rules must be an array.`);
  if (!Array.isArray(groups)) throw BadRequest.field('filters', `${path}.Groups must be an array.`);
  return {
    and: and !== false,
    rules: rules.map((rule, i) => parseRule(rule, `${path}.Rules[${i}]`)),
    groups: groups.map((group, i) => parseGroup(group, `${path}.Groups[${i}]`)),
  };
}

function parseRule(value: unknown, path: string): FilterRule {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw BadRequest.field('filters', `${path} must be a rule object.`);
  const obj = value as Json;
  const property = pick(obj, 'Property');
  if (typeof property !== 'string' || !Object.hasOwn(FILTERABLE, property)) {
    throw BadRequest.field('filters', `${path}.Property must be one of ${Object.keys(FILTERABLE).join(', ')}.`);
  }
  const operation = pick(obj, 'Operation');
  if (typeof operation !== 'number' || FilterOperation[operation] === undefined) throw BadRequest.field('filters', `${path}.Operation must be 0 (Equals), 1 (NotEquals), 2 (In) or 3 (NotIn).`);
  const raw = pick(obj, 'Value');
  const op = operation as FilterOperation;
  const list = op === FilterOperation.In || op === FilterOperation.NotIn;
  if (list ? !Array.isArray(raw) : typeof raw !== 'string') throw BadRequest.field('filters', `${path}.Value must be ${list ? 'an array of GUIDs' : 'a GUID'}.`);
  const values = (list ? (raw as unknown[]) : [raw]).map((v) => {
    if (typeof v !== 'string' || !GUID.test(v)) throw BadRequest.field('filters', `${path}.Value must hold GUIDs only.`);
    return v.toLowerCase();
  });
  return { property: property as keyof typeof FILTERABLE, operation: op, values };
}

/** Parses and checks a configuration's filters (JSON text). */
export function parseFilters(text: string): FilterGroup {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw BadRequest.field('filters', 'Filters must be a JSON filter group, e.g. {"AndOperator":true,"Rules":[{"Property":"ActingUserId","Operation":0,"Value":"<guid>"}]}.');
  }
  return parseGroup(value, 'Filters');
}

/** Whether the event passes the group: all (AndOperator) or any of its rules and inner groups. */
export function passes(group: FilterGroup, event: ForwardedEvent): boolean {
  const results = [...group.rules.map((rule) => passesRule(rule, event)), ...group.groups.map((inner) => passes(inner, event))];
  return group.and ? results.every(Boolean) : results.some(Boolean);
}

function passesRule(rule: FilterRule, event: ForwardedEvent): boolean {
  const actual = event[FILTERABLE[rule.property]];
  const value = typeof actual === 'string' ? actual.toLowerCase() : null;
  const found = value !== null && rule.values.includes(value);
  switch (rule.operation) {
    case FilterOperation.Equals:
    case FilterOperation.In:
      return found;
    case FilterOperation.NotEquals:
    case FilterOperation.NotIn:
      return !found;
  }
}
