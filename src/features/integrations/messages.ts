import { createHash, randomUUID } from 'node:crypto';
import type { Executor } from '../../db/database.js';
import type { EventRow } from '../events/events.repository.js';
import { readSetMembers } from '../../platform/audit/read-sets.js';
import { integrationStatus, IntegrationStatus, parseFilters, passes, targetOf, type FilterGroup, type IntegrationType, type Target } from './rules.js';
import { toEventResponse } from '../events/events.schemas.js';
import { needsActingUser, needsGroup, needsOrganization, needsUser, renderTemplate, type ForwardedEvent, type TemplateLookups } from './templates.js';

/** One delivery to one integration configuration, as it travels through the queues. */
export interface IntegrationMessage {
  messageId: string;
  organizationId: string;
  integrationId: string;
  configurationId: string;
  integrationType: IntegrationType;
  eventType: number;
  /** The rendered template. */
  body: string;
  target: { uri: string; scheme: string | null; token: string | null; apiKey: string | null };
  signingSecret: string;
  /** Retries already made. */
  attempt: number;
  /** Not to be tried before this time (ms since the epoch). */
  notBefore: number;
  lastError?: string;
}

/** A GUID-shaped id derived from text: the same event (and configuration) always gets the same one. */
export function stableId(text: string): string {
  const h = createHash('sha256').update(text).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

/** The event as the event log shows it (`toEventResponse`), with the id receivers can deduplicate by. */
function forwarded(row: EventRow, secretId: string | null, idempotencyId: string): ForwardedEvent {
  const { object: _object, ...event } = toEventResponse({ ...row, secret_id: secretId });
  return { ...event, idempotencyId };
}

/**
 * The events a stored row stands for: itself, or one Secret_Retrieved per secret of its read
 * set (events/read-sets.ts), each with an id of its own.
 */
export async function expandRow(db: Executor, row: EventRow): Promise<ForwardedEvent[]> {
  if (!row.read_set_id) return [forwarded(row, row.secret_id, row.id)];
  const out: ForwardedEvent[] = [];
  const page = 1000;
  for (let from = 0; ; from += page) {
    const members = await readSetMembers(db, row.read_set_id, from, page);
    for (const m of members) out.push(forwarded(row, m.secret_id, stableId(`${row.id}/${m.position}`)));
    if (members.length < page) break;
  }
  return out;
}

interface LoadedConfiguration {
  id: string;
  integrationId: string;
  organizationId: string;
  type: IntegrationType;
  eventType: number | null;
  filters: FilterGroup | null;
  template: string;
  target: Target;
  signingSecret: string;
}

/** Every usable configuration of these organizations' integrations of these types. */
async function loadConfigurations(db: Executor, organizationIds: readonly string[], types: readonly IntegrationType[]): Promise<LoadedConfiguration[]> {
  if (organizationIds.length === 0) return [];
  const rows = await db
    .selectFrom('organization_integration_configurations as c')
    .innerJoin('organization_integrations as i', 'i.id', 'c.organization_integration_id')
    .select(['c.id', 'c.event_type', 'c.configuration', 'c.filters', 'c.template', 'i.id as integration_id', 'i.organization_id', 'i.type', 'i.configuration as integration_configuration', 'i.signing_secret'])
    .where('i.organization_id', 'in', organizationIds)
    .where('i.type', 'in', types)
    .execute();
  const out: LoadedConfiguration[] = [];
  for (const row of rows) {
    if (integrationStatus(row.type, row.integration_configuration) !== IntegrationStatus.Completed || !row.template) continue;
    try {
      out.push({
        id: row.id,
        integrationId: row.integration_id,
        organizationId: row.organization_id,
        type: row.type,
        eventType: row.event_type,
        filters: row.filters ? parseFilters(row.filters) : null,
        template: row.template,
        target: targetOf(row.integration_configuration, row.configuration),
        signingSecret: row.signing_secret,
      });
    } catch {
      // Checked when saved; a configuration that no longer makes a target sends nothing.
    }
  }
  return out;
}

/** Names a template asks for, read once per batch. */
async function lookupsFor(db: Executor, template: string, event: ForwardedEvent, cache: Map<string, unknown>): Promise<TemplateLookups> {
  const lookups: TemplateLookups = {};
  const orgId = event.organizationId;
  const member = async (userId: string | null) => {
    if (!orgId || !userId) return null;
    const key = `u:${orgId}:${userId}`;
    if (!cache.has(key)) {
      const row = await db
        .selectFrom('organization_users as ou')
        .innerJoin('users as u', 'u.id', 'ou.user_id')
        .select(['u.name', 'u.email', 'ou.type'])
        .where('ou.organization_id', '=', orgId)
        .where('ou.user_id', '=', userId)
        .executeTakeFirst();
      cache.set(key, row ? { name: row.name, email: row.email, type: row.type } : null);
    }
    return cache.get(key) as TemplateLookups['user'];
  };
  if (needsUser(template)) lookups.user = await member(event.userId);
  if (needsActingUser(template)) lookups.actingUser = await member(event.actingUserId);
  if (needsGroup(template) && event.groupId) {
    const key = `g:${event.groupId}`;
    if (!cache.has(key)) cache.set(key, (await db.selectFrom('groups').select('name').where('id', '=', event.groupId).executeTakeFirst())?.name ?? null);
    lookups.groupName = cache.get(key) as string | null;
  }
  if (needsOrganization(template) && orgId) {
    const key = `o:${orgId}`;
    if (!cache.has(key)) cache.set(key, (await db.selectFrom('organizations').select('name').where('id', '=', orgId).executeTakeFirst())?.name ?? null);
    lookups.organizationName = cache.get(key) as string | null;
  }
  return lookups;
}

/**
 * The integration-level step (the official EventIntegrationHandler): for each event, every
 * configuration of its organization's integrations of these types that selects its type and
 * whose filters it passes, with the template rendered.
 */
export async function messagesFor(db: Executor, events: readonly ForwardedEvent[], types: readonly IntegrationType[], now = Date.now()): Promise<IntegrationMessage[]> {
  const orgIds = [...new Set(events.map((e) => e.organizationId).filter((id): id is string => !!id))];
  const configurations = await loadConfigurations(db, orgIds, types);
  if (configurations.length === 0) return [];
  const byOrg = new Map<string, LoadedConfiguration[]>();
  for (const c of configurations) byOrg.set(c.organizationId, [...(byOrg.get(c.organizationId) ?? []), c]);
  const cache = new Map<string, unknown>();
  const out: IntegrationMessage[] = [];
  for (const event of events) {
    for (const c of byOrg.get(event.organizationId ?? '') ?? []) {
      if (c.eventType !== null && c.eventType !== event.type) continue;
      if (c.filters && !passes(c.filters, event)) continue;
      const body = renderTemplate(c.template, event, await lookupsFor(db, c.template, event, cache));
      out.push(messageOf(c, event.type, body, stableId(`${event.idempotencyId}/${c.id}`), now));
    }
  }
  return out;
}

function messageOf(c: Omit<LoadedConfiguration, 'filters' | 'template' | 'eventType'>, eventType: number, body: string, messageId: string, now: number): IntegrationMessage {
  return {
    messageId,
    organizationId: c.organizationId,
    integrationId: c.integrationId,
    configurationId: c.id,
    integrationType: c.type,
    eventType,
    body,
    target: { uri: c.target.uri.toString(), scheme: c.target.scheme, token: c.target.token, apiKey: c.target.apiKey },
    signingSecret: c.signingSecret,
    attempt: 0,
    notBefore: now,
  };
}

/** A parked message made ready again from its integration's current settings (a fixed address takes effect). */
export async function replayMessage(
  db: Executor,
  letter: { organization_id: string; configuration_id: string; event_type: number; body: string; message_id: string },
): Promise<IntegrationMessage | null> {
  const row = await db
    .selectFrom('organization_integration_configurations as c')
    .innerJoin('organization_integrations as i', 'i.id', 'c.organization_integration_id')
    .select(['c.id', 'c.configuration', 'i.id as integration_id', 'i.organization_id', 'i.type', 'i.configuration as integration_configuration', 'i.signing_secret'])
    .where('c.id', '=', letter.configuration_id)
    .where('i.organization_id', '=', letter.organization_id)
    .executeTakeFirst();
  if (!row) return null;
  const target = targetOf(row.integration_configuration, row.configuration);
  return messageOf(
    { id: row.id, integrationId: row.integration_id, organizationId: row.organization_id, type: row.type, target, signingSecret: row.signing_secret },
    letter.event_type,
    letter.body,
    letter.message_id,
    Date.now(),
  );
}

export function newId(): string {
  return randomUUID();
}
