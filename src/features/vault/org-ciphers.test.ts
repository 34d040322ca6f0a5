import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actor, custom, seedCollection, type Actor } from '../../../test/support/admin.js';
import { generateSymmetricKey } from '../../../test/support/bw-crypto.js';
import { seedOrgItem } from '../../../test/support/org-items.js';
import { seedOrganization } from '../../../test/support/orgs.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { cipherBody } from '../../../test/support/vault.js';
import { OrganizationUserType } from '../../platform/access/roles.js';

let server: TestServer;
let org: string;
let otherOrg: string;
let owner: Actor;
let member: Actor;
let manager: Actor;
let writable: string;
let readOnly: string;
let managed: string;
let foreign: string;
const key = generateSymmetricKey();
const CLIENT = { 'bitwarden-client-version': '2026.9.0' };
const call = (who: Actor, method: string, path: string, json?: unknown) =>
  server.request(method, `/api${path}`, { token: who.token, headers: CLIENT, ...(json === undefined ? {} : { json }) });
const eventTypes = async (cipherId: string) =>
  (await server.database.db.selectFrom('events').select('type').where('cipher_id', '=', cipherId).execute()).map((e) => e.type);

beforeAll(async () => {
  server = await startTestServer();
  org = await seedOrganization(server, { name: 'Acme' });
  otherOrg = await seedOrganization(server, { name: 'Other' });
  owner = await actor(server, org, 'owner@example.com', { type: OrganizationUserType.Owner });
  member = await actor(server, org, 'member@example.com');
  manager = await actor(server, org, 'manager@example.com');
  writable = await seedCollection(server, org, { users: [[member.memberId]] });
  readOnly = await seedCollection(server, org, { users: [[member.memberId, { readOnly: true }]] });
  managed = await seedCollection(server, org, { users: [[manager.memberId, { manage: true }]] });
  foreign = await seedCollection(server, otherOrg);
});
afterAll(async () => server?.close());

describe('POST /ciphers/create', () => {
  it('creates an organization item in collections the caller may write to', async () => {
    const res = await call(member, 'POST', '/ciphers/create', { cipher: cipherBody('login', key, { organizationId: org }), collectionIds: [writable] });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ object: 'cipher', organizationId: org, edit: true });
    expect(await eventTypes(res.body.id as string)).toEqual([1100]);
    const sync = await call(member, 'GET', '/sync');
    expect((sync.body.ciphers as { id: string; collectionIds: string[] }[]).find((c) => c.id === res.body.id)?.collectionIds).toEqual([writable]);
  });

  it('refuses bad input naming the field', async () => {
    const cipher = cipherBody('login', key, { organizationId: org });
    const cases: [unknown, string][] = [
      [{ cipher }, 'collectionIds'],
      [{ cipher, collectionIds: [] }, 'collectionIds'],
      [{ cipher, collectionIds: [foreign] }, 'collectionIds'],
      [{ cipher, collectionIds: [readOnly] }, 'collectionIds'],
      [{ cipher, collectionIds: Array.from({ length: 501 }, () => crypto.randomUUID()) }, 'collectionIds'],
      [{ cipher: cipherBody('login', key), collectionIds: [writable] }, 'cipher.organizationId'],
      [{ cipher: cipherBody('login', key, { organizationId: otherOrg }), collectionIds: [foreign] }, 'cipher.organizationId'],
    ];
    for (const [body, field] of cases) {
      const res = await call(member, 'POST', '/ciphers/create', body);
      expect(res.status, field).toBe(400);
      expect(Object.keys(res.body.validationErrors ?? {}), res.text).toContain(field);
    }
  });
});

