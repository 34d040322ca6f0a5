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
let editor: Actor;
let member: Actor;
let manager: Actor;
let shared: string;
let managed: string;
let foreign: string;
const key = generateSymmetricKey();
const CLIENT = { 'bitwarden-client-version': '2026.9.0' };
const call = (who: Actor, method: string, path: string, json?: unknown) =>
  server.request(method, `/api${path}`, { token: who.token, headers: CLIENT, ...(json === undefined ? {} : { json }) });
const db = () => server.database.db;
const eventTypes = async (cipherId: string) => (await db().selectFrom('events').select('type').where('cipher_id', '=', cipherId).execute()).map((e) => e.type).sort();
const row = (id: string) => db().selectFrom('ciphers').select(['id', 'data', 'deleted_date']).where('id', '=', id).executeTakeFirst();
const placesOf = async (id: string) => (await db().selectFrom('collection_ciphers').select('collection_id').where('cipher_id', '=', id).execute()).map((r) => r.collection_id).sort();
const trash = (id: string) => db().updateTable('ciphers').set({ deleted_date: new Date().toISOString() }).where('id', '=', id).execute();
const setAdminAccess = (allowed: boolean) => db().updateTable('organizations').set({ allow_admin_access_to_all_collection_items: allowed }).where('id', '=', org).execute();

beforeAll(async () => {
  server = await startTestServer();
  org = await seedOrganization(server, { name: 'Acme' });
  otherOrg = await seedOrganization(server, { name: 'Other' });
  owner = await actor(server, org, 'owner@example.com', { type: OrganizationUserType.Owner });
  editor = await actor(server, org, 'editor@example.com', custom('editAnyCollection'));
  member = await actor(server, org, 'member@example.com');
  manager = await actor(server, org, 'manager@example.com');
  shared = await seedCollection(server, org, { users: [[member.memberId]] });
  managed = await seedCollection(server, org, { users: [[manager.memberId, { manage: true }]] });
  foreign = await seedCollection(server, otherOrg);
});
afterAll(async () => server?.close());

describe('the admin paths win over POST /ciphers/{id}', () => {
  it('routes POST /ciphers/admin and the bulk forms to the admin handlers, not to the item routes', async () => {
    const res = await call(owner, 'POST', '/ciphers/admin', { cipher: cipherBody('login', key, { organizationId: org }), collectionIds: [] });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ object: 'cipherMini', organizationId: org });
    for (const [method, path] of [
      ['PUT', '/ciphers/delete-admin'],
      ['PUT', '/ciphers/restore-admin'],
      ['DELETE', '/ciphers/admin'],
      ['POST', '/ciphers/delete-admin'],
    ] as const) {
      const bulk = await call(owner, method, path, { ids: [], organizationId: org });
      expect(bulk.status, `${method} ${path}: ${bulk.text}`).toBe(200);
    }
  });
});

describe('POST /ciphers/admin', () => {
  it('creates an item in any collection, or in none, for members who edit every item, with Cipher_Created', async () => {
    for (const who of [owner, editor]) {
      const res = await call(who, 'POST', '/ciphers/admin', { cipher: cipherBody('login', key, { organizationId: org }), collectionIds: [managed] });
      expect(res.status, res.text).toBe(200);
      expect(await placesOf(res.body.id as string)).toEqual([managed]);
      expect(await eventTypes(res.body.id as string)).toEqual([1100]);
    }
  });

  it('answers 404 to members, managers and restricted admins, and 400 naming the field for bad input', async () => {
    const body = { cipher: cipherBody('login', key, { organizationId: org }), collectionIds: [shared] };
    expect((await call(member, 'POST', '/ciphers/admin', body)).status).toBe(404);
    expect((await call(manager, 'POST', '/ciphers/admin', body)).status).toBe(404);
    await setAdminAccess(false);
    try {
      expect((await call(owner, 'POST', '/ciphers/admin', body)).status).toBe(404);
      // The custom flag reaches every item regardless.
      expect((await call(editor, 'POST', '/ciphers/admin', body)).status).toBe(200);
    } finally {
      await setAdminAccess(true);
    }
    const foreignCollection = await call(owner, 'POST', '/ciphers/admin', { ...body, collectionIds: [foreign] });
    expect(foreignCollection.status).toBe(400);
    expect(foreignCollection.body.validationErrors).toHaveProperty('collectionIds');
    const noOrg = await call(owner, 'POST', '/ciphers/admin', { cipher: cipherBody('login', key), collectionIds: [] });
    expect(noOrg.status).toBe(400);
    expect(noOrg.body.validationErrors).toHaveProperty(['cipher.organizationId']);
  });
});

