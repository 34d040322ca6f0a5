import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { eventsOf, seedGroup, seedTarget } from '../../../test/support/admin.js';
import { seedMembership, seedOrganization } from '../../../test/support/orgs.js';
import { orgApiToken } from '../../../test/support/public-api.js';
import { startSmtpSink, type SmtpSink } from '../../../test/support/smtp-sink.js';
import { startTestServer, type TestResponse, type TestServer } from '../../../test/support/test-server.js';
import { EventSystemUser, EventType } from '../../platform/audit/event-type.js';
import { PlanType } from '../organizations/plans.js';
import { OrganizationUserStatusType as Status, OrganizationUserType as Role } from '../../platform/access/roles.js';

let server: TestServer;
let sink: SmtpSink;
beforeAll(async () => {
  sink = await startSmtpSink();
  server = await startTestServer({ env: sink.env });
});
afterAll(async () => {
  await server.close();
  await sink.close();
});

async function freshOrg(overrides: Parameters<typeof seedOrganization>[1] = {}) {
  const org = await seedOrganization(server, overrides);
  const { token } = await orgApiToken(server, org);
  const call = (json: unknown, bearer = token): Promise<TestResponse> => server.request('POST', '/api/public/organization/import', { token: bearer, json });
  return { org, token, call };
}

const db = () => server.database.db;
const membersOf = (org: string) => db().selectFrom('organization_users').selectAll().where('organization_id', '=', org).orderBy('email').execute();
const groupsOf = (org: string) => db().selectFrom('groups').selectAll().where('organization_id', '=', org).orderBy('name').execute();
async function groupMembers(groupId: string): Promise<string[]> {
  return (await db().selectFrom('group_users').select('organization_user_id').where('group_id', '=', groupId).execute()).map((r) => r.organization_user_id).sort();
}
const byExternal = (rows: { external_id: string | null; id: string }[], ext: string) => rows.find((r) => r.external_id === ext)?.id;

