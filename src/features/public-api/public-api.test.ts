import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actor, eventsOf, seedCollection, seedGroup, seedTarget, type Actor } from '../../../test/support/admin.js';
import { seedOrganization } from '../../../test/support/orgs.js';
import { orgApiToken } from '../../../test/support/public-api.js';
import { invitationFrom, startSmtpSink, type SmtpSink } from '../../../test/support/smtp-sink.js';
import { startTestServer, type TestResponse, type TestServer } from '../../../test/support/test-server.js';
import { EventSystemUser, EventType } from '../../platform/audit/event-type.js';
import { PlanType } from '../organizations/plans.js';
import { OrganizationUserStatusType as Status, OrganizationUserType as Role } from '../../platform/access/roles.js';
import { PolicyType } from '../policies/policy-type.js';

let server: TestServer;
let sink: SmtpSink;
let org: string;
let owner: Actor;
let token: string;
/** Another organization, with its own API key: its ids must be strangers here. */
let otherOrg: string;
let otherToken: string;

beforeAll(async () => {
  sink = await startSmtpSink();
  server = await startTestServer({ env: sink.env });
  org = await seedOrganization(server, { name: 'Acme' });
  owner = await actor(server, org, 'owner@example.com', { type: Role.Owner });
  token = (await orgApiToken(server, org)).token;
  otherOrg = await seedOrganization(server, { name: 'Other' });
  otherToken = (await orgApiToken(server, otherOrg)).token;
}, 60_000);
afterAll(async () => {
  await server.close();
  await sink.close();
});

const call = (method: string, path: string, json?: unknown, bearer = token): Promise<TestResponse> =>
  server.request(method, `/api/public${path}`, { token: bearer, ...(json !== undefined ? { json } : {}) });

async function memberRow(id: string) {
  return server.database.db.selectFrom('organization_users').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The events of a type about one resource, as stored. */
async function eventsAbout(type: EventType, column: 'organization_user_id' | 'group_id' | 'collection_id' | 'policy_id', id: string) {
  return (await eventsOf(server, type)).filter((e) => e[column] === id);
}

function expectPublicApiEvent(event: { acting_user_id: string | null; system_user: number | null; organization_id: string | null } | undefined) {
  expect(event).toMatchObject({ acting_user_id: null, system_user: EventSystemUser.PublicApi, organization_id: org });
}

function expectValidation(res: TestResponse, field: string) {
  expect(res.status, res.text).toBe(400);
  expect(res.body.object).toBe('error');
  expect(typeof res.body.message).toBe('string');
  expect(Object.keys(res.body.validationErrors ?? {}), res.text).toContain(field);
}

describe('envelopes', () => {
  it('answers lists in the list envelope and errors in the error envelope', async () => {
    const listed = await call('GET', '/members');
    expect(listed.status).toBe(200);
    expect(listed.body).toMatchObject({ object: 'list', continuationToken: null });
    expect(Array.isArray(listed.body.data)).toBe(true);

    const missing = await call('GET', `/members/${randomUUID()}`);
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ object: 'error', message: 'Resource not found.' });

    const unknownRoute = await call('GET', '/nothing-here');
    expect(unknownRoute.status).toBe(404);
    expect(unknownRoute.body.object).toBe('error');

    const badJson = await server.request('POST', '/api/public/groups', { token, body: '{"name":', headers: { 'content-type': 'application/json' } });
    expect(badJson.status).toBe(400);
    expect(badJson.body.object).toBe('error');
    expect(badJson.body.validationErrors).toBeDefined();

    const badId = await call('GET', '/members/not-a-guid');
    expectValidation(badId, 'id');
  });

  it('has no collection create (names are encrypted)', async () => {
    const res = await call('POST', '/collections', { externalId: 'x' });
    expect(res.status).toBe(404);
    expect(res.body.object).toBe('error');
  });
});

