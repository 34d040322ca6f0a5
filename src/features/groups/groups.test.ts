import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actor, orgWithCallers, custom, eventsOf, freshEmail, freshOrgWithOwner, ROLES, seedCollection, seedGroup, type Actor } from '../../../test/support/admin.js';
import { seedOrganization } from '../../../test/support/orgs.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { EventType } from '../../platform/audit/event-type.js';
import { PlanType } from '../organizations/plans.js';

// One server for the file: each test makes its own organizations and users (fresh emails) and
// reads back only those.
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server.close());

describe('group permission matrix', () => {
  let org: string;
  let group: string;
  let actors: Record<string, Actor> = {};
  const CASES = {
    ...ROLES,
    manageGroups: custom('manageGroups'),
    manageUsers: custom('manageUsers'),
    editAny: custom('editAnyCollection'),
    managePolicies: custom('managePolicies'),
  };

  beforeAll(async () => {
    ({ org, actors } = await orgWithCallers(server, CASES));
    group = await seedGroup(server, org);
    // With creation open every member may list the groups (see below); limited, the roles decide.
    await server.database.db.updateTable('organizations').set({ limit_collection_creation: true }).where('id', '=', org).execute();
  });

  const call = (who: string, method: string, path: string, json?: unknown) =>
    server.request(method, path, { token: actors[who]?.token ?? '', ...(json !== undefined ? { json } : {}) });

  it.each([
    // [caller, list, details list, manage (get, users, create, update, delete)]
    ['owner', 200, 200, 200],
    ['admin', 200, 200, 200],
    ['manageGroups', 200, 200, 200],
    ['manageUsers', 200, 200, 403],
    ['editAny', 200, 403, 403],
    ['manager', 200, 403, 403],
    ['user', 403, 403, 403],
    ['managePolicies', 403, 403, 403],
    ['invited', 404, 404, 404],
    ['accepted', 404, 404, 404],
    ['revoked', 404, 404, 404],
    ['stranger', 404, 404, 404],
  ] as const)('%s: list %i, details %i, get/create/update/delete %i', async (who, listStatus, detailsStatus, manage) => {
    const base = `/api/organizations/${org}/groups`;
    expect((await call(who, 'GET', base)).status).toBe(listStatus);
    expect((await call(who, 'GET', `${base}/details`)).status).toBe(detailsStatus);
    expect((await call(who, 'GET', `${base}/${group}`)).status).toBe(manage);
    expect((await call(who, 'GET', `${base}/${group}/details`)).status).toBe(manage);
    expect((await call(who, 'GET', `${base}/${group}/users`)).status).toBe(manage);
    const created = await call(who, 'POST', base, { name: `by ${who}`, collections: [], users: [] });
    expect(created.status).toBe(manage);
    const target = await seedGroup(server, org);
    expect((await call(who, 'PUT', `${base}/${target}`, { name: 'renamed', collections: [], users: [] })).status).toBe(manage);
    expect((await call(who, 'DELETE', `${base}/${target}`)).status).toBe(manage);
  });

  it('lets every member list the groups while any member may create collections', async () => {
    const db = server.database.db;
    await db.updateTable('organizations').set({ limit_collection_creation: false }).where('id', '=', org).execute();
    try {
      for (const who of ['user', 'managePolicies']) expect((await call(who, 'GET', `/api/organizations/${org}/groups`)).status, who).toBe(200);
      expect((await call('revoked', 'GET', `/api/organizations/${org}/groups`)).status).toBe(404);
    } finally {
      await db.updateTable('organizations').set({ limit_collection_creation: true }).where('id', '=', org).execute();
    }
  });

  it('lets a user who manages a collection list the groups', async () => {
    await seedCollection(server, org, { users: [[actors.user?.memberId ?? '', { manage: true }]] });
    expect((await call('user', 'GET', `/api/organizations/${org}/groups`)).status).toBe(200);
  });
});