describe('PUT /ciphers/{id}/share', () => {
  it('moves a personal item into the organization with its collections', async () => {
    const personal = await call(member, 'POST', '/ciphers', cipherBody('login', key));
    // The body `bw move` sends (official-clients.md §4.11).
    const cipher = cipherBody('login', key, { organizationId: org, encryptedFor: member.userId, attachments: {}, attachments2: {}, fields: [] });
    const res = await call(member, 'PUT', `/ciphers/${personal.body.id}/share`, { cipher, collectionIds: [writable] });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ id: personal.body.id, organizationId: org });
    expect(await eventTypes(personal.body.id as string)).toContain(1105);
    const again = await call(member, 'PUT', `/ciphers/${personal.body.id}/share`, { cipher: cipherBody('login', key, { organizationId: org }), collectionIds: [writable] });
    expect(again.status).toBe(400);
  });

  it("answers 404 for someone else's item and 400 for collections the caller cannot write to", async () => {
    const personal = await call(owner, 'POST', '/ciphers', cipherBody('login', key));
    const body = { cipher: cipherBody('login', key, { organizationId: org }), collectionIds: [writable] };
    expect((await call(member, 'PUT', `/ciphers/${personal.body.id}/share`, body)).status).toBe(404);
    const res = await call(owner, 'POST', `/ciphers/${personal.body.id}/share`, { ...body, collectionIds: [foreign] });
    expect(res.status).toBe(400);
    expect(res.body.validationErrors).toHaveProperty('collectionIds');
  });
});

describe('PUT /ciphers/share', () => {
  const personalItems = async (who: Actor, count: number) => {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) ids.push((await call(who, 'POST', '/ciphers', cipherBody('login', key))).body.id as string);
    return ids;
  };
  const moved = (ids: string[]) => ids.map((id) => ({ ...cipherBody('login', key, { organizationId: org }), id }));
  const orgOf = async (id: string) => (await server.database.db.selectFrom('ciphers').select('organization_id').where('id', '=', id).executeTakeFirst())?.organization_id;

  it('moves several personal items into the organization and its collections at once', async () => {
    const ids = await personalItems(member, 3);
    const res = await call(member, 'PUT', '/ciphers/share', { ciphers: moved(ids), collectionIds: [writable] });
    expect(res.status, res.text).toBe(200);
    expect(res.body.object).toBe('list');
    expect((res.body.data as { object: string; id: string; organizationId: string }[]).map((c) => [c.object, c.id, c.organizationId])).toEqual(ids.map((id) => ['cipherMini', id, org]));
    for (const id of ids) {
      expect(await orgOf(id)).toBe(org);
      expect(await eventTypes(id)).toContain(1105);
    }
  });

  it('moves nothing when one of the items cannot move, and refuses bad lists naming the field', async () => {
    const ids = await personalItems(member, 2);
    const [orgItem] = await personalItems(member, 1);
    expect((await call(member, 'PUT', '/ciphers/share', { ciphers: moved([orgItem!]), collectionIds: [writable] })).status).toBe(200);
    const res = await call(member, 'POST', '/ciphers/share', { ciphers: moved([...ids, orgItem!]), collectionIds: [writable] });
    expect(res.status).toBe(400);
    for (const id of ids) expect(await orgOf(id)).toBeNull();

    const others = await personalItems(owner, 1);
    expect((await call(member, 'PUT', '/ciphers/share', { ciphers: moved([ids[0]!, others[0]!]), collectionIds: [writable] })).status).toBe(404);
    const cases: [unknown, string][] = [
      [{ ciphers: [], collectionIds: [writable] }, 'ciphers'],
      [{ ciphers: moved([ids[0]!, ids[0]!]), collectionIds: [writable] }, 'ciphers'],
      [{ ciphers: [moved([ids[0]!])[0], { ...cipherBody('login', key, { organizationId: otherOrg }), id: ids[1] }], collectionIds: [writable] }, 'ciphers'],
      [{ ciphers: moved([ids[0]!]), collectionIds: [readOnly] }, 'collectionIds'],
      [{ ciphers: moved([ids[0]!]), collectionIds: [] }, 'collectionIds'],
    ];
    for (const [body, field] of cases) {
      const bad = await call(member, 'PUT', '/ciphers/share', body);
      expect(bad.status, field).toBe(400);
      expect(Object.keys(bad.body.validationErrors ?? {}), bad.text).toContain(field);
    }
    for (const id of ids) expect(await orgOf(id)).toBeNull();
  });
});

