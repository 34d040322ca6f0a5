import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actor, custom, ENC, orgWithOwner, type Actor } from '../../../test/support/admin.js';
import { testClock } from '../../../test/support/clock.js';
import { seedMembership, seedOrganization } from '../../../test/support/orgs.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { OrganizationUserType } from '../../platform/access/roles.js';
import { EventType } from '../../platform/audit/event-type.js';
import { eventWindow } from './events.service.js';

interface Listed {
  object: string;
  type: number;
  date: string;
  collectionId: string | null;
  groupId: string | null;
  actingUserId: string | null;
  organizationId: string | null;
  ipAddress: string | null;
  deviceType: number | null;
}

const NOW = new Date('2026-11-22T12:00:00.000Z');
const clock = testClock(NOW);
let server: TestServer;
let org: string;
let otherOrg: string;
let owner: Actor;
let auditor: Actor;
let plain: Actor;
let stranger: Actor;

const eventsPath = (orgId = org, query = '') => `/api/organizations/${orgId}/events${query}`;

/** Stored events written straight into the table: dates and counts a test needs, fast. */
async function seedEvents(organizationId: string, dates: string[], extra: { collection_id?: string; acting_user_id?: string } = {}) {
  const rows = dates.map((date) => ({ id: randomUUID(), type: EventType.Collection_Updated, organization_id: organizationId, date, ...extra }));
  for (let i = 0; i < rows.length; i += 50) await server.database.db.insertInto('events').values(rows.slice(i, i + 50)).execute();
}

/** Another organization of the same owner, with a log of its own. */
async function ownedOrganization(): Promise<string> {
  const id = await seedOrganization(server);
  await seedMembership(server, { organizationId: id, userId: owner.userId, type: OrganizationUserType.Owner });
  return id;
}

beforeAll(async () => {
  server = await startTestServer({ clock });
  ({ org, owner, otherOrg, stranger } = await orgWithOwner(server));
  auditor = await actor(server, org, 'auditor@example.com', custom('accessEventLogs'));
  plain = await actor(server, org, 'plain@example.com', { type: OrganizationUserType.User });
}, 120_000);

afterAll(async () => {
  await server?.close();
});

