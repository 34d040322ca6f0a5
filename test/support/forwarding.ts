import { createHmac, randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { EventType } from '../../src/platform/audit/event-type.js';
import { saveReadSet, readSetOf } from '../../src/platform/audit/read-sets.js';
import { OrganizationUserType } from '../../src/platform/access/roles.js';
import type { Actor } from './admin.js';
import { seedMembership, seedOrganization } from './orgs.js';
import type { Received } from './webhook-receiver.js';
import type { TestServer } from './test-server.js';

/** A template naming what the tests count: the event's own id, type and secret. */
export const COUNTING_TEMPLATE = '{"id":"#IdempotencyId#","type":"#Type#","org":"#OrganizationId#","secret":"#SecretId#","actor":"#ActingUserId#"}';

export interface Hook {
  org: string;
  integrationId: string;
  signingSecret: string;
}

/** A new organization of `owner` with an integration (webhook by default) and one configuration, all through the routes. */
export async function organizationWithHook(
  server: TestServer,
  owner: Actor,
  uri: string,
  options: { type?: number; integration?: Record<string, unknown> | null; configuration?: Record<string, unknown> | null; eventType?: number | null; filters?: unknown; template?: string } = {},
): Promise<Hook> {
  const org = await seedOrganization(server);
  await seedMembership(server, { organizationId: org, userId: owner.userId, type: OrganizationUserType.Owner });
  const type = options.type ?? 4;
  const integrationConfig = options.integration === undefined ? (type === 4 ? null : { Uri: uri }) : options.integration;
  const created = await server.request('POST', `/api/organizations/${org}/integrations`, {
    token: owner.token,
    json: { type, configuration: integrationConfig ? JSON.stringify(integrationConfig) : null },
  });
  expect(created.status, created.text).toBe(200);
  const configuration = options.configuration === undefined ? (type === 4 ? { Uri: uri } : null) : options.configuration;
  const config = await server.request('POST', `/api/organizations/${org}/integrations/${created.body.id}/configurations`, {
    token: owner.token,
    json: {
      configuration: configuration ? JSON.stringify(configuration) : null,
      eventType: options.eventType ?? null,
      filters: options.filters ? JSON.stringify(options.filters) : null,
      template: options.template ?? COUNTING_TEMPLATE,
    },
  });
  expect(config.status, config.text).toBe(200);
  return { org, integrationId: created.body.id as string, signingSecret: created.body.signingSecret as string };
}

/** Commits `count` events of the organization straight to the log, as services write them; answers their ids. */
export async function emitEvents(server: TestServer, org: string, count: number, extra: { type?: EventType; acting_user_id?: string } = {}): Promise<string[]> {
  const rows = Array.from({ length: count }, () => ({
    id: randomUUID(),
    type: extra.type ?? EventType.Collection_Updated,
    organization_id: org,
    acting_user_id: extra.acting_user_id ?? null,
    date: new Date().toISOString(),
  }));
  for (let i = 0; i < rows.length; i += 500) await server.database.db.insertInto('events').values(rows.slice(i, i + 500)).execute();
  return rows.map((r) => r.id);
}

/** One stored Secret_Retrieved event standing for a read of these secrets (a read set). */
export async function emitReadSet(server: TestServer, org: string, secretIds: string[]): Promise<void> {
  const set = readSetOf(secretIds);
  await server.database.db.transaction().execute(async (tx) => {
    await saveReadSet(tx, set, new Date().toISOString());
    await tx.insertInto('events').values({ id: randomUUID(), type: EventType.Secret_Retrieved, organization_id: org, read_set_id: set.id, date: new Date().toISOString() }).execute();
  });
}

/** The ids of the events a receiver accepted, from the counting template. */
export function acceptedIds(received: readonly Received[]): string[] {
  return received.filter((r) => r.answer !== 'hang' && r.answer < 300).map((r) => (JSON.parse(r.body) as { id: string }).id);
}

/** Checks the X-Strongroom-Signature header of a delivery against the integration's secret. */
export function signatureValid(secret: string, r: Received): boolean {
  const timestamp = String(r.headers['x-strongroom-timestamp']);
  const expected = `sha256=${createHmac('sha256', secret).update(`${timestamp}.${r.body}`).digest('hex')}`;
  return r.headers['x-strongroom-signature'] === expected;
}