describe('directory import', () => {
  it('invites new members with the invitation mail, creates groups with their members, all recorded as PublicApi', async () => {
    const { org, call } = await freshOrg();
    const res = await call({
      overwriteExisting: false,
      members: [
        { email: 'Alice@Example.com', externalId: 'u-alice' },
        { email: 'bob@example.com', externalId: 1002 },
      ],
      groups: [{ name: 'Engineering', externalId: 'g-eng', memberExternalIds: ['u-alice', 1002, 'u-unknown'] }],
    });
    expect(res.status, res.text).toBe(200);
    expect(res.text).toBe('');
    const members = await membersOf(org);
    expect(members.map((m) => [m.email, m.external_id, m.status, m.type])).toEqual([
      ['alice@example.com', 'u-alice', Status.Invited, Role.User],
      ['bob@example.com', '1002', Status.Invited, Role.User],
    ]);
    await sink.waitFor('alice@example.com');
    await sink.waitFor('bob@example.com');
    const [group] = await groupsOf(org);
    expect(group).toMatchObject({ name: 'Engineering', external_id: 'g-eng' });
    expect(await groupMembers(group?.id ?? '')).toEqual(members.map((m) => m.id).sort());

    const events = (await db().selectFrom('events').selectAll().where('organization_id', '=', org).execute()).map((e) => [e.type, e.acting_user_id, e.system_user]);
    expect(events).toEqual(
      expect.arrayContaining([
        [EventType.OrganizationUser_Invited, null, EventSystemUser.PublicApi],
        [EventType.Group_Created, null, EventSystemUser.PublicApi],
        [EventType.OrganizationUser_UpdatedGroups, null, EventSystemUser.PublicApi],
      ]),
    );
    expect(events.filter(([type]) => type === EventType.OrganizationUser_Invited)).toHaveLength(2);
  });

  it('links existing members by email, renames groups, moves members and removes deleted ones, never an owner', async () => {
    const { org, call } = await freshOrg();
    const linked = await seedMembership(server, { organizationId: org, email: 'carol@example.com', status: Status.Invited });
    const owner = await seedTarget(server, org, { type: Role.Owner });
    await db().updateTable('organization_users').set({ external_id: 'u-owner' }).where('id', '=', owner).execute();
    const leaving = await seedTarget(server, org);
    await db().updateTable('organization_users').set({ external_id: 'u-leaving' }).where('id', '=', leaving).execute();
    expect((await call({ overwriteExisting: false, groups: [{ name: 'Old name', externalId: 'g1', memberExternalIds: [] }] })).status).toBe(200);

    const res = await call({
      overwriteExisting: false,
      members: [
        { email: 'carol@example.com', externalId: 'u-carol' },
        { externalId: 'u-leaving', deleted: true },
        { externalId: 'u-owner', deleted: true },
      ],
      groups: [{ name: 'New name', externalId: 'g1', memberExternalIds: ['u-carol', 'u-owner'] }],
    });
    expect(res.status, res.text).toBe(200);
    const members = await membersOf(org);
    expect(members.find((m) => m.id === linked)).toMatchObject({ external_id: 'u-carol', status: Status.Invited });
    expect(members.map((m) => m.id)).not.toContain(leaving);
    expect(members.find((m) => m.id === owner)).toMatchObject({ type: Role.Owner, status: Status.Confirmed });
    const [group] = await groupsOf(org);
    expect(group?.name).toBe('New name');
    expect(await groupMembers(group?.id ?? '')).toEqual([linked, owner].sort());
    expect((await eventsOf(server, EventType.OrganizationUser_Removed)).filter((e) => e.organization_user_id === leaving)).toHaveLength(1);
    expect((await eventsOf(server, EventType.Group_Updated)).filter((e) => e.group_id === group?.id)[0]).toMatchObject({ system_user: EventSystemUser.PublicApi, acting_user_id: null });
  });

  it('with overwriteExisting removes members and groups the directory no longer lists, but not owners nor what has no external id', async () => {
    const { org, call } = await freshOrg();
    const owner = await seedTarget(server, org, { type: Role.Owner });
    await db().updateTable('organization_users').set({ external_id: 'u-owner' }).where('id', '=', owner).execute();
    const manual = await seedTarget(server, org);
    const manualGroup = await seedGroup(server, org);
    expect(
      (
        await call({
          overwriteExisting: false,
          members: [
            { email: 'keep@example.com', externalId: 'u-keep' },
            { email: 'gone@example.com', externalId: 'u-gone' },
          ],
          groups: [
            { name: 'Keep', externalId: 'g-keep', memberExternalIds: ['u-keep', 'u-gone'] },
            { name: 'Gone', externalId: 'g-gone', memberExternalIds: [] },
          ],
        })
      ).status,
    ).toBe(200);
    const res = await call({ overwriteExisting: true, members: [{ email: 'keep@example.com', externalId: 'u-keep' }], groups: [{ name: 'Keep', externalId: 'g-keep', memberExternalIds: ['u-keep'] }] });
    expect(res.status, res.text).toBe(200);
    const members = await membersOf(org);
    expect(members.map((m) => m.external_id ?? m.id).sort()).toEqual([manual, 'u-keep', 'u-owner'].sort());
    const groups = await groupsOf(org);
    expect(groups.map((g) => g.external_id ?? g.id).sort()).toEqual(['g-keep', manualGroup].sort());
    expect(await groupMembers(byExternal(groups, 'g-keep') ?? '')).toEqual([byExternal(members, 'u-keep')]);
    expect((await eventsOf(server, EventType.Group_Deleted)).filter((e) => e.organization_id === org)).toHaveLength(1);
  });

  it('refuses bad input with a 400 naming the field, writing nothing', async () => {
    const { org, call } = await freshOrg();
    const cases: [unknown, string][] = [
      [{ members: [] }, 'overwriteExisting'],
      [{ overwriteExisting: 'yes' }, 'overwriteExisting'],
      [{ overwriteExisting: false, members: [{ externalId: 'u1' }] }, 'members[0].email'],
      [{ overwriteExisting: false, members: [{ email: 'nope', externalId: 'u1' }] }, 'members[0].email'],
      [{ overwriteExisting: false, members: [{ email: 'a@example.com' }] }, 'members[0].externalId'],
      [{ overwriteExisting: false, members: [{ email: 'a@example.com', externalId: 'u1' }, { email: 'b@example.com', externalId: 'u1' }] }, 'members[1].externalId'],
      [{ overwriteExisting: false, groups: [{ name: 'x'.repeat(101), externalId: 'g' }] }, 'groups[0].name'],
      [{ overwriteExisting: false, groups: [{ name: 'G', externalId: 'x'.repeat(301) }] }, 'groups[0].externalId'],
      [{ overwriteExisting: false, groups: [{ name: 'G' }] }, 'groups[0].externalId'],
    ];
    for (const [json, field] of cases) {
      const res = await call(json);
      expect(res.status, JSON.stringify(json)).toBe(400);
      expect(res.body.object).toBe('error');
      expect(Object.keys(res.body.validationErrors ?? {}), res.text).toContain(field);
    }
    const missingEmail = await call({ overwriteExisting: false, members: [{ externalId: 'u1', deleted: false }] });
    expect(missingEmail.body.validationErrors).toEqual({ 'members[0].email': ['Email is required for enabled members.'] });
    expect(await membersOf(org)).toEqual([]);
    expect(await groupsOf(org)).toEqual([]);
  });

  it('runs in one transaction: past the seat limit nothing is written', async () => {
    const { org, call } = await freshOrg({ overrides: { seats: 3 } });
    await seedTarget(server, org, { type: Role.Owner });
    const linkMe = await seedMembership(server, { organizationId: org, email: 'link-me@example.com', status: Status.Invited });
    const leaving = await seedTarget(server, org);
    await db().updateTable('organization_users').set({ external_id: 'u-leaving' }).where('id', '=', leaving).execute();
    const before = await membersOf(org);
    // The link and the removal are written before the seat check refuses the new members.
    const res = await call({
      overwriteExisting: false,
      members: [
        { email: 'link-me@example.com', externalId: 'u-link' },
        { externalId: 'u-leaving', deleted: true },
        { email: 'one@example.com', externalId: 'u1' },
        { email: 'two@example.com', externalId: 'u2' },
      ],
      groups: [{ name: 'G', externalId: 'g', memberExternalIds: ['u1'] }],
    });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('You have reached the maximum number of users (3) for this organization.');
    expect(await membersOf(org)).toEqual(before);
    expect(before.find((m) => m.id === linkMe)?.external_id).toBeNull();
    expect(await groupsOf(org)).toEqual([]);
    expect((await db().selectFrom('events').select('id').where('organization_id', '=', org).execute())).toEqual([]);
  });

  it('refuses groups on a plan without them', async () => {
    const { call } = await freshOrg({ planType: PlanType.FamiliesAnnually, overrides: { use_api: true } });
    const res = await call({ overwriteExisting: false, groups: [{ name: 'G', externalId: 'g' }] });
    expect(res.status).toBe(400);
    expect(res.body.validationErrors).toEqual({ groups: ['This organization cannot use groups.'] });
  });

  it('has no size limit on a self-hosted server', async () => {
    const { org, call } = await freshOrg();
    const groups = Array.from({ length: 2001 }, (_, i) => ({ name: `G${i}`, externalId: `g${i}` }));
    const res = await call({ overwriteExisting: false, groups });
    expect(res.status, res.text).toBe(200);
    expect(await groupsOf(org)).toHaveLength(2001);
  });
});

