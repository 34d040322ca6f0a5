import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actor, custom, orgWithOwner, seedCollection, type Actor } from '../../../test/support/admin.js';
import { testClock } from '../../../test/support/clock.js';
import { seedOrgItem, seedPersonalItem } from '../../../test/support/org-items.js';
import { createAccessToken, createMachineAccount, machineLogin, smOrg } from '../../../test/support/sm.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { OrganizationUserType } from '../../platform/access/roles.js';
import { counting } from '../../../test/support/query-count.js';
import { createAuditLog, STATEMENT_ROWS } from '../../platform/audit/audit-log.js';
import { createEventCollector } from './collect.js';
import { createEventQueryService } from './events.service.js';
import { EventType } from '../../platform/audit/event-type.js';
import { failInserts } from '../../../test/support/failures.js';

const NOW = new Date('2026-11-22T12:00:00.000Z');
const CLIENT = { ipAddress: '127.0.0.1', deviceType: 8, deviceIdentifier: null, clientVersion: null };
const clock = testClock(NOW);
let server: TestServer;
let org: string;
let otherOrg: string;
let owner: Actor;
let member: Actor;
let stranger: Actor;
/** An item in a collection the member reaches, one in a collection they do not, the member's own, the stranger's. */
let shared: string;
let hidden: string;
let personal: string;
let foreign: string;

const collect = (token: string, body: unknown, headers: Record<string, string> = {}) =>
  server.request('POST', '/events/collect', { token, ...(body === undefined ? {} : { json: body }), headers });

async function stored(where: { cipherId?: string; actingUserId?: string; organizationId?: string }) {
  let query = server.database.db.selectFrom('events').selectAll();
  if (where.cipherId) query = query.where('cipher_id', '=', where.cipherId);
  if (where.actingUserId) query = query.where('acting_user_id', '=', where.actingUserId);
  if (where.organizationId) query = query.where('organization_id', '=', where.organizationId);
  return query.orderBy('seq').execute();
}