describe('collections of an item', () => {
  it('changes the collections the caller may write to and keeps the others; _v2 says when the item is gone', async () => {
    const id = await seedOrgItem(server, org, [writable, managed]);
    const res = await call(member, 'PUT', `/ciphers/${id}/collections_v2`, { collectionIds: [writable, readOnly] });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ object: 'optionalCipherDetails', unavailable: false, cipher: { id, collectionIds: [writable] } });
    const places = async () => (await server.database.db.selectFrom('collection_ciphers').select('collection_id').where('cipher_id', '=', id).execute()).map((r) => r.collection_id).sort();
    expect(await places()).toEqual([writable, managed].sort());
    const gone = await call(member, 'PUT', `/ciphers/${id}/collections_v2`, { collectionIds: [] });
    expect(gone.body).toMatchObject({ unavailable: true, cipher: null });
    expect(await places()).toEqual([managed]);
    expect(await eventTypes(id)).toEqual([1106, 1106]);
    expect((await call(member, 'PUT', `/ciphers/${id}/collections`, { collectionIds: [writable] })).status).toBe(404);
    const v1 = await call(manager, 'PUT', `/ciphers/${id}/collections`, { collectionIds: [managed, writable] });
    expect(v1.status, v1.text).toBe(200);
    expect(v1.body).toMatchObject({ object: 'cipherDetails', collectionIds: [managed] });
  });

  it('refuses a read-only caller and collections of another organization', async () => {
    const id = await seedOrgItem(server, org, [readOnly]);
    expect((await call(member, 'PUT', `/ciphers/${id}/collections_v2`, { collectionIds: [writable] })).status).toBe(400);
    const other = await seedOrgItem(server, org, [writable]);
    const res = await call(member, 'PUT', `/ciphers/${other}/collections_v2`, { collectionIds: [foreign] });
    expect(res.status).toBe(400);
    expect(res.body.validationErrors).toHaveProperty('collectionIds');
  });

  it('adds and removes collections in bulk, all or nothing, on items the caller may edit', async () => {
    const mine = await seedOrgItem(server, org, [writable]);
    const locked = await seedOrgItem(server, org, [readOnly]);
    const elsewhere = await seedOrgItem(server, org, [managed]);
    const placesOf = async (id: string) => (await server.database.db.selectFrom('collection_ciphers').select('collection_id').where('cipher_id', '=', id).execute()).map((r) => r.collection_id);

    // The manager does not reach `mine`: the whole call is refused as naming an unknown item.
    const unseen = await call(manager, 'POST', '/ciphers/bulk-collections', { organizationId: org, cipherIds: [elsewhere, mine], collectionIds: [managed] });
    expect(unseen.status, unseen.text).toBe(404);
    expect(await placesOf(mine)).toEqual([writable]);
    // The member only looks at `locked`: refused, and `mine` is left as it was.
    const looking = await call(member, 'POST', '/ciphers/bulk-collections', { organizationId: org, cipherIds: [mine, locked], collectionIds: [writable] });
    expect(looking.status).toBe(400);
    expect(looking.body.validationErrors).toHaveProperty('cipherIds');
    expect(await placesOf(locked)).toEqual([readOnly]);

    const add = await call(manager, 'POST', '/ciphers/bulk-collections', { organizationId: org, cipherIds: [elsewhere], collectionIds: [managed] });
    expect(add.status, add.text).toBe(200);
    const remove = await call(member, 'POST', '/ciphers/bulk-collections', { organizationId: org, cipherIds: [mine], collectionIds: [writable], removeCollections: true });
    expect(remove.status).toBe(200);
    expect(await placesOf(mine)).toEqual([]);
    const bad = await call(member, 'POST', '/ciphers/bulk-collections', { organizationId: org, cipherIds: [locked], collectionIds: [readOnly] });
    expect(bad.status).toBe(400);
    expect(bad.body.validationErrors).toHaveProperty('collectionIds');
    const tooMany = await call(member, 'POST', '/ciphers/bulk-collections', { organizationId: org, cipherIds: Array.from({ length: 501 }, () => crypto.randomUUID()), collectionIds: [writable] });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.validationErrors).toHaveProperty('cipherIds');
  });

  it('keeps an item whose passwords are hidden from the caller out of their other collections', async () => {
    const hider = await actor(server, org, `hider-${crypto.randomUUID()}@example.com`);
    const veiled = await seedCollection(server, org, { users: [[hider.memberId, { hidePasswords: true }]] });
    const open = await seedCollection(server, org, { users: [[hider.memberId]] });
    const item = await seedOrgItem(server, org, [veiled]);
    const placesOf = async () => (await server.database.db.selectFrom('collection_ciphers').select('collection_id').where('cipher_id', '=', item).execute()).map((r) => r.collection_id);

    // They may edit it, but moving it where its passwords show would reveal them.
    const single = await call(hider, 'PUT', `/ciphers/${item}/collections_v2`, { collectionIds: [veiled, open] });
    expect(single.status, single.text).toBe(400);
    expect(single.body.message).toBe('You do not have permission to change the collections of this item.');
    const bulk = await call(hider, 'POST', '/ciphers/bulk-collections', { organizationId: org, cipherIds: [item], collectionIds: [open] });
    expect(bulk.status).toBe(400);
    expect(await placesOf()).toEqual([veiled]);
  });
});

