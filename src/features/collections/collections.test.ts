import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actor, orgWithCallers, custom, ENC, eventsOf, freshEmail, freshOrgWithOwner, ROLES, seedCollection, seedGroup, type Actor } from '../../../test/support/admin.js';
import { seedOrganization } from '../../../test/support/orgs.js';
import { startTestServer, type TestResponse, type TestServer } from '../../../test/support/test-server.js';
import { EventType } from '../../platform/audit/event-type.js';
import { PlanType } from '../organizations/plans.js';
import { OrganizationUserStatusType } from '../../platform/access/roles.js';

interface Listed {
  id: string;
  readOnly: boolean;
  hidePasswords: boolean;
  manage: boolean;
}
const dataOf = (res: TestResponse) => res.body.data as Listed[];
const idsOf = (res: TestResponse) => dataOf(res).map((c) => c.id);

const body = (extra: Record<string, unknown> = {}) => ({ name: ENC, externalId: null, groups: [], users: [], ...extra });

// One server for the file: each test makes its own organizations and users (fresh emails) and
// reads back only those.
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server.close());

describe('collection permission matrix', () => {
  let org: string;
  let actors: Record<string, Actor> = {};
  const ROLE_CASES = {
    ...ROLES,
    editAny: custom('editAnyCollection'),
    deleteAny: custom('deleteAnyCollection'),
    createNew: custom('createNewCollections'),
    manageGroups: custom('manageGroups'),
    manageUsers: custom('manageUsers'),
    editAssigned: custom('editAssignedCollections'),
    deleteAssigned: custom('deleteAssignedCollections'),
  };

  beforeAll(async () => {
    ({ org, actors } = await orgWithCallers(server, ROLE_CASES));
  });

  /** A collection where `name` holds the given grant directly (none: unassigned). */
  async function collectionFor(name: string, grant?: { readOnly?: boolean; manage?: boolean }): Promise<string> {
    const member = actors[name];
    return seedCollection(server, org, grant && member ? { users: [[member.memberId, grant]] } : {});
  }

  const call = (who: string, method: string, path: string, json?: unknown) =>
    server.request(method, path, { token: actors[who]?.token ?? '', ...(json !== undefined ? { json } : {}) });

  it.each([
    ['owner', 200, 'all'],
    ['admin', 200, 'all'],
    ['editAny', 200, 'all'],
    ['deleteAny', 200, 'all'],
    ['manageGroups', 200, 'all'],
    ['user', 200, 'managed'],
    ['manager', 200, 'managed'],
    ['createNew', 200, 'managed'],
    ['manageUsers', 200, 'managed'],
    ['invited', 404, ''],
    ['accepted', 404, ''],
    ['revoked', 404, ''],
    ['stranger', 404, ''],
  ])('GET /organizations/{org}/collections as %s answers %i (%s)', async (who, status, shown) => {
    const managed = await collectionFor(who, { manage: true });
    const readOnly = await collectionFor(who, { readOnly: true });
    const unassigned = await collectionFor('owner');
    const res = await call(who, 'GET', `/api/organizations/${org}/collections`);
    expect(res.status).toBe(status);
    if (status !== 200) return;
    const ids = idsOf(res);
    if (shown === 'all') {
      expect(ids).toEqual(expect.arrayContaining([managed, readOnly, unassigned]));
    } else {
      expect(ids).toContain(managed);
      expect(ids).not.toContain(unassigned);
      // Managers manage every collection they are assigned to; others only those with manage.
      expect(ids.includes(readOnly)).toBe(who === 'manager');
    }
  });

  it('GET details lists everything for members who manage users, with access lists', async () => {
    const id = await collectionFor('user', { readOnly: true });
    const res = await call('manageUsers', 'GET', `/api/organizations/${org}/collections/details`);
    expect(res.status).toBe(200);
    const found = dataOf(res).find((c) => c.id === id);
    expect(found).toMatchObject({
      object: 'collectionAccessDetails',
      users: [{ id: actors.user?.memberId, readOnly: true, hidePasswords: false, manage: false }],
      groups: [],
      assigned: false,
      unmanaged: true,
    });
  });

  it.each([
    // [caller, grant on the collection, GET, details, edit, delete]
    ['owner', undefined, 200, 200, 200, 200],
    ['admin', undefined, 200, 200, 200, 200],
    ['editAny', undefined, 200, 200, 200, 403],
    ['deleteAny', undefined, 200, 200, 403, 200],
    ['manageUsers', undefined, 403, 200, 403, 403],
    ['manageGroups', undefined, 403, 200, 403, 403],
    ['user', undefined, 404, 404, 404, 404],
    ['user', { readOnly: true }, 403, 403, 403, 403],
    ['user', { manage: true }, 200, 200, 200, 200],
    ['manager', undefined, 404, 404, 404, 404],
    ['manager', { readOnly: true }, 200, 200, 200, 200],
    ['createNew', undefined, 404, 404, 404, 404],
    // The legacy "assigned collections" flags give nothing beyond the grant (the official server
    // turned them into manage): a read-only assignee may not rewrite its own access or delete.
    ['editAssigned', { readOnly: true }, 403, 403, 403, 403],
    ['deleteAssigned', { readOnly: true }, 403, 403, 403, 403],
    ['editAssigned', { manage: true }, 200, 200, 200, 200],
    ['invited', { manage: true }, 404, 404, 404, 404],
    ['accepted', { manage: true }, 404, 404, 404, 404],
    ['revoked', { manage: true }, 404, 404, 404, 404],
    ['stranger', undefined, 404, 404, 404, 404],
  ] as const)('on one collection, %s with %j: get %i, details %i, edit %i, delete %i', async (who, grant, get, details, edit, del) => {
    const id = await collectionFor(who, grant);
    const path = `/api/organizations/${org}/collections/${id}`;
    expect((await call(who, 'GET', path)).status).toBe(get);
    expect((await call(who, 'GET', `${path}/details`)).status).toBe(details);
    expect((await call(who, 'GET', `${path}/users`)).status).toBe(get);
    // Keep a managing member so that an edit never leaves the collection unmanaged.
    const users = [{ id: actors.owner?.memberId, manage: true }, ...(grant && actors[who] ? [{ id: actors[who].memberId, ...grant }] : [])];
    expect((await call(who, 'PUT', path, body({ users }))).status).toBe(edit);
    expect((await call(who, 'DELETE', path)).status).toBe(del);
    const exists = await server.database.db.selectFrom('collections').select('id').where('id', '=', id).executeTakeFirst();
    expect(Boolean(exists)).toBe(del !== 200);
  });

  it.each([
    ['owner', 200],
    ['admin', 200],
    ['createNew', 200],
    ['user', 403],
    ['manager', 403],
    ['editAny', 403],
    ['invited', 404],
    ['revoked', 404],
    ['stranger', 404],
  ] as const)('with collection creation limited, POST as %s answers %i', async (who, status) => {
    await server.database.db.updateTable('organizations').set({ limit_collection_creation: true }).where('id', '=', org).execute();
    try {
      expect((await call(who, 'POST', `/api/organizations/${org}/collections`, body())).status).toBe(status);
    } finally {
      await server.database.db.updateTable('organizations').set({ limit_collection_creation: false }).where('id', '=', org).execute();
    }
  });

  it('answers 401 without a token', async () => {
    expect((await server.request('GET', `/api/organizations/${org}/collections`)).status).toBe(401);
    expect((await server.request('GET', '/api/collections')).status).toBe(401);
  });
});