describe('PUT|POST /ciphers/{id}/admin', () => {
  it('replaces the item for an admin, answers cipherMini and records Cipher_Updated', async () => {
    for (const method of ['PUT', 'POST']) {
      const item = await seedOrgItem(server, org, [managed]);
      const before = (await row(item))?.data;
      const res = await call(owner, method, `/ciphers/${item}/admin`, cipherBody('login', key, { organizationId: org }));
      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject({ object: 'cipherMini', id: item });
      expect((await row(item))?.data).not.toBe(before);
      expect(await eventTypes(item)).toEqual([1101]);
    }
  });

  it('answers 404 to members with edit and managers, and to a restricted admin for an item of a collection they lack', async () => {
    const item = await seedOrgItem(server, org, [shared]);
    const body = cipherBody('login', key, { organizationId: org });
    expect((await call(member, 'PUT', `/ciphers/${item}/admin`, body)).status).toBe(404);
    const managedItem = await seedOrgItem(server, org, [managed]);
    expect((await call(manager, 'PUT', `/ciphers/${managedItem}/admin`, body)).status).toBe(404);
    await setAdminAccess(false);
    try {
      expect((await call(owner, 'PUT', `/ciphers/${item}/admin`, body)).status).toBe(404);
      // An item in no collection stays open to owners and admins.
      const unassigned = await seedOrgItem(server, org);
      expect((await call(owner, 'PUT', `/ciphers/${unassigned}/admin`, body)).status).toBe(200);
    } finally {
      await setAdminAccess(true);
    }
    expect(await eventTypes(item)).toEqual([]);
  });

  it('refuses a change of organization (400) and a personal or unknown id (404)', async () => {
    const item = await seedOrgItem(server, org, [managed]);
    const moved = await call(owner, 'PUT', `/ciphers/${item}/admin`, cipherBody('login', key, { organizationId: otherOrg }));
    expect(moved.status).toBe(400);
    expect(moved.body.validationErrors).toHaveProperty('organizationId');
    expect((await call(owner, 'PUT', `/ciphers/${crypto.randomUUID()}/admin`, cipherBody('login', key, { organizationId: org }))).status).toBe(404);
  });
});

describe('PUT|POST /ciphers/{id}/collections-admin', () => {
  it('sets exactly the collections, answers cipherMiniDetails and records Cipher_UpdatedCollections', async () => {
    const item = await seedOrgItem(server, org, [shared]);
    const res = await call(owner, 'PUT', `/ciphers/${item}/collections-admin`, { collectionIds: [managed] });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ object: 'cipherMiniDetails', id: item, collectionIds: [managed] });
    expect(await placesOf(item)).toEqual([managed]);
    expect(await eventTypes(item)).toEqual([1106]);
    const older = await call(editor, 'POST', `/ciphers/${item}/collections-admin`, { collectionIds: [] });
    expect(older.status, older.text).toBe(200);
    expect(await placesOf(item)).toEqual([]);
  });

  it('refuses collections of another organization (400) and non-admins (404)', async () => {
    const item = await seedOrgItem(server, org, [shared]);
    const res = await call(owner, 'PUT', `/ciphers/${item}/collections-admin`, { collectionIds: [foreign] });
    expect(res.status).toBe(400);
    expect(res.body.validationErrors).toHaveProperty('collectionIds');
    expect((await call(member, 'PUT', `/ciphers/${item}/collections-admin`, { collectionIds: [] })).status).toBe(404);
    expect(await placesOf(item)).toEqual([shared]);
  });

  it('lets a restricted admin name only collections they may write to', async () => {
    const item = await seedOrgItem(server, org);
    await setAdminAccess(false);
    try {
      expect((await call(owner, 'PUT', `/ciphers/${item}/collections-admin`, { collectionIds: [managed] })).status).toBe(404);
      expect(await placesOf(item)).toEqual([]);
    } finally {
      await setAdminAccess(true);
    }
  });
});

