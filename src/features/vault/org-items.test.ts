import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actor, seedCollection, seedGroup, type Actor } from '../../../test/support/admin.js';
import { seedOrgItem } from '../../../test/support/org-items.js';
import { counting } from '../../../test/support/query-count.js';
import { seedMembership, seedOrganization } from '../../../test/support/orgs.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { generateSymmetricKey } from '../../../test/support/bw-crypto.js';
import { cipherBody, ciphersOf, schemaErrors, type CipherJson } from '../../../test/support/vault.js';
import { OrganizationUserStatusType, OrganizationUserType } from '../../platform/access/roles.js';
import { createSyncCache } from './sync-cache.js';
import { createSyncService } from './sync.service.js';
import { isSection } from './sync-vault.js';
import { SyncResponse, type SyncData } from './sync.schemas.js';
import { CipherType } from './ciphers.schemas.js';
import { NO_CLIENT, type UserCaller } from '../../http/request-context.js';

const itemsOf = (data: SyncData) => {
  if (!isSection(data.vault)) throw new Error('a vault this small is kept as a section');
  return JSON.parse(Buffer.concat(data.vault.items.chunks()).toString()) as unknown[];
};

let server: TestServer;
let org: string;
let owner: Actor;
let member: Actor;
const c = {} as Record<'readOnly' | 'hidden' | 'managed' | 'unassigned', string>;
const item = {} as Record<'readOnly' | 'hidden' | 'managed' | 'both' | 'unassigned' | 'nowhere', string>;

const CLIENT = { 'bitwarden-client-version': '2026.9.0' };
interface SyncBody {
  profile: { organizations: { id: string }[] };
  collections: { id: string }[];
  ciphers: CipherJson[];
}
const sync = async (who: Actor): Promise<SyncBody> => {
  const res = await server.request('GET', '/api/sync', { token: who.token, headers: CLIENT });
  expect(res.status, res.text).toBe(200);
  return res.body as SyncBody;
};
const byId = (body: unknown) => new Map(ciphersOf(body).map((x: CipherJson) => [x.id, x as CipherJson & Record<string, unknown>]));

beforeAll(async () => {
  server = await startTestServer();
  org = await seedOrganization(server, { name: 'Acme' });
  owner = await actor(server, org, 'owner@example.com', { type: OrganizationUserType.Owner });
  member = await actor(server, org, 'member@example.com');
  const group = await seedGroup(server, org, [member.memberId]);
  c.readOnly = await seedCollection(server, org, { users: [[member.memberId, { readOnly: true }]] });
  c.hidden = await seedCollection(server, org, { groups: [[group, { hidePasswords: true }]] });
  c.managed = await seedCollection(server, org, { users: [[member.memberId, { manage: true }]] });
  c.unassigned = await seedCollection(server, org);
  item.readOnly = await seedOrgItem(server, org, [c.readOnly]);
  item.hidden = await seedOrgItem(server, org, [c.hidden]);
  item.managed = await seedOrgItem(server, org, [c.managed]);
  item.both = await seedOrgItem(server, org, [c.readOnly, c.hidden, c.unassigned]);
  item.unassigned = await seedOrgItem(server, org, [c.unassigned]);
  item.nowhere = await seedOrgItem(server, org);
});
afterAll(async () => server?.close());

/** The user as a sync service's caller (no client: the service reads only who it is). */
const asCaller = (userId: string): UserCaller => ({ userId, client: NO_CLIENT, log: server.app.log });