describe('collections', () => {
  it('creates a collection with access as bw create org-collection sends it, and records the event', async () => {
    const { org, owner } = await freshOrgWithOwner(server);
    const member = await actor(server, org, freshEmail('member'));
    const group = await seedGroup(server, org);
    const res = await server.request('POST', `/api/organizations/${org}/collections`, {
      token: owner.token,
      json: body({ externalId: 'ext-1', users: [{ id: owner.memberId, readOnly: false, hidePasswords: false, manage: true }, { id: member.memberId.toUpperCase(), readOnly: true }], groups: [{ id: group, hidePasswords: true }] }),
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      object: 'collectionAccessDetails',
      organizationId: org,
      name: ENC,
      externalId: 'ext-1',
      type: 0,
      assigned: true,
      readOnly: false,
      hidePasswords: false,
      manage: true,
      unmanaged: false,
      groups: [{ id: group, readOnly: false, hidePasswords: true, manage: false }],
    });
    expect(res.body.users).toEqual(
      expect.arrayContaining([
        { id: owner.memberId, readOnly: false, hidePasswords: false, manage: true },
        { id: member.memberId, readOnly: true, hidePasswords: false, manage: false },
      ]),
    );
    const [event] = await eventsOf(server, EventType.Collection_Created, org);
    expect(event).toMatchObject({ collection_id: res.body.id, organization_id: org, acting_user_id: owner.userId });

    const users = await server.request('GET', `/api/organizations/${org}/collections/${res.body.id}/users`, { token: owner.token });
    expect(users.body).toHaveLength(2);
    const mine = await server.request('GET', '/api/collections', { token: member.token });
    expect(mine.body.data).toEqual([
      { object: 'collectionDetails', id: res.body.id, organizationId: org, name: ENC, externalId: 'ext-1', type: 0, defaultUserCollectionEmail: null, readOnly: true, hidePasswords: false, manage: false },
    ]);
  });

  it('gives a creator who cannot edit every collection manage access to the new one', async () => {
    const { org } = await freshOrgWithOwner(server);
    const member = await actor(server, org, freshEmail('member'));
    const res = await server.request('POST', `/api/organizations/${org}/collections`, { token: member.token, json: body() });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ assigned: true, manage: true, users: [{ id: member.memberId, manage: true }] });
  });

  it('updates the name, keeps access that is left out, and replaces access that is sent', async () => {
    const { org, owner } = await freshOrgWithOwner(server);
    const member = await actor(server, org, freshEmail('member'));
    const id = await seedCollection(server, org, { users: [[member.memberId, { readOnly: true }]] });
    const other = ENC.replace('2.A', '2.B');
    const kept = await server.request('PUT', `/api/organizations/${org}/collections/${id}`, { token: owner.token, json: { name: other } });
    expect(kept.status).toBe(200);
    expect(kept.body).toMatchObject({ name: other, users: [{ id: member.memberId, readOnly: true }] });
    const replaced = await server.request('POST', `/api/organizations/${org}/collections/${id}`, { token: owner.token, json: { name: other, users: [] } });
    expect(replaced.body.users).toEqual([]);
    expect(await eventsOf(server, EventType.Collection_Updated, org)).toHaveLength(2);

    const put = await server.request('PUT', `/api/organizations/${org}/collections/${id}/users`, { token: owner.token, json: [{ id: member.memberId, manage: true }] });
    expect(put.status).toBe(200);
    const details = await server.request('GET', `/api/organizations/${org}/collections/${id}/details`, { token: member.token });
    expect(details.body).toMatchObject({ assigned: true, manage: true, users: [{ id: member.memberId, manage: true }] });
  });

  it('deletes one or many collections with their item assignments, and records each', async () => {
    const { org, owner } = await freshOrgWithOwner(server);
    const db = server.database.db;
    const [a, b, c, d] = [await seedCollection(server, org), await seedCollection(server, org), await seedCollection(server, org), await seedCollection(server, org)];
    const now = new Date().toISOString();
    for (const id of [a, b, c, d]) {
      const cipherId = randomUUID();
      await db
        .insertInto('ciphers')
        .values({ id: cipherId, user_id: null, organization_id: org, type: 2, data: '{}', key: null, reprompt: 0, attachments: null, creation_date: now, revision_date: now, deleted_date: null })
        .execute();
      await db.insertInto('collection_ciphers').values({ collection_id: id, cipher_id: cipherId }).execute();
    }

    expect((await server.request('DELETE', `/api/organizations/${org}/collections/${a}`, { token: owner.token })).status).toBe(200);
    expect((await server.request('POST', `/api/organizations/${org}/collections/${b}/delete`, { token: owner.token })).status).toBe(200);
    expect((await server.request('DELETE', `/api/organizations/${org}/collections`, { token: owner.token, json: { ids: [c] } })).status).toBe(200);
    expect((await server.request('POST', `/api/organizations/${org}/collections/delete`, { token: owner.token, json: { ids: [d] } })).status).toBe(200);

    expect(await db.selectFrom('collections').select('id').where('organization_id', '=', org).execute()).toEqual([]);
    expect(await db.selectFrom('collection_ciphers').selectAll().where('collection_id', 'in', [a, b, c, d]).execute()).toEqual([]);
    expect((await eventsOf(server, EventType.Collection_Deleted, org)).map((e) => e.collection_id)).toEqual([a, b, c, d]);
  });

  it('deletes nothing when a bulk delete names a collection of another organization or an unknown id', async () => {
    const { org, owner, otherOrg } = await freshOrgWithOwner(server);
    const mine = await seedCollection(server, org);
    const theirs = await seedCollection(server, otherOrg);
    for (const ids of [[mine, theirs], [mine, '6f3b6c1e-0000-4000-8000-000000000000']]) {
      const res = await server.request('DELETE', `/api/organizations/${org}/collections`, { token: owner.token, json: { ids } });
      expect(res.status).toBe(404);
    }
    expect(await server.database.db.selectFrom('collections').select('id').where('organization_id', 'in', [org, otherOrg]).execute()).toHaveLength(2);
    const empty = await server.request('DELETE', `/api/organizations/${org}/collections`, { token: owner.token, json: { ids: [] } });
    expect(empty.status).toBe(400);
    expect(Object.keys(empty.body.validationErrors)).toEqual(['ids']);
  });

  it('refuses members and groups of another organization, and groups where the plan has none', async () => {
    const { org, owner, otherOrg, stranger } = await freshOrgWithOwner(server);
    const foreignGroup = await seedGroup(server, otherOrg);
    const path = `/api/organizations/${org}/collections`;
    const users = await server.request('POST', path, { token: owner.token, json: body({ users: [{ id: stranger.memberId }] }) });
    expect(users.status).toBe(400);
    expect(users.body.validationErrors).toEqual({ users: [`Member ${stranger.memberId} does not belong to this organization.`] });
    const groups = await server.request('POST', path, { token: owner.token, json: body({ groups: [{ id: foreignGroup }] }) });
    expect(groups.status).toBe(400);
    expect(Object.keys(groups.body.validationErrors)).toEqual(['groups']);

    const free = await seedOrganization(server, { planType: PlanType.Free });
    const freeOwner = await actor(server, free, freshEmail('freeowner'), ROLES.owner);
    const freeGroup = await seedGroup(server, free);
    const res = await server.request('POST', `/api/organizations/${free}/collections`, { token: freeOwner.token, json: body({ groups: [{ id: freeGroup }] }) });
    expect(res.status).toBe(400);
    expect(res.body.validationErrors).toEqual({ groups: ['This organization cannot use groups.'] });
    expect(await server.database.db.selectFrom('collections').selectAll().where('organization_id', 'in', [org, otherOrg, free]).execute()).toEqual([]);
  });

  it('enforces the plan\'s collection limit (Free: 2)', async () => {
    const free = await seedOrganization(server, { planType: PlanType.Free });
    const owner = await actor(server, free, freshEmail('owner'), ROLES.owner);
    const path = `/api/organizations/${free}/collections`;
    expect((await server.request('POST', path, { token: owner.token, json: body() })).status).toBe(200);
    expect((await server.request('POST', path, { token: owner.token, json: body() })).status).toBe(200);
    const third = await server.request('POST', path, { token: owner.token, json: body() });
    expect(third.status).toBe(400);
    expect(third.body.message).toBe('You have reached the maximum number of collections (2) for this organization.');
  });

  it('answers bad input with a 400 naming the field', async () => {
    const { org, owner } = await freshOrgWithOwner(server);
    const path = `/api/organizations/${org}/collections`;
    const cases: [unknown, string][] = [
      [{ ...body(), name: 'plain text' }, 'name'],
      [{ users: [] }, 'name'],
      [{ ...body(), users: [{ id: 'not-a-guid' }] }, 'users[0].id'],
      [{ ...body(), users: [{ id: owner.memberId, readOnly: 'yes' }] }, 'users[0].readOnly'],
      [{ ...body(), users: [{ id: owner.memberId }, { id: owner.memberId.toUpperCase() }] }, 'users'],
      [{ ...body(), externalId: 'x'.repeat(301) }, 'externalId'],
      // Manage excludes read-only and hidden passwords, as in the official server.
      [{ ...body(), users: [{ id: owner.memberId, manage: true, readOnly: true }] }, 'users'],
      [{ ...body(), groups: [{ id: randomUUID(), manage: true, hidePasswords: true }] }, 'groups'],
    ];
    for (const [json, field] of cases) {
      const res = await server.request('POST', path, { token: owner.token, json });
      expect(res.status, field).toBe(400);
      expect(Object.keys(res.body.validationErrors ?? {}), JSON.stringify(res.body)).toContain(field);
    }
    expect((await server.request('GET', `${path}/not-a-guid`, { token: owner.token })).status).toBe(400);
    expect((await server.request('GET', `${path}/6f3b6c1e-0000-4000-8000-000000000000`, { token: owner.token })).status).toBe(404);
  });

  it('keeps owners to collections they manage or nobody manages when admins may not reach every collection', async () => {
    const { org, owner } = await freshOrgWithOwner(server);
    await server.database.db.updateTable('organizations').set({ allow_admin_access_to_all_collection_items: false }).where('id', '=', org).execute();
    const member = await actor(server, org, freshEmail('member'));
    const managed = await seedCollection(server, org, { users: [[member.memberId, { manage: true }]] });
    const orphan = await seedCollection(server, org);
    const path = `/api/organizations/${org}/collections`;
    expect((await server.request('PUT', `${path}/${managed}`, { token: owner.token, json: { name: ENC } })).status).toBe(403);
    expect((await server.request('DELETE', `${path}/${managed}`, { token: owner.token })).status).toBe(403);
    const adopt = await server.request('PUT', `${path}/${orphan}`, { token: owner.token, json: { name: ENC, users: [{ id: owner.memberId, manage: true }] } });
    expect(adopt.status).toBe(200);
    const nobody = await server.request('PUT', `${path}/${orphan}`, { token: owner.token, json: { name: ENC, users: [] } });
    expect(nobody.status).toBe(400);
    expect(nobody.body.message).toBe('At least one member or group must have can manage permission.');
  });

  it('lets only owners and admins delete collections while deletion is limited', async () => {
    const { org } = await freshOrgWithOwner(server);
    await server.database.db.updateTable('organizations').set({ limit_collection_deletion: true }).where('id', '=', org).execute();
    const member = await actor(server, org, freshEmail('member'));
    const id = await seedCollection(server, org, { users: [[member.memberId, { manage: true }]] });
    expect((await server.request('DELETE', `/api/organizations/${org}/collections/${id}`, { token: member.token })).status).toBe(403);
    expect((await server.request('PUT', `/api/organizations/${org}/collections/${id}`, { token: member.token, json: { name: ENC } })).status).toBe(200);
  });
});