describe('members', () => {
  it('lists and reads members with the public fields', async () => {
    const collection = await seedCollection(server, org);
    const target = await seedTarget(server, org);
    await server.database.db.insertInto('collection_users').values({ collection_id: collection, organization_user_id: target, read_only: true, hide_passwords: false, manage: false }).execute();
    const res = await call('GET', `/members/${target.toUpperCase()}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      object: 'member',
      id: target,
      status: Status.Confirmed,
      type: Role.User,
      twoFactorEnabled: false,
      externalId: null,
      resetPasswordEnrolled: false,
      permissions: null,
      collections: [{ id: collection, readOnly: true, hidePasswords: false, manage: false }],
    });
    expect(res.body.email).toMatch(/@example\.com$/);
    const listed = await call('GET', '/members');
    const data = listed.body.data as { id: string; object: string }[];
    expect(data.map((m) => m.id)).toEqual(expect.arrayContaining([owner.memberId, target]));
    expect(data.every((m) => m.object === 'member')).toBe(true);
  });

  it("answers 404 for another organization's member on every member route", async () => {
    const stranger = await seedTarget(server, otherOrg);
    const cases: [string, string, unknown?][] = [
      ['GET', `/members/${stranger}`],
      ['PUT', `/members/${stranger}`, { type: 2 }],
      ['DELETE', `/members/${stranger}`],
      ['GET', `/members/${stranger}/group-ids`],
      ['PUT', `/members/${stranger}/group-ids`, { groupIds: [] }],
      ['POST', `/members/${stranger}/reinvite`],
      ['POST', `/members/${stranger}/revoke`],
      ['POST', `/members/${stranger}/restore`],
    ];
    for (const [method, path, json] of cases) {
      const res = await call(method, path, json);
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    expect(await memberRow(stranger)).toMatchObject({ status: Status.Confirmed, type: Role.User });
    // The other organization's own token reaches it.
    expect((await call('GET', `/members/${stranger}`, undefined, otherToken)).status).toBe(200);
  });

  it('invites with the web route\'s mail, records the event as PublicApi, and refuses an address already invited', async () => {
    const group = await seedGroup(server, org);
    const collection = await seedCollection(server, org);
    const res = await call('POST', '/members', {
      email: 'New.Person@Example.com',
      type: Role.User,
      externalId: 'dir-123',
      collections: [{ id: collection, readOnly: true }],
      groups: [group],
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      object: 'member',
      email: 'new.person@example.com',
      userId: null,
      name: null,
      status: Status.Invited,
      type: Role.User,
      externalId: 'dir-123',
      collections: [{ id: collection, readOnly: true, hidePasswords: false, manage: false }],
    });
    const invitation = invitationFrom(await sink.waitFor('new.person@example.com'));
    expect(invitation).toMatchObject({ organizationId: org, organizationUserId: res.body.id, email: 'new.person@example.com' });
    expect((await call('GET', `/members/${res.body.id}/group-ids`)).body).toEqual([group]);
    expectPublicApiEvent((await eventsAbout(EventType.OrganizationUser_Invited, 'organization_user_id', res.body.id))[0]);

    const again = await call('POST', '/members', { email: 'new.person@example.com', type: Role.User });
    expect(again.status).toBe(400);
    expect(again.body).toMatchObject({ object: 'error', message: 'This user has already been invited.' });
  });

  it('refuses bad invitations with a 400 naming the field, inviting nobody', async () => {
    const foreignCollection = await seedCollection(server, otherOrg);
    const foreignGroup = await seedGroup(server, otherOrg);
    const cases: [unknown, string][] = [
      [{ type: Role.User }, 'email'],
      [{ email: 'no-at-sign', type: Role.User }, 'email'],
      [{ email: 'a@example.com', type: '2' }, 'type'],
      [{ email: 'a@example.com', type: 9 }, 'type'],
      [{ email: 'a@example.com', type: Role.User, permissions: { manageUsers: true } }, 'permissions'],
      [{ email: 'a@example.com', type: Role.Custom }, 'permissions'],
      [{ email: 'a@example.com', type: Role.User, collections: [{ id: foreignCollection, readOnly: false }] }, 'collections'],
      [{ email: 'a@example.com', type: Role.User, collections: [{ id: randomUUID() }] }, 'collections[0].readOnly'],
      [{ email: 'a@example.com', type: Role.User, groups: [foreignGroup] }, 'groups'],
      [{ email: 'a@example.com', type: Role.User, externalId: 'x'.repeat(301) }, 'externalId'],
    ];
    for (const [json, field] of cases) expectValidation(await call('POST', '/members', json), field);
    const invited = await server.database.db.selectFrom('organization_users').select('id').where('email', '=', 'a@example.com').execute();
    expect(invited).toEqual([]);
  });

  it('replaces a member on PUT: what is left out is reset, groups stay unless given', async () => {
    const group = await seedGroup(server, org);
    const c1 = await seedCollection(server, org);
    const target = await seedTarget(server, org);
    await server.database.db.insertInto('group_users').values({ group_id: group, organization_user_id: target }).execute();
    const first = await call('PUT', `/members/${target}`, { type: Role.Admin, externalId: 'ext-1', collections: [{ id: c1, readOnly: false, manage: true }] });
    expect(first.status, first.text).toBe(200);
    expect(first.body).toMatchObject({ object: 'member', type: Role.Admin, externalId: 'ext-1', collections: [{ id: c1, manage: true }] });

    const second = await call('PUT', `/members/${target}`, { type: Role.User });
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({ type: Role.User, externalId: null, collections: [] });
    expect((await call('GET', `/members/${target}/group-ids`)).body).toEqual([group]);
    const updates = await eventsAbout(EventType.OrganizationUser_Updated, 'organization_user_id', target);
    expect(updates).toHaveLength(2);
    for (const event of updates) expectPublicApiEvent(event);

    const custom = await call('PUT', `/members/${target}`, { type: Role.Custom, permissions: { accessEventLogs: true } });
    expect(custom.status, custom.text).toBe(200);
    expect(custom.body.permissions).toMatchObject({ accessEventLogs: true, manageUsers: false });
    // A Custom member sent without permissions keeps theirs.
    const kept = await call('PUT', `/members/${target}`, { type: Role.Custom });
    expect(kept.body.permissions).toMatchObject({ accessEventLogs: true });

    expectValidation(await call('PUT', `/members/${target}`, { type: Role.User, permissions: { manageUsers: true } }), 'permissions');
    expectValidation(await call('PUT', `/members/${target}`, {}), 'type');
    expectValidation(await call('PUT', `/members/${target}`, { type: true }), 'type');
  });

  it('keeps the last confirmed owner an owner, present and active', async () => {
    const solo = await seedOrganization(server);
    const soloOwner = await seedTarget(server, solo, { type: Role.Owner });
    const soloToken = (await orgApiToken(server, solo)).token;
    const demote = await call('PUT', `/members/${soloOwner}`, { type: Role.Admin }, soloToken);
    expect(demote.status).toBe(400);
    expect(demote.body.message).toBe('Organization must have at least one confirmed owner.');
    const removed = await call('DELETE', `/members/${soloOwner}`, undefined, soloToken);
    expect(removed.status).toBe(400);
    const revoked = await call('POST', `/members/${soloOwner}/revoke`, undefined, soloToken);
    expect(revoked.status).toBe(400);
    expect(await memberRow(soloOwner)).toMatchObject({ type: Role.Owner, status: Status.Confirmed });
  });

  it('sets group ids, removes, revokes, restores and reinvites, each recorded as PublicApi', async () => {
    const g1 = await seedGroup(server, org);
    const g2 = await seedGroup(server, org);
    const target = await seedTarget(server, org);
    const set = await call('PUT', `/members/${target}/group-ids`, { groupIds: [g1, g2.toUpperCase()] });
    expect(set.status).toBe(200);
    expect(set.text).toBe('');
    expect(((await call('GET', `/members/${target}/group-ids`)).body as string[]).sort()).toEqual([g1, g2].sort());
    expectPublicApiEvent((await eventsAbout(EventType.OrganizationUser_UpdatedGroups, 'organization_user_id', target))[0]);
    expectValidation(await call('PUT', `/members/${target}/group-ids`, { groupIds: [await seedGroup(server, otherOrg)] }), 'groupIds');
    expectValidation(await call('PUT', `/members/${target}/group-ids`, { groupIds: 'nope' }), 'groupIds');

    expect((await call('POST', `/members/${target}/revoke`)).status).toBe(200);
    expect(await memberRow(target)).toMatchObject({ status: Status.Revoked });
    const twice = await call('POST', `/members/${target}/revoke`);
    expect(twice.status).toBe(400);
    expect(twice.body).toMatchObject({ object: 'error', message: 'Already revoked.' });
    expect((await call('POST', `/members/${target}/restore`)).status).toBe(200);
    expect(await memberRow(target)).toMatchObject({ status: Status.Confirmed });
    expectPublicApiEvent((await eventsAbout(EventType.OrganizationUser_Revoked, 'organization_user_id', target))[0]);
    expectPublicApiEvent((await eventsAbout(EventType.OrganizationUser_Restored, 'organization_user_id', target))[0]);

    const notInvited = await call('POST', `/members/${target}/reinvite`);
    expect(notInvited.status).toBe(400);
    const invited = await call('POST', '/members', { email: 'reinvite-me@example.com', type: Role.User });
    await sink.waitFor('reinvite-me@example.com');
    expect((await call('POST', `/members/${invited.body.id}/reinvite`)).status).toBe(200);
    await sink.waitFor('reinvite-me@example.com');

    expect((await call('DELETE', `/members/${target}`)).status).toBe(200);
    expect(await memberRow(target)).toBeUndefined();
    expectPublicApiEvent((await eventsAbout(EventType.OrganizationUser_Removed, 'organization_user_id', target))[0]);
    expect((await call('DELETE', `/members/${target}`)).status).toBe(404);
  });
});

describe('groups', () => {
  it('creates, reads, replaces, lists and deletes groups with their collection access', async () => {
    const c1 = await seedCollection(server, org);
    const created = await call('POST', '/groups', { name: 'Engineering', externalId: 'eng', collections: [{ id: c1, readOnly: true, hidePasswords: true }] });
    expect(created.status, created.text).toBe(200);
    expect(created.body).toMatchObject({ object: 'group', name: 'Engineering', externalId: 'eng', collections: [{ id: c1, readOnly: true, hidePasswords: true, manage: false }] });
    const id = created.body.id as string;
    expectPublicApiEvent((await eventsAbout(EventType.Group_Created, 'group_id', id))[0]);

    expect((await call('GET', `/groups/${id}`)).body).toEqual(created.body);
    expect((await call('GET', '/groups')).body.data).toContainEqual(created.body);

    const replaced = await call('PUT', `/groups/${id}`, { name: 'Eng' });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({ name: 'Eng', externalId: null, collections: [] });
    expectPublicApiEvent((await eventsAbout(EventType.Group_Updated, 'group_id', id))[0]);

    expect((await call('DELETE', `/groups/${id}`)).status).toBe(200);
    expect((await call('GET', `/groups/${id}`)).status).toBe(404);
    expectPublicApiEvent((await eventsAbout(EventType.Group_Deleted, 'group_id', id))[0]);
  });

  it('sets and reads member ids, refusing members of another organization', async () => {
    const group = await seedGroup(server, org);
    const a = await seedTarget(server, org);
    const b = await seedTarget(server, org);
    expect((await call('PUT', `/groups/${group}/member-ids`, { memberIds: [a, b] })).status).toBe(200);
    expect(((await call('GET', `/groups/${group}/member-ids`)).body as string[]).sort()).toEqual([a, b].sort());
    expect((await call('PUT', `/groups/${group}/member-ids`, { memberIds: [b] })).status).toBe(200);
    expect((await call('GET', `/groups/${group}/member-ids`)).body).toEqual([b]);
    expectPublicApiEvent((await eventsAbout(EventType.OrganizationUser_UpdatedGroups, 'organization_user_id', a)).at(-1));

    const foreign = await seedTarget(server, otherOrg);
    expectValidation(await call('PUT', `/groups/${group}/member-ids`, { memberIds: [foreign] }), 'memberIds');
    expectValidation(await call('PUT', `/groups/${group}/member-ids`, { memberIds: [a, a] }), 'memberIds');
    expectValidation(await call('PUT', `/groups/${group}/member-ids`, {}), 'memberIds');
    expect((await call('GET', `/groups/${group}/member-ids`)).body).toEqual([b]);
  });

  it('refuses bad groups with a 400 naming the field and answers 404 for strangers', async () => {
    const foreignCollection = await seedCollection(server, otherOrg);
    expectValidation(await call('POST', '/groups', {}), 'name');
    expectValidation(await call('POST', '/groups', { name: 'x'.repeat(101) }), 'name');
    expectValidation(await call('POST', '/groups', { name: 7 }), 'name');
    expectValidation(await call('POST', '/groups', { name: 'G', collections: [{ id: foreignCollection, readOnly: false }] }), 'collections');
    expectValidation(await call('POST', '/groups', { name: 'G', collections: [{ id: 'nope', readOnly: false }] }), 'collections[0].id');

    const foreign = await seedGroup(server, otherOrg);
    for (const [method, path, json] of [
      ['GET', `/groups/${foreign}`],
      ['PUT', `/groups/${foreign}`, { name: 'Mine now' }],
      ['DELETE', `/groups/${foreign}`],
      ['GET', `/groups/${foreign}/member-ids`],
      ['PUT', `/groups/${foreign}/member-ids`, { memberIds: [] }],
    ] as const) {
      expect((await call(method, path, json)).status, `${method} ${path}`).toBe(404);
    }
    const row = await server.database.db.selectFrom('groups').select('name').where('id', '=', foreign).executeTakeFirst();
    expect(row?.name).toBe('Group');
  });

  it('refuses groups on a plan without them', async () => {
    const teamsStarter = await seedOrganization(server, { planType: PlanType.FamiliesAnnually });
    await server.database.db.updateTable('organizations').set({ use_api: true }).where('id', '=', teamsStarter).execute();
    const familiesToken = (await orgApiToken(server, teamsStarter)).token;
    const res = await call('POST', '/groups', { name: 'G' }, familiesToken);
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('This organization cannot use groups.');
  });
});

describe('collections', () => {
  it('lists, reads and updates the external id and group access, with no name', async () => {
    const group = await seedGroup(server, org);
    const collection = await seedCollection(server, org, { groups: [[group, { readOnly: true }]] });
    const res = await call('GET', `/collections/${collection}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ object: 'collection', id: collection, externalId: null, groups: [{ id: group, readOnly: true, hidePasswords: false, manage: false }] });
    expect((await call('GET', '/collections')).body.data).toContainEqual(res.body);

    const updated = await call('PUT', `/collections/${collection}`, { externalId: 'ext-c', groups: [{ id: group, readOnly: false, manage: true }] });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.body).toEqual({ object: 'collection', id: collection, externalId: 'ext-c', groups: [{ id: group, readOnly: false, hidePasswords: false, manage: true }] });
    // Groups left out keep their access; the external id left out is cleared.
    const again = await call('PUT', `/collections/${collection}`, {});
    expect(again.body).toMatchObject({ externalId: null, groups: [{ id: group, manage: true }] });
    const name = await server.database.db.selectFrom('collections').select('name').where('id', '=', collection).executeTakeFirst();
    expect(name?.name).toMatch(/^2\./);
    expectPublicApiEvent((await eventsAbout(EventType.Collection_Updated, 'collection_id', collection))[0]);

    expectValidation(await call('PUT', `/collections/${collection}`, { groups: [{ id: await seedGroup(server, otherOrg), readOnly: false }] }), 'groups');
    expectValidation(await call('PUT', `/collections/${collection}`, { groups: [{ id: group, readOnly: true, manage: true }] }), 'groups');
    expectValidation(await call('PUT', `/collections/${collection}`, { externalId: 12 }), 'externalId');
  });

  it('deletes a collection, refuses a My Items collection, and answers 404 for strangers', async () => {
    const collection = await seedCollection(server, org);
    expect((await call('DELETE', `/collections/${collection}`)).status).toBe(200);
    expect((await call('GET', `/collections/${collection}`)).status).toBe(404);
    expectPublicApiEvent((await eventsAbout(EventType.Collection_Deleted, 'collection_id', collection))[0]);

    const myItems = await seedCollection(server, org);
    await server.database.db.updateTable('collections').set({ type: 1 }).where('id', '=', myItems).execute();
    expect((await call('GET', `/collections/${myItems}`)).status).toBe(404);
    expect(((await call('GET', '/collections')).body.data as { id: string }[]).map((c) => c.id)).not.toContain(myItems);
    const refused = await call('DELETE', `/collections/${myItems}`);
    expect(refused.status).toBe(400);
    expect(refused.body.message).toBe('You cannot delete a collection with the type as DefaultUserCollection.');

    const foreign = await seedCollection(server, otherOrg);
    for (const [method, json] of [['GET'], ['PUT', { externalId: 'x' }], ['DELETE']] as const) {
      expect((await call(method, `/collections/${foreign}`, json)).status, method).toBe(404);
    }
    expect(await server.database.db.selectFrom('collections').select('external_id').where('id', '=', foreign).executeTakeFirst()).toEqual({ external_id: null });
  });
});