describe('sync with organizations', () => {
  it('never answers from the sync cache once the vault holds organization items', async () => {
    await sync(member);
    const before = byId(await sync(member)).get(item.managed);
    // Another member's change moves no vault revision of this member.
    await server.database.db.updateTable('ciphers').set({ revision_date: '2030-01-01T00:00:00.000Z' }).where('id', '=', item.managed).execute();
    const after = byId(await sync(member)).get(item.managed);
    expect(after?.revisionDate).toBe('2030-01-01T00:00:00.000Z');
    expect(after?.revisionDate).not.toBe(before?.revisionDate);
  });

  it('returns the organizations, collections and the items reached through them with the right rights', async () => {
    const body = await sync(member);
    expect(schemaErrors(SyncResponse, body)).toEqual([]);
    expect(body.profile.organizations.map((o) => o.id)).toEqual([org]);
    expect(body.collections.map((x) => x.id).sort()).toEqual([c.readOnly, c.hidden, c.managed].sort());
    const items = byId(body);
    expect([...items.keys()].sort()).toEqual([item.readOnly, item.hidden, item.managed, item.both].sort());
    expect(items.get(item.readOnly)).toMatchObject({
      organizationId: org,
      edit: false,
      viewPassword: true,
      permissions: { delete: false, restore: false },
      collectionIds: [c.readOnly],
      organizationUseTotp: true,
    });
    expect(items.get(item.hidden)).toMatchObject({ edit: true, viewPassword: false, permissions: { delete: true, restore: true }, collectionIds: [c.hidden] });
    expect(items.get(item.managed)).toMatchObject({ edit: true, viewPassword: true, permissions: { delete: true, restore: true } });
    // Highest access wins; only the collections the member sees are listed.
    expect(items.get(item.both)).toMatchObject({ edit: true, viewPassword: true, collectionIds: [c.readOnly, c.hidden].sort() });
  });

  it('lets only managers delete when the organization limits item deletion', async () => {
    await server.database.db.updateTable('organizations').set({ limit_item_deletion: true }).where('id', '=', org).execute();
    try {
      const items = byId(await sync(member));
      expect(items.get(item.hidden)).toMatchObject({ edit: true, permissions: { delete: false, restore: false } });
      expect(items.get(item.managed)).toMatchObject({ permissions: { delete: true, restore: true } });
    } finally {
      await server.database.db.updateTable('organizations').set({ limit_item_deletion: false }).where('id', '=', org).execute();
    }
  });

  it('gives an owner without collections no organization items (unassigned ones are for the admin views)', async () => {
    const body = await sync(owner);
    expect(body.profile.organizations).toHaveLength(1);
    expect(ciphersOf(body)).toEqual([]);
  });

  it('gives an owner with access to all collections every item in a collection, but not unassigned ones', async () => {
    const admin = await actor(server, org, 'all@example.com', { type: OrganizationUserType.Admin });
    await server.database.db.updateTable('organization_users').set({ access_all: true }).where('id', '=', admin.memberId).execute();
    const items = byId(await sync(admin));
    expect([...items.keys()].sort()).toEqual([item.readOnly, item.hidden, item.managed, item.both, item.unassigned].sort());
    expect(items.get(item.both)?.collectionIds).toEqual([c.readOnly, c.hidden, c.unassigned].sort());
  });

  it('gives invited, accepted, revoked and other-organization members nothing', async () => {
    for (const [email, status] of [
      ['invited@example.com', OrganizationUserStatusType.Invited],
      ['accepted@example.com', OrganizationUserStatusType.Accepted],
      ['revoked@example.com', OrganizationUserStatusType.Revoked],
    ] as const) {
      const who = await actor(server, org, email, { status });
      await server.database.db.insertInto('collection_users').values({ collection_id: c.readOnly, organization_user_id: who.memberId, read_only: false, hide_passwords: false, manage: false }).execute();
      const body = await sync(who);
      expect(body.profile.organizations, email).toEqual([]);
      expect(body.collections, email).toEqual([]);
      expect(ciphersOf(body), email).toEqual([]);
    }
    const other = await seedOrganization(server, { name: 'Other' });
    const stranger = await actor(server, other, 'stranger@example.com');
    await seedCollection(server, other, { users: [[stranger.memberId]] });
    expect(ciphersOf(await sync(stranger))).toEqual([]);
  });

  it('runs the same number of queries for a small and an organization-heavy vault', async () => {
    const counted = () => {
      const view = counting(server.database.db);
      return { sync: createSyncService({ db: view.db, engine: server.database.engine, apiBase: 'http://test/api', cache: createSyncCache(0) }), count: view.count };
    };
    const small = await actor(server, org, 'small@example.com');
    await seedCollection(server, org, { users: [[small.memberId]] });
    const heavy = await actor(server, org, 'heavy@example.com');
    const heavyGroup = await seedGroup(server, org, [heavy.memberId]);
    for (let o = 0; o < 3; o++) {
      const other = o === 0 ? org : await seedOrganization(server, { name: `Org ${o}` });
      const membership = o === 0 ? heavy.memberId : await seedMembership(server, { organizationId: other, userId: heavy.userId });
      for (let k = 0; k < 4; k++) {
        const col = await seedCollection(server, other, o === 0 ? { groups: [[heavyGroup, { readOnly: k % 2 === 0 }]] } : { users: [[membership]] });
        for (let n = 0; n < 10; n++) await seedOrgItem(server, other, [col]);
      }
    }
    const forSmall = counted();
    const a = await forSmall.sync.load(asCaller(small.userId), { newestType: CipherType.Passport });
    const forHeavy = counted();
    const b = await forHeavy.sync.load(asCaller(heavy.userId), { newestType: CipherType.Passport });
    expect(itemsOf(a)).toHaveLength(0);
    expect(itemsOf(b)).toHaveLength(120);
    expect(b.organizations).toHaveLength(3);
    expect(forHeavy.count()).toBe(forSmall.count());
  });
});