describe('POST /organizations/{id}/collections/bulk-access', () => {
  let org: string;
  let owner: Actor;
  let otherOrg: string;
  beforeAll(async () => {
    ({ org, owner, otherOrg } = await freshOrgWithOwner(server));
  });

  const bulk = (who: Actor, json: unknown) => server.request('POST', `/api/organizations/${org}/collections/bulk-access`, { token: who.token, json });
  const usersOf = async (id: string) =>
    (await server.database.db.selectFrom('collection_users').select(['organization_user_id as id', 'read_only', 'manage']).where('collection_id', '=', id).execute())
      .map((r) => ({ id: r.id, readOnly: Boolean(r.read_only), manage: Boolean(r.manage) }))
      .sort((a, b) => a.id.localeCompare(b.id));

  it('adds members and groups to every collection named, replacing their own earlier access and keeping the rest', async () => {
    const alice = await actor(server, org, 'bulk-alice@example.com');
    const bob = await actor(server, org, 'bulk-bob@example.com');
    const group = await seedGroup(server, org);
    const first = await seedCollection(server, org, { users: [[alice.memberId, { manage: true }], [bob.memberId, { readOnly: true }]] });
    const second = await seedCollection(server, org);
    const before = (await eventsOf(server, EventType.Collection_Updated)).length;
    const res = await bulk(owner, { collectionIds: [first, second.toUpperCase()], users: [{ id: bob.memberId, manage: true }], groups: [{ id: group, readOnly: true }] });
    expect(res.status, res.text).toBe(200);
    expect(await usersOf(first)).toEqual([{ id: alice.memberId, readOnly: false, manage: true }, { id: bob.memberId, readOnly: false, manage: true }].sort((a, b) => a.id.localeCompare(b.id)));
    expect(await usersOf(second)).toEqual([{ id: bob.memberId, readOnly: false, manage: true }]);
    const groups = await server.database.db.selectFrom('collection_groups').select(['collection_id', 'read_only']).where('group_id', '=', group).execute();
    expect(groups.map((g) => [g.collection_id, Boolean(g.read_only)]).sort()).toEqual([[first, true], [second, true]].sort());
    expect((await eventsOf(server, EventType.Collection_Updated)).length - before).toBe(2);
  });

  it('changes nothing and answers 404 when one collection is not the organization\'s or not the caller\'s to edit', async () => {
    const carol = await actor(server, org, 'bulk-carol@example.com');
    const mine = await seedCollection(server, org, { users: [[carol.memberId, { manage: true }]] });
    const notMine = await seedCollection(server, org, { users: [[owner.memberId, { manage: true }]] });
    const foreign = await seedCollection(server, otherOrg);
    const target = await actor(server, org, 'bulk-target@example.com');
    for (const collectionIds of [[mine, notMine], [mine, foreign], [mine, randomUUID()]]) {
      const res = await bulk(carol, { collectionIds, users: [{ id: target.memberId }] });
      expect(res.status, res.text).toBe(404);
    }
    expect((await usersOf(mine)).map((u) => u.id)).toEqual([carol.memberId]);
    expect((await bulk(carol, { collectionIds: [mine], users: [{ id: target.memberId }] })).status).toBe(200);
  });

  it('refuses bad input naming the field', async () => {
    const id = await seedCollection(server, org);
    const stranger = await seedCollection(server, otherOrg);
    const cases: [unknown, string][] = [
      [{ collectionIds: [], users: [] }, 'collectionIds'],
      [{ collectionIds: ['nope'], users: [] }, 'collectionIds'],
      [{ collectionIds: [id], users: [{ id: randomUUID() }] }, 'users'],
      [{ collectionIds: [id], users: [{ id: owner.memberId, readOnly: true, manage: true }] }, 'users'],
      [{ collectionIds: Array.from({ length: 501 }, () => randomUUID()), users: [] }, 'collectionIds'],
      // 500 collections times 101 members is past the 50,000 grants one request may write.
      [{ collectionIds: Array.from({ length: 500 }, () => randomUUID()), users: Array.from({ length: 101 }, () => ({ id: randomUUID() })), groups: [] }, 'collectionIds'],
    ];
    for (const [json, field] of cases) {
      const res = await bulk(owner, json);
      expect(res.status, `${field}: ${res.text}`).toBe(400);
      expect(Object.keys(res.body.validationErrors ?? {}).some((key) => key.startsWith(field)), res.text).toBe(true);
    }
    expect((await bulk(owner, { collectionIds: [id, stranger], users: [] })).status).toBe(404);
  });
});