describe('policies', () => {
  it('saves, reads and lists policies with per-type validation', async () => {
    const policyOrg = await seedOrganization(server);
    const policyToken = (await orgApiToken(server, policyOrg)).token;
    expect((await call('GET', `/policies/${PolicyType.MasterPassword}`, undefined, policyToken)).status).toBe(404);

    const saved = await call('PUT', `/policies/${PolicyType.MasterPassword}`, { enabled: true, data: { minLength: 16, requireUpper: true, unknownField: 1 } }, policyToken);
    expect(saved.status, saved.text).toBe(200);
    expect(saved.body).toEqual({ object: 'policy', id: expect.any(String), type: PolicyType.MasterPassword, enabled: true, data: { minLength: 16, requireUpper: true } });
    expect((await call('GET', `/policies/${PolicyType.MasterPassword}`, undefined, policyToken)).body).toEqual(saved.body);
    expect((await call('GET', '/policies', undefined, policyToken)).body).toEqual({ object: 'list', data: [saved.body], continuationToken: null });
    const events = await eventsAbout(EventType.Policy_Updated, 'policy_id', saved.body.id);
    expect(events[0]).toMatchObject({ acting_user_id: null, system_user: EventSystemUser.PublicApi, organization_id: policyOrg });

    expectValidation(await call('PUT', `/policies/${PolicyType.MasterPassword}`, { enabled: true, data: { minLength: 4 } }, policyToken), 'data.minLength');
    expectValidation(await call('PUT', `/policies/${PolicyType.MasterPassword}`, { enabled: 'yes' }, policyToken), 'enabled');
    expectValidation(await call('PUT', `/policies/${PolicyType.MasterPassword}`, { enabled: true, data: [1] }, policyToken), 'data');
    expectValidation(await call('PUT', '/policies/99', { enabled: true }, policyToken), 'type');
    expectValidation(await call('GET', '/policies/abc', undefined, policyToken), 'type');
    // Policies that need Single organization are refused without it, as on the web route.
    const needsSingleOrg = await call('PUT', `/policies/${PolicyType.RequireSso}`, { enabled: true }, policyToken);
    expect(needsSingleOrg.status).toBe(400);
    expect(needsSingleOrg.body.message).toContain('Single organization');
    expect((await call('GET', '/policies', undefined, policyToken)).body.data).toHaveLength(1);
  });
});