describe('organization items on the single and bulk routes', () => {
  const key = generateSymmetricKey();
  const call = (who: Actor, method: string, path: string, json?: unknown) =>
    server.request(method, `/api${path}`, { token: who.token, headers: CLIENT, ...(json === undefined ? {} : { json }) });

  it('reads items reached through a collection and answers 404 for the others', async () => {
    const read = await call(member, 'GET', `/ciphers/${item.readOnly}/details`);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ id: item.readOnly, edit: false, collectionIds: [c.readOnly] });
    for (const id of [item.unassigned, item.nowhere]) expect((await call(member, 'GET', `/ciphers/${id}`)).status).toBe(404);
    const list = await call(member, 'GET', '/ciphers');
    expect((list.body as { data: { id: string }[] }).data.map((x) => x.id).sort()).toEqual([item.readOnly, item.hidden, item.managed, item.both].sort());
  });

  it('lets a writable grant edit, refuses a read-only one with 400 and an invisible id with 404', async () => {
    const body = cipherBody('login', key, { organizationId: org });
    const refused = await call(member, 'PUT', `/ciphers/${item.readOnly}`, body);
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('You do not have permissions to edit this.');
    expect((await call(member, 'PUT', `/ciphers/${item.unassigned}`, body)).status).toBe(404);
    const moved = await call(member, 'PUT', `/ciphers/${item.hidden}`, cipherBody('login', key));
    expect(moved.status).toBe(400);
    expect(moved.body.validationErrors).toHaveProperty('organizationId');
    const edited = await call(member, 'PUT', `/ciphers/${item.hidden}`, body);
    expect(edited.status, edited.text).toBe(200);
    expect(edited.body).toMatchObject({ organizationId: org, edit: true, viewPassword: false });
    const events = await server.database.db.selectFrom('events').selectAll().where('cipher_id', '=', item.hidden).execute();
    expect(events.map((e) => [e.type, e.organization_id])).toContainEqual([1101, org]);
  });

  it('trashes and restores only where the caller may delete; bulk calls skip the rest', async () => {
    expect((await call(member, 'PUT', `/ciphers/${item.readOnly}/delete`)).status).toBe(400);
    expect((await call(member, 'PUT', `/ciphers/${item.unassigned}/delete`)).status).toBe(404);
    const bulk = await call(member, 'PUT', '/ciphers/delete', { ids: [item.readOnly, item.managed, item.unassigned] });
    expect(bulk.status).toBe(200);
    const rows = await server.database.db.selectFrom('ciphers').select(['id', 'deleted_date']).execute();
    const trashed = rows.filter((r) => r.deleted_date).map((r) => r.id);
    expect(trashed).toContain(item.managed);
    expect(trashed).not.toContain(item.readOnly);
    expect(trashed).not.toContain(item.unassigned);
    const restored = await call(member, 'PUT', `/ciphers/${item.managed}/restore`);
    expect(restored.status).toBe(200);
    expect(restored.body).toMatchObject({ deletedDate: null });
  });

  it('gives members of other organizations 404', async () => {
    const other = await seedOrganization(server, { name: 'Elsewhere' });
    const stranger = await actor(server, other, 'elsewhere@example.com', { type: OrganizationUserType.Owner });
    expect((await call(stranger, 'GET', `/ciphers/${item.readOnly}`)).status).toBe(404);
    expect((await call(stranger, 'PUT', `/ciphers/${item.readOnly}/delete`)).status).toBe(404);
  });
});

describe("a member's own settings of an organization item", () => {
  it('leave the shared revision alone, so another member can still save the item', async () => {
    const colleague = await actor(server, org, 'colleague@example.com');
    await server.database.db.insertInto('collection_users').values({ collection_id: c.managed, organization_user_id: colleague.memberId, read_only: false, hide_passwords: false, manage: false }).execute();
    const revision = async () => (await server.database.db.selectFrom('ciphers').select('revision_date').where('id', '=', item.managed).executeTakeFirstOrThrow()).revision_date;
    const before = await revision();
    const as = (path: string, json?: unknown) => server.request('PUT', path, { token: member.token, headers: CLIENT, ...(json ? { json } : {}) });

    expect((await as(`/api/ciphers/${item.managed}/partial`, { folderId: null, favorite: true })).status).toBe(200);
    expect((await as(`/api/ciphers/${item.managed}/archive`)).status).toBe(200);
    expect((await as(`/api/ciphers/${item.managed}/unarchive`)).status).toBe(200);
    expect((await as('/api/ciphers/move', { ids: [item.managed], folderId: null })).status).toBe(200);
    expect(await revision()).toBe(before);

    // The member's own view shows the favorite; the colleague's copy is still current.
    expect(byId(await sync(member)).get(item.managed)?.favorite).toBe(true);
    const saved = await server.request('PUT', `/api/ciphers/${item.managed}`, {
      token: colleague.token,
      headers: CLIENT,
      json: cipherBody('login', generateSymmetricKey(), { organizationId: org, lastKnownRevisionDate: before }),
    });
    expect(saved.status, saved.text).toBe(200);
  });
});