describe('directory import on the cloud variant', () => {
  let cloud: TestServer | undefined;
  afterEach(async () => {
    await cloud?.close();
    cloud = undefined;
  });

  it('refuses more than 2000 groups or enabled members without largeImport, with the official message', async () => {
    cloud = await startTestServer({ env: { DEPLOYMENT: 'cloud' } });
    const org = await seedOrganization(cloud);
    const { token } = await orgApiToken(cloud, org);
    const post = (json: unknown) => (cloud as TestServer).request('POST', '/api/public/organization/import', { token, json });
    const groups = Array.from({ length: 2001 }, (_, i) => ({ name: `G${i}`, externalId: `g${i}` }));
    const members = Array.from({ length: 2001 }, (_, i) => ({ email: `m${i}@example.com`, externalId: `m${i}` }));
    for (const json of [
      { overwriteExisting: false, groups },
      { overwriteExisting: false, members },
    ]) {
      const res = await post(json);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ object: 'error', message: 'You cannot import this much data at once.' });
    }
    // Deleted members do not count.
    const deleted = members.map((m) => ({ externalId: m.externalId, deleted: true }));
    expect((await post({ overwriteExisting: false, members: deleted })).status).toBe(200);
    expect((await post({ overwriteExisting: false, groups, largeImport: true })).status).toBe(200);
    expect(await cloud.database.db.selectFrom('groups').select('id').where('organization_id', '=', org).execute()).toHaveLength(2001);
  });

  it('reads and sets seats and storage, with the plan rules, recorded as PublicApi', async () => {
    cloud = await startTestServer({ env: { DEPLOYMENT: 'cloud' } });
    const s = cloud;
    const org = await seedOrganization(s, { overrides: { seats: 10 } });
    const { token } = await orgApiToken(s, org);
    const sub = (method: string, json?: unknown) => s.request(method, '/api/public/organization/subscription', { token, ...(json !== undefined ? { json } : {}) });
    const read = await sub('GET');
    expect(read.status).toBe(200);
    expect(read.body).toEqual({
      object: 'organizationSubscription',
      passwordManager: { seats: 10, maxAutoScaleSeats: null, storage: 1 },
      secretsManager: { seats: null, maxAutoScaleSeats: null, serviceAccounts: null, maxAutoScaleServiceAccounts: null },
    });
    const updated = await sub('PUT', { passwordManager: { seats: 25, storage: 5 } });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.body).toMatchObject({ message: 'Subscription updated successfully.', passwordManager: { seats: 25, storage: 5 } });
    const events = (await eventsOf(s, EventType.Organization_Updated)).filter((e) => e.organization_id === org);
    expect(events.length).toBeGreaterThanOrEqual(2);
    for (const e of events) expect(e).toMatchObject({ acting_user_id: null, system_user: EventSystemUser.PublicApi });

    for (let i = 0; i < 3; i++) await seedTarget(s, org);
    const below = await sub('PUT', { passwordManager: { seats: 2 } });
    expect(below.status).toBe(400);
    expect(Object.keys(below.body.validationErrors)).toEqual(['passwordManager.seats']);
    const tooMuchStorage = await sub('PUT', { passwordManager: { storage: 500 } });
    expect(tooMuchStorage.status).toBe(400);
    expect(Object.keys(tooMuchStorage.body.validationErrors)).toEqual(['passwordManager.storage']);
    expect((await sub('PUT', {})).status).toBe(400);
    const wrongType = await sub('PUT', { passwordManager: { seats: 'many' } });
    expect(Object.keys(wrongType.body.validationErrors)).toContain('passwordManager.seats');
    const sm = await sub('PUT', { secretsManager: { seats: 3, serviceAccounts: 7 } });
    expect(sm.body).toMatchObject({ message: 'Subscription updated successfully.', secretsManager: { seats: 3, serviceAccounts: 7 } });
    await s.database.db.updateTable('organizations').set({ use_secrets_manager: false }).where('id', '=', org).execute();
    const noSm = await sub('PUT', { secretsManager: { seats: 4 } });
    expect(noSm.body).toMatchObject({ message: 'Organization has no access to Secrets Manager.', secretsManager: { seats: 3 } });
    expect((await sub('GET')).body.passwordManager).toEqual({ seats: 25, maxAutoScaleSeats: null, storage: 5 });

    const families = await seedOrganization(s, { planType: PlanType.FamiliesAnnually, overrides: { use_api: true } });
    const familiesToken = (await orgApiToken(s, families)).token;
    const fixed = await s.request('PUT', '/api/public/organization/subscription', { token: familiesToken, json: { passwordManager: { seats: 12 } } });
    expect(fixed.status).toBe(400);
    expect(fixed.body.validationErrors).toEqual({ 'passwordManager.seats': ['Plan does not allow additional users.'] });
  });
});