describe('GET /organizations/{orgId}/events', () => {
  it('lists the server-side audit events of administrative changes, newest first, with who and from where', async () => {
    const created = await server.request('POST', `/api/organizations/${org}/collections`, {
      token: owner.token,
      json: { name: ENC, externalId: null, groups: [], users: [] },
      headers: { 'device-type': '9' },
    });
    expect(created.status, created.text).toBe(200);
    const collectionId = created.body.id as string;
    clock.advance(1000);
    const group = await server.request('POST', `/api/organizations/${org}/groups`, { token: owner.token, json: { name: 'Auditors', accessAll: false, collections: [], users: [] } });
    expect(group.status, group.text).toBe(200);

    const res = await server.request('GET', eventsPath(), { token: auditor.token });
    expect(res.status, res.text).toBe(200);
    expect(res.body.object).toBe('list');
    expect(res.body.continuationToken).toBeNull();
    const data = res.body.data as Listed[];
    expect(data.slice(0, 2).map((e) => e.type)).toEqual([EventType.Group_Created, EventType.Collection_Created]);
    expect(data[0]).toMatchObject({ object: 'event', groupId: group.body.id, actingUserId: owner.userId, organizationId: org });
    expect(data[1]).toMatchObject({ collectionId, actingUserId: owner.userId, deviceType: 9, date: NOW.toISOString() });
    // Every field of the official EventResponseModel is there, null where this server has nothing.
    expect(Object.keys(data[1] ?? {})).toEqual(
      expect.arrayContaining(['providerId', 'installationId', 'systemUser', 'domainName', 'secretId', 'grantedServiceAccountId', 'sendId', 'ipAddress']),
    );
  });

  it('filters by acting user and by the item the event is about', async () => {
    const collectionId = randomUUID();
    const someone = randomUUID();
    await seedEvents(org, [NOW.toISOString(), NOW.toISOString()], { collection_id: collectionId });
    await seedEvents(org, [NOW.toISOString()], { acting_user_id: someone });

    const byItem = await server.request('GET', eventsPath(org, `?itemId=${collectionId.toUpperCase()}`), { token: owner.token });
    expect(byItem.status, byItem.text).toBe(200);
    expect((byItem.body.data as Listed[]).map((e) => e.collectionId)).toEqual([collectionId, collectionId]);

    const byActor = await server.request('GET', eventsPath(org, `?actingUserId=${someone}`), { token: owner.token });
    expect((byActor.body.data as Listed[]).map((e) => e.actingUserId)).toEqual([someone]);
  });

  it('pages through many events, 50 at a time, without skipping events that share a date', async () => {
    const busy = await ownedOrganization();
    // 120 events over 3 dates: 40 share each date, so every page boundary falls inside a date.
    const dates = [0, 1, 2].flatMap((d) => Array.from({ length: 40 }, () => new Date(NOW.getTime() - d * 3_600_000).toISOString()));
    await seedEvents(busy, dates);

    const seen: string[] = [];
    const pages: number[] = [];
    let token: string | null = null;
    do {
      const query: string = token ? `?continuationToken=${encodeURIComponent(token)}` : '';
      const res = await server.request('GET', eventsPath(busy, query), { token: owner.token });
      expect(res.status, res.text).toBe(200);
      const data = res.body.data as (Listed & { date: string })[];
      pages.push(data.length);
      seen.push(...data.map((e) => e.date));
      token = res.body.continuationToken as string | null;
    } while (token);
    expect(pages).toEqual([50, 50, 20]);
    expect(seen).toEqual([...dates].sort().reverse());
    const ids = await server.database.db.selectFrom('events').select('id').where('organization_id', '=', busy).execute();
    expect(ids).toHaveLength(120);
  });

  it('reads the last 30 days by default, and a given window otherwise', async () => {
    const dated = await ownedOrganization();
    await seedEvents(dated, ['2026-10-22T23:59:59.999Z', '2026-10-23T00:00:00.000Z', '2026-11-22T23:00:00.000Z', '2025-06-01T00:00:00.000Z']);
    const dates = async (query: string) => {
      const res = await server.request('GET', eventsPath(dated, query), { token: owner.token });
      expect(res.status, res.text).toBe(200);
      return (res.body.data as Listed[]).map((e) => e.date);
    };
    expect(await dates('')).toEqual(['2026-11-22T23:00:00.000Z', '2026-10-23T00:00:00.000Z']);
    // One bound alone falls back to the default window, as the official server does.
    expect(await dates('?start=2025-01-01T00:00:00Z')).toEqual(['2026-11-22T23:00:00.000Z', '2026-10-23T00:00:00.000Z']);
    expect(await dates('?start=2025-05-01T00:00:00Z&end=2025-07-01T00:00:00Z')).toEqual(['2025-06-01T00:00:00.000Z']);
    // Reversed bounds are swapped; a time without a zone is UTC; a date alone is midnight UTC.
    expect(await dates('?start=2025-07-01T00:00:00&end=2025-05-01')).toEqual(['2025-06-01T00:00:00.000Z']);
  });

  it('refuses a window over 367 days, a date it cannot read, a GUID that is not one and a forged continuation token', async () => {
    const cases: [string, string][] = [
      ['?start=2025-01-01T00:00:00Z&end=2026-11-01T00:00:00Z', 'Range too large.'],
      ['?start=yesterday&end=2026-11-01T00:00:00Z', 'start must be an ISO 8601 date'],
      ['?start=2026-01-01T00:00:00Z&end=2026-13-45', 'end must be an ISO 8601 date'],
      ['?actingUserId=not-a-guid', 'actingUserId'],
      ['?continuationToken=bm9wZQ', 'continuation token'],
    ];
    for (const [query, message] of cases) {
      const res = await server.request('GET', eventsPath(org, query), { token: owner.token });
      expect(res.status, `${query}: ${res.text}`).toBe(400);
      expect(res.text, query).toContain(message);
    }
  });

  it('answers members who may read the log only: 403 to other members, 404 to outsiders', async () => {
    expect((await server.request('GET', eventsPath(), { token: auditor.token })).status).toBe(200);
    expect((await server.request('GET', eventsPath(), { token: plain.token })).status).toBe(403);
    expect((await server.request('GET', eventsPath(), { token: stranger.token })).status).toBe(404);
    // The stranger's own organization has its own log; ours does not leak into it.
    const theirs = await server.request('GET', eventsPath(otherOrg), { token: stranger.token });
    expect(theirs.status).toBe(200);
    expect((theirs.body.data as Listed[]).every((e) => e.organizationId === otherOrg)).toBe(true);
    expect((await server.request('GET', eventsPath(randomUUID()), { token: owner.token })).status).toBe(404);
  });
});

describe('eventWindow', () => {
  it('is the last 30 days, from midnight UTC to the end of today, without both bounds', () => {
    expect(eventWindow(NOW)).toEqual({ start: '2026-10-23T00:00:00.000Z', end: '2026-11-22T23:59:59.999Z' });
    expect(eventWindow(NOW, undefined, '2026-01-01')).toEqual(eventWindow(NOW));
  });
  it('keeps an offset as given', () => {
    expect(eventWindow(NOW, '2026-11-01T02:00:00+02:00', '2026-11-02T00:00:00Z')).toEqual({ start: '2026-11-01T00:00:00.000Z', end: '2026-11-02T00:00:00.000Z' });
  });
});