describe('admin views', () => {
  it('serves /admin to admins and managers of a holding collection, 404 to others', async () => {
    const id = await seedOrgItem(server, org, [managed]);
    const unassigned = await seedOrgItem(server, org);
    const admin = await actor(server, org, 'admin@example.com', { type: OrganizationUserType.Admin });
    const res = await call(admin, 'GET', `/ciphers/${unassigned}/admin`);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ object: 'cipherMiniDetails', id: unassigned, collectionIds: [] });
    expect((await call(manager, 'GET', `/ciphers/${id}/admin`)).body).toMatchObject({ id, collectionIds: [managed] });
    expect((await call(manager, 'GET', `/ciphers/${unassigned}/admin`)).status).toBe(404);
    expect((await call(member, 'GET', `/ciphers/${id}/admin`)).status).toBe(404);
  });

  it('lists every item to members who may view all items, and assigned items to everyone', async () => {
    const viewer = await actor(server, org, 'viewer@example.com', custom('editAnyCollection'));
    const all = await call(viewer, 'GET', `/ciphers/organization-details?organizationId=${org}&includeMemberItems=true`);
    expect(all.status, all.text).toBe(200);
    const count = await server.database.db.selectFrom('ciphers').select('id').where('organization_id', '=', org).execute();
    expect((all.body.data as unknown[]).length).toBe(count.length);
    expect((await call(member, 'GET', `/ciphers/organization-details?organizationId=${org}`)).status).toBe(403);
    const stranger = await actor(server, otherOrg, 'stranger@example.com', { type: OrganizationUserType.Owner });
    expect((await call(stranger, 'GET', `/ciphers/organization-details?organizationId=${org}`)).status).toBe(404);
    const assigned = await call(member, 'GET', `/ciphers/organization-details/assigned?organizationId=${org}`);
    expect(assigned.status).toBe(200);
    // Exactly the items in the member's two collections, each listing only those collections.
    const inTheirs = await server.database.db.selectFrom('collection_ciphers').select('cipher_id').where('collection_id', 'in', [writable, readOnly]).execute();
    const expected = [...new Set(inTheirs.map((r) => r.cipher_id))].sort();
    expect(expected.length).toBeGreaterThan(0);
    const listed = assigned.body.data as { id: string; collectionIds: string[] }[];
    expect(listed.map((c) => c.id).sort()).toEqual(expected);
    expect(listed.flatMap((c) => c.collectionIds).every((c) => c === writable || c === readOnly)).toBe(true);
  });
});