describe('the user\'s collections (GET /collections, sync)', () => {
  it('gives the highest access across direct grants and several groups', async () => {
    const { org, owner } = await freshOrgWithOwner(server);
    const member = await actor(server, org, freshEmail('member'));
    const g1 = await seedGroup(server, org, [member.memberId]);
    const g2 = await seedGroup(server, org, [member.memberId]);
    const g3 = await seedGroup(server, org, [owner.memberId]);
    const a = await seedCollection(server, org, { users: [[member.memberId, { readOnly: true, hidePasswords: true }]], groups: [[g1, { readOnly: false, hidePasswords: true }], [g2, { readOnly: true, hidePasswords: false }]] });
    const b = await seedCollection(server, org, { groups: [[g1, { readOnly: true, hidePasswords: true }], [g2, { readOnly: true, hidePasswords: true, manage: true }]] });
    const c = await seedCollection(server, org, { groups: [[g3, { manage: true }]] });
    const res = await server.request('GET', '/api/collections', { token: member.token });
    expect(res.status).toBe(200);
    const byId = Object.fromEntries(dataOf(res).map((x) => [x.id, [x.readOnly, x.hidePasswords, x.manage]]));
    expect(byId).toEqual({ [a]: [false, false, false], [b]: [true, true, true] });
    expect(byId[c]).toBeUndefined();
  });

  it('reaches every collection through a group with access to all, and nothing through unconfirmed or disabled memberships', async () => {
    const { org, otherOrg, stranger } = await freshOrgWithOwner(server);
    const member = await actor(server, org, freshEmail('member'));
    await seedGroup(server, org, [member.memberId], true);
    const ids = [await seedCollection(server, org), await seedCollection(server, org)];
    const res = await server.request('GET', '/api/collections', { token: member.token });
    expect(idsOf(res).sort()).toEqual(ids.sort());
    expect(dataOf(res).every((c) => c.manage && !c.readOnly)).toBe(true);

    await server.database.db.updateTable('organization_users').set({ status: OrganizationUserStatusType.Revoked }).where('id', '=', member.memberId).execute();
    expect((await server.request('GET', '/api/collections', { token: member.token })).body.data).toEqual([]);

    const strangers = await seedCollection(server, otherOrg, { users: [[stranger.memberId, { readOnly: true }]] });
    expect(idsOf(await server.request('GET', '/api/collections', { token: stranger.token }))).toEqual([strangers]);
    await server.database.db.updateTable('organizations').set({ enabled: false }).where('id', '=', otherOrg).execute();
    expect((await server.request('GET', '/api/collections', { token: stranger.token })).body.data).toEqual([]);
  });
});