describe('events', () => {
  it('pages the event log in the public shape, filtered by item and acting user', async () => {
    const eventOrg = await seedOrganization(server);
    const eventToken = (await orgApiToken(server, eventOrg)).token;
    const group = (await call('POST', '/groups', { name: 'Paged' }, eventToken)).body.id as string;
    for (let i = 0; i < 55; i++) await call('PUT', `/groups/${group}`, { name: `Paged ${i}` }, eventToken);

    const first = await call('GET', '/events', undefined, eventToken);
    expect(first.status).toBe(200);
    expect(first.body.object).toBe('list');
    expect(first.body.data).toHaveLength(50);
    expect(first.body.data[0]).toEqual({
      object: 'event',
      type: EventType.Group_Updated,
      itemId: null,
      collectionId: null,
      groupId: group,
      policyId: null,
      memberId: null,
      actingUserId: null,
      installationId: null,
      date: expect.any(String),
      device: null,
      ipAddress: '127.0.0.1',
      secretId: null,
      projectId: null,
      serviceAccountId: null,
    });
    expect(typeof first.body.continuationToken).toBe('string');
    const second = await call('GET', `/events?continuationToken=${encodeURIComponent(first.body.continuationToken)}`, undefined, eventToken);
    expect(second.body.data).toHaveLength(6);
    expect(second.body.continuationToken).toBeNull();
    expect((second.body.data as { type: number }[]).at(-1)?.type).toBe(EventType.Group_Created);

    expect((await call('GET', `/events?itemId=${randomUUID()}`, undefined, eventToken)).body.data).toEqual([]);
    expect((await call('GET', `/events?actingUserId=${owner.userId}`, undefined, eventToken)).body.data).toEqual([]);
    // Another organization's log is not in this one.
    expect((await call('GET', `/events?itemId=${group}`)).body.data).toEqual([]);

    expectValidation(await call('GET', '/events?start=yesterday&end=today', undefined, eventToken), 'start');
    expectValidation(await call('GET', '/events?start=2020-01-01&end=2026-01-01', undefined, eventToken), 'end');
    expectValidation(await call('GET', '/events?continuationToken=bogus', undefined, eventToken), 'continuationToken');
    expectValidation(await call('GET', '/events?itemId=nope', undefined, eventToken), 'itemId');
  });

  it('shows public API changes in the web event log with system user PublicApi', async () => {
    const group = (await call('POST', '/groups', { name: 'Visible' })).body.id as string;
    const res = await server.request('GET', `/api/organizations/${org}/events?itemId=${group}`, { token: owner.token });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([expect.objectContaining({ type: EventType.Group_Created, groupId: group, actingUserId: null, systemUser: EventSystemUser.PublicApi })]);
  });
});

describe('subscription', () => {
  it('answers 400 on a self-hosted server: the license decides', async () => {
    for (const [method, json] of [['GET'], ['PUT', { passwordManager: { seats: 20 } }]] as const) {
      const res = await call(method, '/organization/subscription', json);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ object: 'error', message: 'Seats and storage of a self-hosted organization are set by its license; upload a new license to change them.' });
    }
  });
});