describe('groups', () => {
  it('creates, reads, updates and deletes a group with collections and members, recording each change', async () => {
    const { org, owner } = await freshOrgWithOwner(server);
    const alice = await actor(server, org, freshEmail('alice'));
    const bob = await actor(server, org, freshEmail('bob'));
    const [c1, c2] = [await seedCollection(server, org), await seedCollection(server, org)];
    const base = `/api/organizations/${org}/groups`;

    const created = await server.request('POST', base, {
      token: owner.token,
      json: { name: 'Engineering', externalId: 'eng', collections: [{ id: c1, readOnly: true }, { id: c2.toUpperCase(), manage: true }], users: [alice.memberId] },
    });
    expect(created.status).toBe(200);
    const id: string = created.body.id;
    expect(created.body).toEqual({ object: 'group', id, organizationId: org, name: 'Engineering', accessAll: false, externalId: 'eng' });

    const details = await server.request('GET', `${base}/${id}/details`, { token: owner.token });
    expect(details.body.collections).toEqual(
      expect.arrayContaining([
        { id: c1, readOnly: true, hidePasswords: false, manage: false },
        { id: c2, readOnly: false, hidePasswords: false, manage: true },
      ]),
    );
    expect((await server.request('GET', `${base}/${id}/users`, { token: owner.token })).body).toEqual([alice.memberId]);
    expect((await server.request('GET', `${base}/details`, { token: owner.token })).body.data).toHaveLength(1);
    expect((await server.request('GET', base, { token: owner.token })).body.data[0]).toMatchObject({ id, name: 'Engineering' });

    // Alice reaches the collections through the group.
    const aliceSees = await server.request('GET', '/api/collections', { token: alice.token });
    expect(aliceSees.body.data).toHaveLength(2);

    const updated = await server.request('PUT', `${base}/${id}`, { token: owner.token, json: { name: 'Eng', collections: [{ id: c1 }], users: [bob.memberId] } });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ name: 'Eng', externalId: 'eng' });
    expect((await server.request('GET', `${base}/${id}/users`, { token: owner.token })).body).toEqual([bob.memberId]);
    expect((await server.request('GET', '/api/collections', { token: alice.token })).body.data).toEqual([]);

    expect((await server.request('DELETE', `${base}/${id}`, { token: owner.token })).status).toBe(200);
    // Bob stays a member of the organization; only the access through the group is gone.
    const bobRow = await server.database.db.selectFrom('organization_users').select('id').where('id', '=', bob.memberId).executeTakeFirst();
    expect(bobRow).toBeDefined();
    expect(await server.database.db.selectFrom('group_users').selectAll().where('group_id', '=', id).execute()).toEqual([]);
    expect(await server.database.db.selectFrom('collection_groups').selectAll().where('group_id', '=', id).execute()).toEqual([]);
    expect((await server.request('GET', '/api/collections', { token: bob.token })).body.data).toEqual([]);

    expect((await eventsOf(server, EventType.Group_Created, org))[0]).toMatchObject({ group_id: id, organization_id: org, acting_user_id: owner.userId });
    expect(await eventsOf(server, EventType.Group_Updated, org)).toHaveLength(1);
    expect(await eventsOf(server, EventType.Group_Deleted, org)).toHaveLength(1);
    const memberEvents = (await eventsOf(server, EventType.OrganizationUser_UpdatedGroups, org)).map((e) => e.organization_user_id);
    expect(memberEvents).toEqual([alice.memberId, bob.memberId, alice.memberId]);
  });

  it('requires every field of an update, naming the missing one', async () => {
    const { org, owner } = await freshOrgWithOwner(server);
    const id = await seedGroup(server, org);
    const collection = await seedCollection(server, org);
    for (const [json, field] of [
      [{ collections: [], users: [] }, 'name'],
      [{ name: 'x', users: [] }, 'collections'],
      [{ name: 'x', collections: [] }, 'users'],
      [{ name: 'x'.repeat(101), collections: [], users: [] }, 'name'],
      [{ name: 'x', collections: [{ id: 'nope' }], users: [] }, 'collections[0].id'],
      [{ name: 'x', collections: [], users: [owner.memberId, owner.memberId] }, 'users'],
      // Manage excludes read-only and hidden passwords, as in the official server.
      [{ name: 'x', collections: [{ id: collection, manage: true, readOnly: true }], users: [] }, 'collections'],
    ] as const) {
      const res = await server.request('PUT', `/api/organizations/${org}/groups/${id}`, { token: owner.token, json });
      expect(res.status, field).toBe(400);
      expect(Object.keys(res.body.validationErrors ?? {}), JSON.stringify(res.body)).toContain(field);
    }
    const create = await server.request('POST', `/api/organizations/${org}/groups`, { token: owner.token, json: { name: 'x' } });
    expect(create.body.validationErrors).toEqual({ collections: ['The collections field is required unless the group has access to all collections.'] });
  });

  it.each([
    [PlanType.Free, 400],
    [PlanType.FamiliesAnnually, 400],
    [PlanType.TeamsAnnually, 200],
    [PlanType.EnterpriseAnnually, 200],
  ])('on plan %i, creating a group answers %i', async (plan, status) => {
    const org = await seedOrganization(server, { planType: plan });
    const owner = await actor(server, org, freshEmail('owner'), ROLES.owner);
    const res = await server.request('POST', `/api/organizations/${org}/groups`, { token: owner.token, json: { name: 'G', collections: [], users: [] } });
    expect(res.status).toBe(status);
    if (status === 400) expect(res.body.message).toBe('This organization cannot use groups.');
  });

  it('refuses to let callers add themselves, unless the group has access to all collections', async () => {
    const { org, owner } = await freshOrgWithOwner(server);
    const base = `/api/organizations/${org}/groups`;
    const refused = await server.request('POST', base, { token: owner.token, json: { name: 'G', collections: [], users: [owner.memberId] } });
    expect(refused.status).toBe(400);
    expect(refused.body.validationErrors).toEqual({ users: ['You cannot add yourself to groups.'] });

    const id = await seedGroup(server, org);
    const update = await server.request('PUT', `${base}/${id}`, { token: owner.token, json: { name: 'G', collections: [], users: [owner.memberId] } });
    expect(update.status).toBe(400);
    expect((await server.request('PUT', `${base}/${id}/users`, { token: owner.token, json: [owner.memberId] })).status).toBe(400);

    const all = await server.request('POST', base, { token: owner.token, json: { name: 'All', accessAll: true, users: [owner.memberId] } });
    expect(all.status).toBe(200);
    expect(all.body.accessAll).toBe(true);

    // Already a member: keeping oneself in the group is no addition.
    const mine = await seedGroup(server, org, [owner.memberId]);
    expect((await server.request('PUT', `${base}/${mine}`, { token: owner.token, json: { name: 'Mine', collections: [], users: [owner.memberId] } })).status).toBe(200);
  });

  it('lets only members who may edit every collection give a group access to all of them', async () => {
    const { org } = await freshOrgWithOwner(server);
    const groupsManager = await actor(server, org, freshEmail('gm'), custom('manageGroups'));
    const res = await server.request('POST', `/api/organizations/${org}/groups`, { token: groupsManager.token, json: { name: 'All', accessAll: true } });
    expect(res.status).toBe(403);
    expect(await server.database.db.selectFrom('groups').selectAll().where('organization_id', '=', org).execute()).toEqual([]);
  });

  it('keeps the access to collections the caller may not edit when they save the group, and leaves it all with a null list', async () => {
    const s = server;
    const { org, owner } = await freshOrgWithOwner(s);
    // Admins do not reach every collection, so a group manager edits only the collections they manage.
    await s.database.db.updateTable('organizations').set({ allow_admin_access_to_all_collection_items: false }).where('id', '=', org).execute();
    const manager = await actor(s, org, freshEmail('gm'), custom('manageGroups'));
    const group = await seedGroup(s, org);
    const theirs = await seedCollection(s, org, { users: [[manager.memberId, { manage: true }]], groups: [[group, { readOnly: true }]] });
    const notTheirs = await seedCollection(s, org, { users: [[owner.memberId, { manage: true }]], groups: [[group, { hidePasswords: true }]] });
    const access = async () =>
      (await s.database.db.selectFrom('collection_groups').select(['collection_id', 'read_only', 'hide_passwords']).where('group_id', '=', group).orderBy('collection_id').execute()).map((a) => [
        a.collection_id,
        Boolean(a.read_only),
        Boolean(a.hide_passwords),
      ]);
    const save = (collections: unknown) =>
      s.request('PUT', `/api/organizations/${org}/groups/${group}`, { token: manager.token, json: { name: 'g', collections, users: null } });

    const saved = await save([{ id: theirs, readOnly: false }]);
    expect(saved.status, saved.text).toBe(200);
    const expected = [
      [theirs, false, false],
      [notTheirs, false, true],
    ].sort((a, b) => String(a[0]).localeCompare(String(b[0])));
    expect(await access()).toEqual(expected);

    // Naming the collection they may not edit is refused, and changes nothing.
    expect((await save([{ id: theirs }, { id: notTheirs, readOnly: true }])).status).toBe(403);
    expect(await access()).toEqual(expected);

    // A null list leaves every access as it is.
    expect((await save(null)).status).toBe(200);
    expect(await access()).toEqual(expected);
  });

  it('refuses collections and members of another organization', async () => {
    const { org, owner, otherOrg, stranger } = await freshOrgWithOwner(server);
    const theirs = await seedCollection(server, otherOrg);
    const base = `/api/organizations/${org}/groups`;
    const c = await server.request('POST', base, { token: owner.token, json: { name: 'G', collections: [{ id: theirs }], users: [] } });
    expect(c.status).toBe(400);
    expect(c.body.validationErrors).toEqual({ collections: [`Collection ${theirs} does not belong to this organization.`] });
    const u = await server.request('POST', base, { token: owner.token, json: { name: 'G', collections: [], users: [stranger.memberId] } });
    expect(u.status).toBe(400);
    expect(Object.keys(u.body.validationErrors)).toEqual(['users']);
    const theirGroup = await seedGroup(server, otherOrg);
    expect((await server.request('GET', `${base}/${theirGroup}`, { token: owner.token })).status).toBe(404);
    expect((await server.request('PUT', `${base}/${theirGroup}`, { token: owner.token, json: { name: 'G', collections: [], users: [] } })).status).toBe(404);
    expect((await server.request('DELETE', `${base}/${theirGroup}`, { token: owner.token })).status).toBe(404);
    expect(await server.database.db.selectFrom('groups').selectAll().where('organization_id', '=', org).execute()).toEqual([]);
  });

  it('deletes groups in bulk, all or none', async () => {
    const { org, owner, otherOrg } = await freshOrgWithOwner(server);
    const [a, b, c] = [await seedGroup(server, org), await seedGroup(server, org), await seedGroup(server, org)];
    const theirs = await seedGroup(server, otherOrg);
    const base = `/api/organizations/${org}/groups`;
    expect((await server.request('DELETE', base, { token: owner.token, json: { ids: [a, theirs] } })).status).toBe(404);
    expect(await server.database.db.selectFrom('groups').selectAll().where('organization_id', 'in', [org, otherOrg]).execute()).toHaveLength(4);
    expect((await server.request('DELETE', base, { token: owner.token, json: { ids: [a, b] } })).status).toBe(200);
    expect((await server.request('POST', `${base}/delete`, { token: owner.token, json: { ids: [c] } })).status).toBe(200);
    expect((await server.database.db.selectFrom('groups').select('id').where('organization_id', 'in', [org, otherOrg]).execute()).map((g) => g.id)).toEqual([theirs]);
    expect(await eventsOf(server, EventType.Group_Deleted, org)).toHaveLength(3);
    expect((await server.request('DELETE', base, { token: owner.token, json: {} })).body.validationErrors).toEqual({ ids: ['The ids field is required.'] });
  });

  it('sets and removes single members', async () => {
    const { org, owner } = await freshOrgWithOwner(server);
    const alice = await actor(server, org, freshEmail('alice'));
    const id = await seedGroup(server, org);
    const base = `/api/organizations/${org}/groups/${id}`;
    expect((await server.request('PUT', `${base}/users`, { token: owner.token, json: [alice.memberId] })).status).toBe(200);
    expect((await server.request('GET', `${base}/users`, { token: owner.token })).body).toEqual([alice.memberId]);
    expect((await server.request('DELETE', `${base}/user/${alice.memberId}`, { token: owner.token })).status).toBe(200);
    expect((await server.request('GET', `${base}/users`, { token: owner.token })).body).toEqual([]);
    expect((await server.request('POST', `${base}/delete-user/${alice.memberId}`, { token: owner.token })).status).toBe(404);
    expect(await eventsOf(server, EventType.OrganizationUser_UpdatedGroups, org)).toHaveLength(2);
  });
});