const count = async () => Number((await server.database.db.selectFrom('events').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

beforeAll(async () => {
  server = await startTestServer({ clock });
  ({ org, owner, otherOrg, stranger } = await orgWithOwner(server));
  member = await actor(server, org, 'member@example.com', { type: OrganizationUserType.User });
  const theirs = await seedCollection(server, org, { users: [[member.memberId]] });
  const notTheirs = await seedCollection(server, org);
  shared = await seedOrgItem(server, org, [theirs]);
  hidden = await seedOrgItem(server, org, [notTheirs]);
  personal = await seedPersonalItem(server, member.userId);
  foreign = await seedPersonalItem(server, stranger.userId);
}, 120_000);

afterAll(async () => {
  await server?.close();
});

describe('POST /events/collect', () => {
  it('logs a viewed organization item the caller sees, with the client date, device and address, and answers 200 with no body', async () => {
    const date = new Date(NOW.getTime() - 60_000).toISOString();
    const res = await collect(member.token, [{ type: EventType.Cipher_ClientViewed, cipherId: shared.toUpperCase(), organizationId: org, date }], { 'device-type': '8' });
    expect(res.status, res.text).toBe(200);
    expect(res.text).toBe('');
    const [row, ...more] = await stored({ cipherId: shared });
    expect(more).toEqual([]);
    expect(row).toMatchObject({ type: EventType.Cipher_ClientViewed, organization_id: org, acting_user_id: member.userId, date, device_type: 8 });
    expect(row?.ip_address).toBeTruthy();
  });

  it('logs every client cipher type the official server takes, and personal items for their owner', async () => {
    const types = [1107, 1108, 1109, 1110, 1111, 1112, 1113, 1114, 1117, ...Array.from({ length: 14 }, (_, i) => 1119 + i)];
    const res = await collect(member.token, types.map((type) => ({ type, cipherId: personal })));
    expect(res.status, res.text).toBe(200);
    expect((await stored({ cipherId: personal })).map((e) => e.type)).toEqual(types);
    expect((await stored({ cipherId: personal }))[0]).toMatchObject({ organization_id: null, user_id: member.userId });
  });

  it('skips items the caller cannot see, types it does not take and elements missing what they need, and writes the rest', async () => {
    const before = await count();
    const res = await collect(member.token, [
      { type: EventType.Cipher_ClientViewed, cipherId: hidden }, // in a collection they do not reach
      { type: EventType.Cipher_ClientViewed, cipherId: foreign }, // another user's personal item
      { type: EventType.Cipher_ClientViewed, cipherId: foreign, organizationId: org }, // claiming the wrong organization
      { type: EventType.Cipher_ClientViewed, cipherId: randomUUID() },
      { type: EventType.Cipher_ClientViewed }, // no item
      { type: EventType.Cipher_ClientToggledTOTPSeedVisible, cipherId: shared }, // 1118 is not taken
      { type: EventType.Cipher_Deleted, cipherId: shared }, // a server-side event
      { type: 424242 },
      { type: EventType.Organization_ClientExportedVault }, // no organization
      { type: EventType.Organization_ClientExportedVault, organizationId: otherOrg }, // not a member
      { type: EventType.PhishingBlocker_SiteAccessed, organizationId: org }, // no phishing blocker here
      { type: EventType.Cipher_ClientCopiedPassword, cipherId: shared },
    ]);
    expect(res.status, res.text).toBe(200);
    expect(await count()).toBe(before + 1);
    expect((await stored({ cipherId: shared })).at(-1)?.type).toBe(EventType.Cipher_ClientCopiedPassword);
    expect(await stored({ cipherId: hidden })).toEqual([]);
    expect(await stored({ cipherId: foreign })).toEqual([]);
  });

  it("skips an item outside a plain member's collections even when they name its organization, as for a stranger, and logs their own collection's", async () => {
    const before = await count();
    const res = await collect(member.token, [
      { type: EventType.Cipher_ClientViewed, cipherId: hidden, organizationId: org },
      { type: EventType.Cipher_ClientCopiedPassword, cipherId: hidden, organizationId: org },
      { type: EventType.Cipher_ClientAutofilled, cipherId: shared, organizationId: org },
    ]);
    expect(res.status, res.text).toBe(200);
    expect(await count()).toBe(before + 1);
    expect(await stored({ cipherId: hidden })).toEqual([]);
    expect((await stored({ cipherId: shared })).at(-1)).toMatchObject({ type: EventType.Cipher_ClientAutofilled, acting_user_id: member.userId });
  });

  it("takes an item outside the caller's collections from members who may read every item of its organization, when they name it", async () => {
    const admin = await actor(server, org, 'collect-admin@example.com', { type: OrganizationUserType.Admin });
    const editor = await actor(server, org, 'collect-editor@example.com', custom('editAnyCollection'));
    const reporter = await actor(server, org, 'collect-reporter@example.com', custom('accessReports'));
    // Rights over members or groups open no item.
    const groups = await actor(server, org, 'collect-groups@example.com', custom('manageGroups', 'manageUsers', 'accessEventLogs'));
    for (const who of [owner, admin, editor, reporter, groups]) {
      const res = await collect(who.token, [
        { type: EventType.Cipher_ClientAutofilled, cipherId: hidden, organizationId: org },
        { type: EventType.Cipher_ClientViewed, cipherId: hidden }, // without its organization
      ]);
      expect(res.status, res.text).toBe(200);
    }
    const rows = await stored({ cipherId: hidden });
    expect(rows.map((e) => e.acting_user_id)).toEqual([owner.userId, admin.userId, editor.userId, reporter.userId]);
    expect(rows.every((e) => e.type === Number(EventType.Cipher_ClientAutofilled) && e.organization_id === org)).toBe(true);
  });

  it("runs as many queries for 256 items outside the caller's collections as for one", async () => {
    // 256: one slice of ids for the reads, and one insert statement for the events.
    const items: string[] = [];
    for (let i = 0; i < 256; i++) items.push(await seedOrgItem(server, org));
    const queries = async (ids: string[]) => {
      const counted = counting(server.database.db);
      const collector = createEventCollector({ db: counted.db, clock, audit: createAuditLog({ clock }) });
      const written = await collector.collect({ userId: owner.userId, client: CLIENT, log: server.app.log }, ids.map((cipherId) => ({ type: EventType.Cipher_ClientViewed, cipherId, organizationId: org })));
      expect(written).toBe(ids.length);
      return counted.count();
    };
    expect(await queries(items)).toBe(await queries(items.slice(0, 1)));
  });

  it('logs user and organization events for members only', async () => {
    const res = await collect(member.token, [
      { type: EventType.User_ClientExportedVault },
      { type: EventType.Organization_ClientExportedVault, organizationId: org },
      { type: EventType.Organization_ItemOrganization_Accepted, organizationId: org },
    ]);
    expect(res.status, res.text).toBe(200);
    const mine = await stored({ actingUserId: member.userId });
    expect(mine.find((e) => e.type === Number(EventType.User_ClientExportedVault))).toMatchObject({ user_id: member.userId, organization_id: null, date: NOW.toISOString() });
    expect(mine.find((e) => e.type === Number(EventType.Organization_ClientExportedVault))).toMatchObject({ organization_id: org });
    expect(mine.find((e) => e.type === Number(EventType.Organization_ItemOrganization_Accepted))).toMatchObject({ organization_id: org, organization_user_id: member.memberId });
  });

  it('writes every event of a request larger than one insert statement (audit-log.test.ts counts the statements)', async () => {
    const before = await count();
    const n = STATEMENT_ROWS * 2 + 7;
    const res = await collect(member.token, Array.from({ length: n }, () => ({ type: EventType.Cipher_ClientViewed, cipherId: shared, organizationId: org })));
    expect(res.status, res.text).toBe(200);
    expect(await count()).toBe(before + n);
  });

  it('writes every event of a full upload of 10,000 item views, letting other requests run (and see it part-written) between its slices', async () => {
    const before = await count();
    const own = await seedPersonalItem(server, member.userId);
    const items = [own, hidden];
    const upload = collect(member.token, Array.from({ length: 10_000 }, (_, i) => ({ type: EventType.Cipher_ClientViewed, cipherId: items[i % 2], organizationId: org })));
    let finished = false;
    void upload.finally(() => (finished = true));
    // Another request's reads, while the upload runs: one that holds the loop (or writes in one
    // transaction) is never seen half done.
    const seen = new Set<number>();
    while (!finished) {
      seen.add(await count());
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    const res = await upload;
    expect(res.status, res.text).toBe(200);
    // Every other one names the item the member cannot see: skipped.
    expect(await count()).toBe(before + 5_000);
    expect([...seen].some((n) => n > before && n < before + 5_000)).toBe(true);
  });

  it('undoes the slices of an upload already written when a later one fails, leaving none of its events behind', async () => {
    // A database failure on the 1,601st event, in the fourth slice written (a full disk would do the same).
    const restore = await failInserts(server.database.db, 'events', 'type', EventType.Cipher_ClientCopiedHiddenField);
    try {
      const before = await count();
      const own = await seedPersonalItem(server, member.userId);
      const events = Array.from({ length: 2000 }, (_, i) => ({ type: i === 1600 ? EventType.Cipher_ClientCopiedHiddenField : EventType.Cipher_ClientViewed, cipherId: own }));
      const res = await collect(member.token, events);
      expect(res.status).toBe(500);
      expect(await count()).toBe(before);
    } finally {
      await restore();
    }
  });

  it('stores a date in the future as now, and refuses a date it cannot read or older than 367 days, writing nothing', async () => {
    const future = await collect(member.token, [{ type: EventType.User_ClientExportedVault, date: '2030-01-01T00:00:00Z' }]);
    expect(future.status, future.text).toBe(200);
    expect((await stored({ actingUserId: member.userId })).at(-1)?.date).toBe(NOW.toISOString());

    const before = await count();
    for (const [date, message] of [
      ['yesterday', '[1].date'],
      ['2026-13-45T00:00:00Z', '[1].date'],
      ['0001-01-01T00:00:00', 'more than 367 days old'],
    ] as const) {
      const res = await collect(member.token, [{ type: EventType.User_ClientExportedVault }, { type: EventType.User_ClientExportedVault, date }]);
      expect(res.status, `${date}: ${res.text}`).toBe(400);
      expect(res.text, date).toContain(message);
    }
    expect(await count()).toBe(before);
  });

  it('refuses a missing body, a non-array, no events, more than 10,000, and elements of the wrong shape', async () => {
    const before = await count();
    const bad: [unknown, string][] = [
      [undefined, 'body'],
      [{ type: 1107 }, 'array'],
      ['1107', 'array'],
      [[], '1'],
      [Array.from({ length: 10_001 }, () => ({ type: EventType.User_ClientExportedVault })), '10000'],
      [[{ cipherId: shared }], 'type'],
      [[{ type: 'viewed' }], 'type'],
      [[{ type: 1107, cipherId: 'not-a-guid' }], 'cipherId'],
    ];
    for (const [body, message] of bad) {
      const res = await collect(member.token, body);
      expect(res.status, `${JSON.stringify(body)?.slice(0, 60)}: ${res.text}`).toBe(400);
      expect(res.text.toLowerCase(), res.text).toContain(message.toLowerCase());
    }
    expect(await count()).toBe(before);
  });

  it('takes only user tokens: no token is 401, a machine account 401', async () => {
    expect((await server.request('POST', '/events/collect', { json: [{ type: EventType.User_ClientExportedVault }] })).status).toBe(401);
    const { orgId, owner: smOwner, orgKey } = await smOrg(server);
    const account = await createMachineAccount(server, smOwner.token, orgId);
    const machine = await machineLogin(server, (await createAccessToken(server, smOwner.token, account, orgKey)).accessToken);
    expect((await collect(machine, [{ type: EventType.User_ClientExportedVault }])).status).toBe(401);
  });
});

describe('reading routes', () => {
  let auditor: Actor;
  let plain: Actor;

  beforeAll(async () => {
    auditor = await actor(server, org, 'auditor@example.com', custom('accessEventLogs'));
    plain = await actor(server, org, 'plain@example.com', { type: OrganizationUserType.User });
  });

  it("GET /events answers the caller's own events outside organizations, and nobody else's", async () => {
    const res = await server.request('GET', '/api/events', { token: member.token });
    expect(res.status, res.text).toBe(200);
    const data = res.body.data as { type: number; actingUserId: string; organizationId: string | null }[];
    expect(data.length).toBeGreaterThan(0);
    expect(data.every((e) => e.actingUserId === member.userId && e.organizationId === null)).toBe(true);
    expect(data.map((e) => e.type)).toContain(EventType.User_ClientExportedVault);
    expect(data.map((e) => e.type)).not.toContain(EventType.Organization_ClientExportedVault);
    const theirs = await server.request('GET', '/api/events', { token: stranger.token });
    expect((theirs.body.data as { actingUserId: string }[]).every((e) => e.actingUserId === stranger.userId)).toBe(true);
  });

  it("GET /ciphers/{id}/events: an organization item's for accessEventLogs, a personal item's for its owner, 404 otherwise", async () => {
    const read = (token: string, id: string) => server.request('GET', `/api/ciphers/${id}/events`, { token });
    const ok = await read(auditor.token, shared);
    expect(ok.status, ok.text).toBe(200);
    expect((ok.body.data as { cipherId: string }[]).every((e) => e.cipherId === shared)).toBe(true);
    expect((ok.body.data as unknown[]).length).toBeGreaterThan(1);
    expect((await read(plain.token, shared)).status).toBe(404);
    expect((await read(member.token, shared)).status).toBe(404);
    expect((await read(stranger.token, shared)).status).toBe(404);
    const own = await read(member.token, personal);
    expect(own.status).toBe(200);
    expect((own.body.data as unknown[]).length).toBe(23);
    expect((await read(owner.token, personal)).status).toBe(404);
    expect((await read(owner.token, randomUUID())).status).toBe(404);
  });

  it('GET /organizations/{orgId}/users/{id}/events answers what that member did, for accessEventLogs', async () => {
    const path = (orgId: string, id: string) => `/api/organizations/${orgId}/users/${id}/events`;
    const res = await server.request('GET', path(org, member.memberId), { token: auditor.token });
    expect(res.status, res.text).toBe(200);
    const data = res.body.data as { actingUserId: string; organizationId: string }[];
    expect(data.length).toBe(50);
    expect(res.body.continuationToken).toBeTruthy();
    expect(data.every((e) => e.actingUserId === member.userId && e.organizationId === org)).toBe(true);
    expect((await server.request('GET', path(org, member.memberId), { token: plain.token })).status).toBe(403);
    expect((await server.request('GET', path(org, member.memberId), { token: stranger.token })).status).toBe(404);
    // A member of another organization, or no member at all, is not found.
    expect((await server.request('GET', path(org, stranger.memberId), { token: auditor.token })).status).toBe(404);
    expect((await server.request('GET', path(org, randomUUID()), { token: auditor.token })).status).toBe(404);
  });

  it("refuses the organization's log when its plan has no event logs", async () => {
    await server.database.db.updateTable('organizations').set({ use_events: false }).where('id', '=', org).execute();
    try {
      const res = await server.request('GET', `/api/organizations/${org}/events`, { token: owner.token });
      expect(res.status).toBe(403);
      expect(res.text).toContain('plan does not include event logs');
      expect((await server.request('GET', `/api/ciphers/${shared}/events`, { token: owner.token })).status).toBe(404);
    } finally {
      await server.database.db.updateTable('organizations').set({ use_events: true }).where('id', '=', org).execute();
    }
  });

  it('exports the window as CSV and as JSON, every event, read sets expanded', async () => {
    const setId = 'export-set';
    const secrets = [randomUUID(), randomUUID(), randomUUID()];
    await server.database.db.insertInto('secret_read_sets').values({ id: setId, size: 3, creation_date: NOW.toISOString() }).execute();
    await server.database.db.insertInto('secret_read_set_members').values(secrets.map((secret_id, position) => ({ read_set_id: setId, position, secret_id }))).execute();
    await server.database.db.insertInto('events').values({ id: randomUUID(), type: EventType.Secret_Retrieved, organization_id: org, read_set_id: setId, date: NOW.toISOString() }).execute();
    const total = (await stored({ organizationId: org })).length + secrets.length - 1;

    const json = await server.request('GET', `/api/organizations/${org}/events/export?format=json`, { token: auditor.token });
    expect(json.status, json.text).toBe(200);
    expect(json.headers.get('content-disposition')).toContain('.json');
    const rows = JSON.parse(json.text) as { secretId: string | null; organizationId: string }[];
    expect(rows).toHaveLength(total);
    expect(rows.filter((r) => r.secretId).map((r) => r.secretId)).toEqual(secrets);

    const csv = await server.request('GET', `/api/organizations/${org}/events/export`, { token: auditor.token });
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toContain('text/csv');
    const lines = csv.text.trim().split('\r\n');
    expect(lines[0]?.startsWith('date,type,userId,actingUserId,organizationId')).toBe(true);
    expect(lines).toHaveLength(total + 1);

    expect((await server.request('GET', `/api/organizations/${org}/events/export`, { token: plain.token })).status).toBe(403);
    expect((await server.request('GET', `/api/organizations/${org}/events/export?format=xml`, { token: owner.token })).status).toBe(400);
    expect((await server.request('GET', `/api/organizations/${org}/events/export?start=2020-01-01&end=2026-01-01`, { token: owner.token })).status).toBe(400);
  });
  it("lets other requests run between the pages of an export of a large log", async () => {
    const date = NOW.toISOString();
    for (let i = 0; i < 5; i++) {
      await server.database.db
        .insertInto('events')
        .values(Array.from({ length: 500 }, () => ({ id: randomUUID(), type: EventType.Cipher_ClientViewed, organization_id: org, date })))
        .execute();
    }
    let others = 0;
    setImmediate(() => others++);
    let exported = 0;
    for await (const row of createEventQueryService({ db: server.database.db, clock }).exportOrganizationEvents(org, {})) if (row) exported++;
    expect(exported).toBeGreaterThanOrEqual(2500);
    expect(others).toBe(1);
  });
});