describe('trash, restore and delete as an admin', () => {
  it('moves one item to the trash and back, with Cipher_SoftDeleted and Cipher_Restored', async () => {
    const item = await seedOrgItem(server, org, [managed]);
    expect((await call(owner, 'PUT', `/ciphers/${item}/delete-admin`)).status).toBe(200);
    expect((await row(item))?.deleted_date).toBeTruthy();
    const restored = await call(owner, 'PUT', `/ciphers/${item}/restore-admin`);
    expect(restored.status, restored.text).toBe(200);
    expect(restored.body).toMatchObject({ object: 'cipherMini', id: item, deletedDate: null });
    expect((await row(item))?.deleted_date).toBeNull();
    expect(await eventTypes(item)).toEqual([1115, 1116]);
  });

  it('trashes and restores many, all or nothing', async () => {
    const a = await seedOrgItem(server, org, [managed]);
    const b = await seedOrgItem(server, org);
    const other = await seedOrgItem(server, otherOrg, [foreign]);
    expect((await call(owner, 'PUT', '/ciphers/delete-admin', { ids: [a, b, other], organizationId: org })).status).toBe(404);
    expect((await row(a))?.deleted_date).toBeNull();
    expect((await call(owner, 'PUT', '/ciphers/delete-admin', { ids: [a, b], organizationId: org })).status).toBe(200);
    expect((await row(b))?.deleted_date).toBeTruthy();
    const restored = await call(owner, 'PUT', '/ciphers/restore-admin', { ids: [a, b], organizationId: org });
    expect(restored.status, restored.text).toBe(200);
    expect((restored.body.data as { id: string }[]).map((c) => c.id).sort()).toEqual([a, b].sort());
    expect(await eventTypes(a)).toEqual([1115, 1116]);
  });

  it('deletes for good, one and many, in both forms, with Cipher_Deleted', async () => {
    const one = await seedOrgItem(server, org, [managed]);
    const older = await seedOrgItem(server, org, [managed]);
    const many = [await seedOrgItem(server, org, [shared]), await seedOrgItem(server, org)];
    expect((await call(editor, 'DELETE', `/ciphers/${one}/admin`)).status).toBe(200);
    expect((await call(editor, 'POST', `/ciphers/${older}/delete-admin`)).status).toBe(200);
    expect((await call(owner, 'DELETE', '/ciphers/admin', { ids: many, organizationId: org })).status).toBe(200);
    for (const id of [one, older, ...many]) {
      expect(await row(id)).toBeUndefined();
      expect(await eventTypes(id)).toEqual([1102]);
    }
    const last = await seedOrgItem(server, org);
    expect((await call(owner, 'POST', '/ciphers/delete-admin', { ids: [last], organizationId: org })).status).toBe(200);
    expect(await row(last)).toBeUndefined();
  });

  it('answers 404 to non-admins and nothing changes; bad bodies get 400 naming the field', async () => {
    const item = await seedOrgItem(server, org, [shared]);
    await trash(item);
    expect((await call(member, 'PUT', `/ciphers/${item}/restore-admin`)).status).toBe(404);
    expect((await call(member, 'DELETE', `/ciphers/${item}/admin`)).status).toBe(404);
    expect((await call(manager, 'PUT', '/ciphers/restore-admin', { ids: [item], organizationId: org })).status).toBe(404);
    expect(await row(item)).toBeDefined();
    const missing = await call(owner, 'PUT', '/ciphers/delete-admin', { ids: [item] });
    expect(missing.status).toBe(400);
    expect(missing.text).toContain('organizationId');
    const tooMany = await call(owner, 'DELETE', '/ciphers/admin', { ids: Array.from({ length: 501 }, () => crypto.randomUUID()), organizationId: org });
    expect(tooMany.status).toBe(400);
  });
});
