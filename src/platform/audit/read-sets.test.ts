import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Actor } from '../../../test/support/admin.js';
import { seedOrganization } from '../../../test/support/orgs.js';
import { seedMachineAccount, smActor } from '../../../test/support/sm.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { OrganizationUserType } from '../access/roles.js';
import { createAuditLog } from './audit-log.js';
import { EventType } from './event-type.js';
import { readSetOf } from './read-sets.js';

const NOW = new Date('2026-11-22T12:00:00.000Z');
let now = NOW;
const clock = { now: () => now };
const audit = createAuditLog({ clock });

let server: TestServer;
let org: string;
let owner: Actor;
let account: string;
/** 120 secrets read together by `account`, between two plain events. */
const readTogether = Array.from({ length: 120 }, () => randomUUID());

interface ShownEvent {
  type: number;
  secretId: string | null;
  serviceAccountId: string | null;
  date: string;
}

/** Every page of an event route, following the continuation tokens. */
async function allPages(path: string): Promise<{ events: ShownEvent[]; pages: number }> {
  const events: ShownEvent[] = [];
  let token: string | null = null;
  let pages = 0;
  do {
    const query: string = token ? `${path.includes('?') ? '&' : '?'}continuationToken=${encodeURIComponent(token)}` : '';
    const res = await server.request('GET', `/api${path}${query}`, { token: owner.token });
    expect(res.status).toBe(200);
    events.push(...(res.body.data as ShownEvent[]));
    token = res.body.continuationToken as string | null;
    pages++;
  } while (token);
  return { events, pages };
}

async function record(date: string, run: (tx: Parameters<typeof audit.record>[0]) => Promise<void>) {
  now = new Date(date);
  await server.database.db.transaction().execute(run);
}

beforeAll(async () => {
  server = await startTestServer({ clock });
  org = await seedOrganization(server);
  owner = await smActor(server, org, { type: OrganizationUserType.Owner });
  account = await seedMachineAccount(server, org);
  const reader = { type: EventType.Secret_Retrieved, organizationId: org, serviceAccountId: account };
  await record('2026-11-22T10:00:00.000Z', (tx) => audit.record(tx, null, { type: EventType.Secret_Created, organizationId: org, secretId: readTogether[0] }));
  await record('2026-11-22T10:30:00.000Z', (tx) => audit.recordReads(tx, null, reader, readSetOf(readTogether)));
  await record('2026-11-22T11:00:00.000Z', (tx) => audit.recordReads(tx, null, reader, readSetOf([readTogether[5]!])));
  now = NOW;
}, 120_000);

afterAll(async () => {
  await server?.close();
});

describe('reads of several secrets (read sets)', () => {
  it('stores one event row and the set once, and a read of one secret as a plain row', async () => {
    const rows = await server.database.db.selectFrom('events').select(['secret_id', 'read_set_id']).where('type', '=', EventType.Secret_Retrieved).where('organization_id', '=', org).execute();
    expect(rows).toHaveLength(2);
    expect(rows.filter((r) => r.read_set_id)).toEqual([{ secret_id: null, read_set_id: readSetOf(readTogether).id }]);
    expect(rows.filter((r) => !r.read_set_id)).toEqual([{ secret_id: readTogether[5], read_set_id: null }]);

    // The same secrets read again: one more event row, no second copy of the set.
    await server.database.db.transaction().execute((tx) => audit.recordReads(tx, null, { type: EventType.Secret_Retrieved, organizationId: org, serviceAccountId: account }, readSetOf(readTogether)));
    const sets = await server.database.db.selectFrom('secret_read_sets').select(['id', 'size']).execute();
    expect(sets).toContainEqual({ id: readSetOf(readTogether).id, size: 120 });
    const members = await server.database.db.selectFrom('secret_read_set_members').select('secret_id').where('read_set_id', '=', readSetOf(readTogether).id).orderBy('position').execute();
    expect(members.map((m) => m.secret_id)).toEqual(readTogether);
    await server.database.db.deleteFrom('events').where('date', '=', NOW.toISOString()).execute();
  });

  it('shows one Secret_Retrieved per secret of the set in the organization log, paged through the set', async () => {
    const { events, pages } = await allPages(`/organizations/${org}/events?start=2026-11-22T00:00:00Z&end=2026-11-22T23:59:59Z`);
    expect(pages).toBe(3);
    expect(events.map((e) => [e.type, e.secretId])).toEqual([
      [EventType.Secret_Retrieved, readTogether[5]],
      ...readTogether.map((id) => [EventType.Secret_Retrieved, id]),
      [EventType.Secret_Created, readTogether[0]],
    ]);
    expect(events.slice(0, 121).every((e) => e.serviceAccountId === account)).toBe(true);
    expect(new Set(events.slice(1, 121).map((e) => e.date))).toEqual(new Set(['2026-11-22T10:30:00.000Z']));
  });

  it("shows a secret's own read from the set on its event route and with itemId, and the whole set on the machine account's", async () => {
    const own = await allPages(`/organization/${org}/secrets/${readTogether[7]}/events?start=2026-11-22T00:00:00Z&end=2026-11-22T23:59:59Z`);
    expect(own.events.map((e) => [e.type, e.secretId])).toEqual([[EventType.Secret_Retrieved, readTogether[7]]]);
    const item = await allPages(`/organizations/${org}/events?itemId=${readTogether[0]}&start=2026-11-22T00:00:00Z&end=2026-11-22T23:59:59Z`);
    expect(item.events.map((e) => [e.type, e.secretId])).toEqual([
      [EventType.Secret_Retrieved, readTogether[0]],
      [EventType.Secret_Created, readTogether[0]],
    ]);
    const byAccount = await allPages(`/organization/${org}/service-account/${account}/events?start=2026-11-22T00:00:00Z&end=2026-11-22T23:59:59Z`);
    expect(byAccount.events.map((e) => e.secretId)).toEqual([readTogether[5], ...readTogether]);
  });

  it('refuses a continuation token with a position this server did not give', async () => {
    for (const forged of ['2026-11-22T10:30:00.000Z|1|-1', '2026-11-22T10:30:00.000Z|1|x', '2026-11-22T10:30:00.000Z|1|2|3']) {
      const token = Buffer.from(forged).toString('base64url');
      const res = await server.request('GET', `/api/organizations/${org}/events?continuationToken=${token}`, { token: owner.token });
      expect(res.status).toBe(400);
      expect(res.body.validationErrors?.continuationToken ?? res.body.message).toBeTruthy();
    }
  });
});
