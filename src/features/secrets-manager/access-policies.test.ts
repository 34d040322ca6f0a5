import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENC, seedGroup, type Actor } from '../../../test/support/admin.js';
import { counting } from '../../../test/support/query-count.js';
import { seedOrganization } from '../../../test/support/orgs.js';
import { READ, READ_WRITE, seedMachineAccount, seedPolicy, seedProject, seedSecret, smActor, smCallerOf } from '../../../test/support/sm.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { EventType } from '../../platform/audit/event-type.js';
import { OrganizationUserType } from '../../platform/access/roles.js';
import { saveSecretAccessPolicies } from './access-policies.service.js';
import { requireSmStanding, smAccessOf } from './sm-access.js';

let server: TestServer;
let org: string;
let otherOrg: string;
let owner: Actor;
/** A plain member granted write on `project`, and on `account` by a people policy. */
let writer: Actor;
/** A plain member granted read only on `project`. */
let reader: Actor;
/** A member without Secrets Manager access. */
let noSm: Actor;
/** An owner of another organization only. */
let stranger: Actor;
let group: string;
let project: string;
let account: string;
let otherAccount: string;
let otherOrgProject: string;
let otherOrgAccount: string;

const T0 = '2026-01-01T00:00:00.000Z';

/** Seeded rows are dated T0, so a test sees a revision date move. */
const at = { date: T0 };

type Granted = { granted_project_id: string } | { granted_service_account_id: string } | { granted_secret_id: string };

const smMember = (organizationId: string, email: string, type = OrganizationUserType.User, accessSecretsManager = true) => smActor(server, organizationId, { email, type, accessSecretsManager });

async function policyRows(granted: Granted) {
  const [column, id] = Object.entries(granted)[0] as ['granted_project_id', string];
  return server.database.db.selectFrom('access_policies').selectAll().where(column, '=', id).execute();
}

const put = (path: string, token: string, json: unknown) => server.request('PUT', `/api${path}`, { token, json });
const get = (path: string, token: string) => server.request('GET', `/api${path}`, { token });

beforeAll(async () => {
  server = await startTestServer();
  org = await seedOrganization(server);
  otherOrg = await seedOrganization(server);
  owner = await smMember(org, 'ap-owner@example.com', OrganizationUserType.Owner);
  writer = await smMember(org, 'ap-writer@example.com');
  reader = await smMember(org, 'ap-reader@example.com');
  noSm = await smMember(org, 'ap-nosm@example.com', OrganizationUserType.Admin, false);
  stranger = await smMember(otherOrg, 'ap-stranger@example.com', OrganizationUserType.Owner);
  await server.database.db.updateTable('users').set({ name: 'Wanda Writer' }).where('id', '=', writer.userId).execute();
  // Without a name, a member is shown by email.
  await server.database.db.updateTable('users').set({ name: null }).where('id', '=', reader.userId).execute();
  group = await seedGroup(server, org, [reader.memberId]);
  project = await seedProject(server, org, at);
  account = await seedMachineAccount(server, org, at);
  otherAccount = await seedMachineAccount(server, org, at);
  otherOrgProject = await seedProject(server, otherOrg, at);
  otherOrgAccount = await seedMachineAccount(server, otherOrg, at);
  await seedPolicy(server, { member: writer.memberId }, { project }, READ_WRITE, at);
  await seedPolicy(server, { member: reader.memberId }, { project }, READ, at);
  await seedPolicy(server, { member: writer.memberId }, { machineAccount: account }, READ_WRITE, at);
}, 120_000);

afterAll(async () => {
  await server?.close();
});

describe('project people policies', () => {
  it('lists the members and groups granted a project, with names and who the caller is', async () => {
    const res = await get(`/projects/${project}/access-policies/people`, writer.token);
    expect(res.status, res.text).toBe(200);
    expect(res.body.object).toBe('projectPeopleAccessPolicies');
    expect(res.body.groupAccessPolicies).toEqual([]);
    expect(res.body.userAccessPolicies).toHaveLength(2);
    expect(res.body.userAccessPolicies).toEqual(
      expect.arrayContaining([
        { object: 'userAccessPolicy', read: true, write: true, organizationUserId: writer.memberId, organizationUserName: 'Wanda Writer', currentUser: true },
        { object: 'userAccessPolicy', read: true, write: false, organizationUserId: reader.memberId, organizationUserName: 'ap-reader@example.com', currentUser: false },
      ]),
    );
  });

  it('replaces them with the lists given, keeping rights per grantee', async () => {
    const p = await seedProject(server, org, at);
    await seedPolicy(server, { member: reader.memberId }, { project: p }, READ_WRITE, at);
    const res = await put(`/projects/${p}/access-policies/people`, owner.token, {
      userAccessPolicyRequests: [{ granteeId: writer.memberId.toUpperCase(), read: true, write: false }],
      groupAccessPolicyRequests: [{ granteeId: group, read: true, write: true }],
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.userAccessPolicies).toEqual([expect.objectContaining({ organizationUserId: writer.memberId, read: true, write: false, currentUser: false })]);
    expect(res.body.groupAccessPolicies).toEqual([{ object: 'groupAccessPolicy', read: true, write: true, groupId: group, groupName: 'Group', currentUserInGroup: false }]);
    const asReader = await put(`/projects/${p}/access-policies/people`, owner.token, { groupAccessPolicyRequests: [{ granteeId: group, read: true, write: false }] });
    expect(asReader.status, asReader.text).toBe(200);
    expect(asReader.body.userAccessPolicies).toEqual([]);
    expect((await policyRows({ granted_project_id: p })).map((r) => [r.group_id, Boolean(r.write)])).toEqual([[group, false]]);
  });

  it('answers 404 to members who can only read the project, members without Secrets Manager, other organizations and unknown ids', async () => {
    for (const token of [reader.token, noSm.token, stranger.token]) {
      expect((await get(`/projects/${project}/access-policies/people`, token)).status).toBe(404);
      expect((await put(`/projects/${project}/access-policies/people`, token, {})).status).toBe(404);
    }
    expect((await get(`/projects/${randomUUID()}/access-policies/people`, owner.token)).status).toBe(404);
  });

  it('refuses duplicate grantees, entries without read and non-guid ids with a 400 naming the field, writing nothing', async () => {
    const before = await policyRows({ granted_project_id: project });
    const dup = await put(`/projects/${project}/access-policies/people`, owner.token, {
      userAccessPolicyRequests: [
        { granteeId: reader.memberId, read: true, write: false },
        { granteeId: reader.memberId.toUpperCase(), read: true, write: true },
      ],
    });
    expect(dup.status).toBe(400);
    expect(dup.body.validationErrors).toEqual({ userAccessPolicyRequests: ['Resources must be unique'] });
    const noRead = await put(`/projects/${project}/access-policies/people`, owner.token, { groupAccessPolicyRequests: [{ granteeId: group, read: false, write: true }] });
    expect(noRead.status).toBe(400);
    expect(noRead.body.validationErrors).toEqual({ groupAccessPolicyRequests: ['Resources must be Read = true'] });
    const notGuid = await put(`/projects/${project}/access-policies/people`, owner.token, { userAccessPolicyRequests: [{ granteeId: 'nope', read: true, write: true }] });
    expect(notGuid.status).toBe(400);
    expect(JSON.stringify(notGuid.body.validationErrors)).toContain('granteeId');
    const missing = await put(`/projects/${project}/access-policies/people`, owner.token, { userAccessPolicyRequests: [{ granteeId: group }] });
    expect(missing.status).toBe(400);
    expect((await put(`/projects/not-a-guid/access-policies/people`, owner.token, {})).status).toBe(400);
    expect(await policyRows({ granted_project_id: project })).toEqual(before);
  });

  it('answers 404, not 400, to a bad body from a caller who may not write the project or machine account', async () => {
    const dupUsers = {
      userAccessPolicyRequests: [
        { granteeId: reader.memberId, read: true, write: true },
        { granteeId: reader.memberId, read: true, write: true },
      ],
    };
    const dupAccounts = {
      serviceAccountAccessPolicyRequests: [
        { granteeId: account, read: true, write: true },
        { granteeId: account, read: true, write: true },
      ],
    };
    const dupProjects = {
      projectGrantedPolicyRequests: [
        { grantedId: project, read: true, write: true },
        { grantedId: project, read: true, write: true },
      ],
    };
    for (const token of [reader.token, noSm.token, stranger.token]) {
      expect((await put(`/projects/${project}/access-policies/people`, token, dupUsers)).status).toBe(404);
      expect((await put(`/projects/${project}/access-policies/service-accounts`, token, dupAccounts)).status).toBe(404);
      expect((await put(`/service-accounts/${account}/access-policies/people`, token, dupUsers)).status).toBe(404);
      expect((await put(`/service-accounts/${account}/granted-policies`, token, dupProjects)).status).toBe(404);
    }
  });

  it('answers 404 for a grantee of another organization or none, writing nothing', async () => {
    const before = await policyRows({ granted_project_id: project });
    const otherGroup = await seedGroup(server, otherOrg);
    for (const body of [
      { userAccessPolicyRequests: [{ granteeId: stranger.memberId, read: true, write: true }] },
      { groupAccessPolicyRequests: [{ granteeId: otherGroup, read: true, write: true }] },
      { userAccessPolicyRequests: [{ granteeId: randomUUID(), read: true, write: true }] },
    ]) {
      expect((await put(`/projects/${project}/access-policies/people`, owner.token, body)).status).toBe(404);
    }
    expect(await policyRows({ granted_project_id: project })).toEqual(before);
  });
});

describe('project machine-account policies', () => {
  it('grants machine accounts the caller can write, moves their revision date, and lists them', async () => {
    const p = await seedProject(server, org, at);
    await seedPolicy(server, { member: writer.memberId }, { project: p }, READ_WRITE, at);
    const res = await put(`/projects/${p}/access-policies/service-accounts`, writer.token, { serviceAccountAccessPolicyRequests: [{ granteeId: account, read: true, write: false }] });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      object: 'ProjectServiceAccountsAccessPolicies',
      serviceAccountAccessPolicies: [{ object: 'serviceAccountProjectAccessPolicy', read: true, write: false, serviceAccountId: account, serviceAccountName: ENC }],
    });
    const sa = await server.database.db.selectFrom('service_accounts').select('revision_date').where('id', '=', account).executeTakeFirstOrThrow();
    expect(sa.revision_date > T0).toBe(true);
    const listed = await get(`/projects/${p}/access-policies/service-accounts`, owner.token);
    expect(listed.body.serviceAccountAccessPolicies).toEqual(res.body.serviceAccountAccessPolicies);
  });

  it('refuses to grant a machine account the caller cannot write, and one of another organization', async () => {
    const p = await seedProject(server, org, at);
    await seedPolicy(server, { member: writer.memberId }, { project: p }, READ_WRITE, at);
    expect((await put(`/projects/${p}/access-policies/service-accounts`, writer.token, { serviceAccountAccessPolicyRequests: [{ granteeId: otherAccount, read: true, write: true }] })).status).toBe(404);
    expect((await put(`/projects/${p}/access-policies/service-accounts`, owner.token, { serviceAccountAccessPolicyRequests: [{ granteeId: otherOrgAccount, read: true, write: true }] })).status).toBe(404);
    expect(await policyRows({ granted_project_id: p })).toHaveLength(1);
  });

  it('lets a project writer remove a grant of a machine account they cannot write', async () => {
    const p = await seedProject(server, org, at);
    await seedPolicy(server, { member: writer.memberId }, { project: p }, READ_WRITE, at);
    await seedPolicy(server, { machineAccount: otherAccount }, { project: p }, READ_WRITE, at);
    const res = await put(`/projects/${p}/access-policies/service-accounts`, writer.token, { serviceAccountAccessPolicyRequests: [] });
    expect(res.status, res.text).toBe(200);
    expect(res.body.serviceAccountAccessPolicies).toEqual([]);
  });

  it('answers 404 to readers and 400 to duplicates', async () => {
    expect((await get(`/projects/${project}/access-policies/service-accounts`, reader.token)).status).toBe(404);
    const dup = await put(`/projects/${project}/access-policies/service-accounts`, owner.token, {
      serviceAccountAccessPolicyRequests: [
        { granteeId: account, read: true, write: true },
        { granteeId: account, read: true, write: false },
      ],
    });
    expect(dup.status).toBe(400);
    expect((await put(`/projects/${project}/access-policies/service-accounts`, owner.token, {})).status).toBe(400);
  });
});

describe('machine-account people policies', () => {
  it('replaces who manages a machine account and records who was added and removed', async () => {
    const sa = await seedMachineAccount(server, org, at);
    const first = await put(`/service-accounts/${sa}/access-policies/people`, owner.token, {
      userAccessPolicyRequests: [{ granteeId: writer.memberId, read: true, write: true }],
      groupAccessPolicyRequests: [{ granteeId: group, read: true, write: true }],
    });
    expect(first.status, first.text).toBe(200);
    expect(first.body.object).toBe('serviceAccountAccessPolicies');
    expect(first.body.userAccessPolicies).toEqual([expect.objectContaining({ organizationUserId: writer.memberId, read: true, write: true })]);
    const second = await put(`/service-accounts/${sa}/access-policies/people`, owner.token, { userAccessPolicyRequests: [{ granteeId: writer.memberId, read: true, write: true }] });
    expect(second.status, second.text).toBe(200);
    expect(second.body.groupAccessPolicies).toEqual([]);
    const events = await server.database.db.selectFrom('events').selectAll().where('granted_service_account_id', '=', sa).orderBy('seq').execute();
    expect(events.map((e) => [e.type, e.organization_user_id ?? e.group_id, e.acting_user_id, e.organization_id])).toEqual([
      [EventType.ServiceAccount_UserAdded, writer.memberId, owner.userId, org],
      [EventType.ServiceAccount_GroupAdded, group, owner.userId, org],
      [EventType.ServiceAccount_GroupRemoved, group, owner.userId, org],
    ]);
    // The writer now manages it and can read its people.
    expect((await get(`/service-accounts/${sa}/access-policies/people`, writer.token)).status).toBe(200);
  });

  it('requires read and write on every entry', async () => {
    const res = await put(`/service-accounts/${account}/access-policies/people`, owner.token, { userAccessPolicyRequests: [{ granteeId: reader.memberId, read: true, write: false }] });
    expect(res.status).toBe(400);
    expect(res.body.validationErrors).toEqual({ userAccessPolicyRequests: ['Machine account access must be Can read, write'] });
  });

  it('answers 404 to members who do not manage it and to other organizations', async () => {
    for (const token of [reader.token, noSm.token, stranger.token]) {
      expect((await get(`/service-accounts/${account}/access-policies/people`, token)).status).toBe(404);
      expect((await put(`/service-accounts/${account}/access-policies/people`, token, {})).status).toBe(404);
    }
  });
});

describe('machine-account granted projects', () => {
  it('grants projects, moves the revision date, and tells per project whether the caller could change it', async () => {
    const sa = await seedMachineAccount(server, org, at);
    await seedPolicy(server, { member: writer.memberId }, { machineAccount: sa }, READ_WRITE, at);
    const readOnly = await seedProject(server, org, at);
    await seedPolicy(server, { member: writer.memberId }, { project: readOnly }, READ, at);
    await seedPolicy(server, { machineAccount: sa }, { project: readOnly }, READ_WRITE, at);
    const res = await put(`/service-accounts/${sa}/granted-policies`, writer.token, {
      projectGrantedPolicyRequests: [
        { grantedId: project, read: true, write: false },
        { grantedId: readOnly, read: true, write: true },
      ],
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.object).toBe('ServiceAccountGrantedPoliciesPermissionDetails');
    const byProject = Object.fromEntries((res.body.grantedProjectPolicies as { accessPolicy: { grantedProjectId: string } }[]).map((p) => [p.accessPolicy.grantedProjectId, p]));
    expect(byProject[project]).toEqual({
      object: 'grantedProjectAccessPolicyPermissionDetails',
      accessPolicy: { object: 'grantedProjectAccessPolicy', read: true, write: false, grantedProjectId: project, grantedProjectName: ENC },
      hasPermission: true,
    });
    expect(byProject[readOnly]).toMatchObject({ hasPermission: false });
    const row = await server.database.db.selectFrom('service_accounts').select('revision_date').where('id', '=', sa).executeTakeFirstOrThrow();
    expect(row.revision_date > T0).toBe(true);
    const asOwner = await get(`/service-accounts/${sa}/granted-policies`, owner.token);
    expect((asOwner.body.grantedProjectPolicies as { hasPermission: boolean }[]).every((p) => p.hasPermission)).toBe(true);
  });

  it('moves the machine account’s revision date only when its grants change', async () => {
    const sa = await seedMachineAccount(server, org, at);
    await seedPolicy(server, { machineAccount: sa }, { project }, READ, at);
    const revision = async () => (await server.database.db.selectFrom('service_accounts').select('revision_date').where('id', '=', sa).executeTakeFirstOrThrow()).revision_date;
    const same = await put(`/service-accounts/${sa}/granted-policies`, owner.token, { projectGrantedPolicyRequests: [{ grantedId: project, read: true, write: false }] });
    expect(same.status, same.text).toBe(200);
    expect(await revision()).toBe(T0);
    const more = await put(`/service-accounts/${sa}/granted-policies`, owner.token, { projectGrantedPolicyRequests: [{ grantedId: project, read: true, write: true }] });
    expect(more.status, more.text).toBe(200);
    expect((await revision()) > T0).toBe(true);
  });

  it('refuses to change or remove the grant of a project the caller cannot write', async () => {
    const sa = await seedMachineAccount(server, org, at);
    await seedPolicy(server, { member: writer.memberId }, { machineAccount: sa }, READ_WRITE, at);
    const readOnly = await seedProject(server, org, at);
    await seedPolicy(server, { member: writer.memberId }, { project: readOnly }, READ, at);
    await seedPolicy(server, { machineAccount: sa }, { project: readOnly }, READ, at);
    expect((await put(`/service-accounts/${sa}/granted-policies`, writer.token, { projectGrantedPolicyRequests: [] })).status).toBe(404);
    expect((await put(`/service-accounts/${sa}/granted-policies`, writer.token, { projectGrantedPolicyRequests: [{ grantedId: readOnly, read: true, write: true }] })).status).toBe(404);
    expect((await put(`/service-accounts/${sa}/granted-policies`, owner.token, { projectGrantedPolicyRequests: [{ grantedId: otherOrgProject, read: true, write: true }] })).status).toBe(404);
    expect(await policyRows({ granted_project_id: readOnly })).toEqual(expect.arrayContaining([expect.objectContaining({ service_account_id: sa })]));
  });

  it('answers 404 to members who do not manage the machine account, and 400 to read=false', async () => {
    expect((await get(`/service-accounts/${account}/granted-policies`, reader.token)).status).toBe(404);
    const res = await put(`/service-accounts/${account}/granted-policies`, owner.token, { projectGrantedPolicyRequests: [{ grantedId: project, read: false, write: false }] });
    expect(res.status).toBe(400);
    expect(res.body.validationErrors).toEqual({ projectGrantedPolicyRequests: ['Resources must be Read = true'] });
  });
});

describe('secret access policies', () => {
  it('lists the secret’s own policies to writers only', async () => {
    const secret = await seedSecret(server, org, project, at);
    await seedPolicy(server, { group }, { secret }, READ, at);
    await seedPolicy(server, { machineAccount: account }, { secret }, READ_WRITE, at);
    const res = await get(`/secrets/${secret}/access-policies`, writer.token);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      object: 'secretAccessPolicies',
      userAccessPolicies: [],
      groupAccessPolicies: [{ object: 'groupAccessPolicy', read: true, write: false, groupId: group, groupName: 'Group', currentUserInGroup: false }],
      serviceAccountAccessPolicies: [{ object: 'serviceAccountProjectAccessPolicy', read: true, write: true, serviceAccountId: account, serviceAccountName: ENC }],
    });
    for (const token of [reader.token, noSm.token, stranger.token]) expect((await get(`/secrets/${secret}/access-policies`, token)).status).toBe(404);
  });

  it('saves the policies of a secret being written, in the caller’s transaction', async () => {
    const secret = await seedSecret(server, org, null, at);
    await seedPolicy(server, { member: reader.memberId }, { secret }, READ_WRITE, at);
    const access = await smAccessOf(server.database.db, await requireSmStanding(server.database.db, { kind: 'user', userId: writer.userId, scopes: ['api'] } as never, org));
    const now = '2026-06-01T00:00:00.000Z';
    await server.database.db.transaction().execute(async (tx) =>
      saveSecretAccessPolicies(
        tx,
        access,
        { id: secret, organizationId: org },
        {
          userAccessPolicyRequests: [{ granteeId: writer.memberId, read: true, write: true }],
          groupAccessPolicyRequests: [{ granteeId: group, read: true, write: false }],
          serviceAccountAccessPolicyRequests: [{ granteeId: account, read: true, write: false }],
        },
        now,
      ),
    );
    const rows = await policyRows({ granted_secret_id: secret });
    expect(rows.map((r) => [r.organization_user_id ?? r.group_id ?? r.service_account_id, Boolean(r.read), Boolean(r.write)]).sort()).toEqual(
      [
        [writer.memberId, true, true],
        [group, true, false],
        [account, true, false],
      ].sort(),
    );
    const sa = await server.database.db.selectFrom('service_accounts').select('revision_date').where('id', '=', account).executeTakeFirstOrThrow();
    expect(sa.revision_date).toBe(now);

    // Whatever it wrote goes when the caller's transaction fails after it.
    const other = await seedSecret(server, org, null, at);
    const failing = server.database.db.transaction().execute(async (tx) => {
      await saveSecretAccessPolicies(tx, access, { id: other, organizationId: org }, { userAccessPolicyRequests: [{ granteeId: writer.memberId, read: true, write: true }], groupAccessPolicyRequests: [], serviceAccountAccessPolicyRequests: [{ granteeId: account, read: true, write: true }] }, '2026-07-01T00:00:00.000Z');
      expect(await tx.selectFrom('access_policies').select('id').where('granted_secret_id', '=', other).execute()).toHaveLength(2);
      throw new Error('the secret write failed');
    });
    await expect(failing).rejects.toThrow('the secret write failed');
    expect(await policyRows({ granted_secret_id: other })).toEqual([]);
    expect((await server.database.db.selectFrom('service_accounts').select('revision_date').where('id', '=', account).executeTakeFirstOrThrow()).revision_date).toBe(now);
  });

  it('refuses bad secret policies without writing: duplicates, no read, other organizations, accounts the caller cannot write', async () => {
    const secret = await seedSecret(server, org, null, at);
    const access = await smAccessOf(server.database.db, await requireSmStanding(server.database.db, { kind: 'user', userId: writer.userId, scopes: ['api'] } as never, org));
    const none = { userAccessPolicyRequests: [], groupAccessPolicyRequests: [], serviceAccountAccessPolicyRequests: [] };
    const attempts: [object, number][] = [
      [{ ...none, userAccessPolicyRequests: [{ granteeId: writer.memberId, read: true, write: true }, { granteeId: writer.memberId, read: true, write: true }] }, 400],
      [{ ...none, groupAccessPolicyRequests: [{ granteeId: group, read: false, write: true }] }, 400],
      [{ ...none, userAccessPolicyRequests: [{ granteeId: stranger.memberId, read: true, write: true }] }, 404],
      [{ ...none, serviceAccountAccessPolicyRequests: [{ granteeId: otherOrgAccount, read: true, write: true }] }, 404],
      [{ ...none, serviceAccountAccessPolicyRequests: [{ granteeId: otherAccount, read: true, write: true }] }, 404],
    ];
    for (const [requests, status] of attempts) {
      const attempt = server.database.db.transaction().execute(async (tx) => saveSecretAccessPolicies(tx, access, { id: secret, organizationId: org }, requests as never, T0));
      await expect(attempt).rejects.toMatchObject({ statusCode: status });
    }
    expect(await policyRows({ granted_secret_id: secret })).toEqual([]);
  });
});

describe('potential grantees', () => {
  it('lists members with Secrets Manager access and the groups, marking the caller', async () => {
    const res = await get(`/organizations/${org}/access-policies/people/potential-grantees`, reader.token);
    expect(res.status, res.text).toBe(200);
    const data = res.body.data as { id: string; type: string; name: string | null; email: string | null; currentUser: boolean; currentUserInGroup: boolean }[];
    expect(data.filter((g) => g.type === 'user').map((g) => g.id)).toEqual([owner.memberId, writer.memberId, reader.memberId]);
    expect(data.find((g) => g.id === writer.memberId)).toEqual({
      object: 'potentialGrantee',
      id: writer.memberId,
      name: 'Wanda Writer',
      type: 'user',
      email: 'ap-writer@example.com',
      currentUserInGroup: false,
      currentUser: false,
    });
    expect(data.find((g) => g.id === reader.memberId)).toMatchObject({ currentUser: true, name: null, email: 'ap-reader@example.com' });
    expect(data.find((g) => g.id === group)).toMatchObject({ type: 'group', name: 'Group', currentUserInGroup: true, email: null });
  });

  it('lists the machine accounts and projects the caller can write', async () => {
    const accounts = await get(`/organizations/${org}/access-policies/service-accounts/potential-grantees`, writer.token);
    expect(accounts.status).toBe(200);
    expect((accounts.body.data as { id: string; type: string }[]).filter((g) => g.id === account || g.id === otherAccount)).toEqual([
      expect.objectContaining({ id: account, type: 'serviceAccount', name: ENC }),
    ]);
    const projects = await get(`/organizations/${org}/access-policies/projects/potential-grantees`, reader.token);
    const ids = (res: { body: { data: { id: string }[] } }) => res.body.data.map((g) => g.id);
    expect(ids(projects)).not.toContain(project);
    const asOwner = await get(`/organizations/${org}/access-policies/projects/potential-grantees`, owner.token);
    expect(ids(asOwner)).toContain(project);
    expect(ids(asOwner)).not.toContain(otherOrgProject);
  });

  it('answers 404 to a machine account asking for the members, and lists it no machine accounts', async () => {
    const machine = { kind: 'serviceAccount', serviceAccountId: account, organizationId: org, scopes: ['api.secrets'] } as never;
    const service = (await import('./access-policies.service.js')).createAccessPolicyService({ db: server.database.db, clock: { now: () => new Date() }, audit: { record: async () => undefined, recordReads: async () => undefined } });
    await expect(service.peoplePotentialGrantees(smCallerOf(machine), org)).rejects.toMatchObject({ statusCode: 404 });
    expect(await service.serviceAccountPotentialGrantees(smCallerOf(machine), org)).toEqual([]);
  });

  it('answers 404 to members without Secrets Manager and to other organizations', async () => {
    for (const kind of ['people', 'service-accounts', 'projects']) {
      expect((await get(`/organizations/${org}/access-policies/${kind}/potential-grantees`, noSm.token)).status).toBe(404);
      expect((await get(`/organizations/${org}/access-policies/${kind}/potential-grantees`, stranger.token)).status).toBe(404);
    }
  });
});

describe('who reaches the policy routes', () => {
  it('lets a member granted write through a group manage the project, and not a group granted read', async () => {
    const member = await smMember(org, 'ap-grouped@example.com');
    const writers = await seedGroup(server, org, [member.memberId]);
    const p = await seedProject(server, org, at);
    await seedPolicy(server, { group: writers }, { project: p }, READ, at);
    expect((await get(`/projects/${p}/access-policies/people`, member.token)).status).toBe(404);
    await server.database.db.updateTable('access_policies').set({ write: true }).where('group_id', '=', writers).where('granted_project_id', '=', p).execute();
    const res = await get(`/projects/${p}/access-policies/people`, member.token);
    expect(res.status, res.text).toBe(200);
    expect(res.body.groupAccessPolicies).toEqual([expect.objectContaining({ groupId: writers, currentUserInGroup: true, write: true })]);
  });

  it('refuses machine accounts on every policy operation', async () => {
    const { createAccessPolicyService } = await import('./access-policies.service.js');
    const service = createAccessPolicyService({ db: server.database.db, clock: { now: () => new Date() }, audit: { record: async () => undefined, recordReads: async () => undefined } });
    const principal = { kind: 'serviceAccount', serviceAccountId: account, organizationId: org, scopes: ['api.secrets'] } as never;
    await seedPolicy(server, { machineAccount: account }, { project }, READ_WRITE, at);
    await expect(service.projectPeople(smCallerOf(principal), project)).rejects.toMatchObject({ statusCode: 404 });
    await expect(service.projectServiceAccounts(smCallerOf(principal), project)).rejects.toMatchObject({ statusCode: 404 });
    await expect(service.serviceAccountGrantedPolicies(smCallerOf(principal), account)).rejects.toMatchObject({ statusCode: 404 });
    await expect(service.replaceProjectPeople(smCallerOf(principal), project, {})).rejects.toMatchObject({ statusCode: 404 });
    const access = await smAccessOf(server.database.db, await requireSmStanding(server.database.db, principal, org));
    const secret = await seedSecret(server, org, project, at);
    const none = { userAccessPolicyRequests: [], groupAccessPolicyRequests: [], serviceAccountAccessPolicyRequests: [] };
    await expect(server.database.db.transaction().execute(async (tx) => saveSecretAccessPolicies(tx, access, { id: secret, organizationId: org }, none, T0))).rejects.toMatchObject({
      statusCode: 404,
    });
    await expect(service.secretAccessPolicies(smCallerOf(principal), secret)).rejects.toMatchObject({ statusCode: 404 });
    // Not even its own policies, nor those of the project it writes: a machine account manages no policies.
    const client = { ipAddress: null, deviceType: null, deviceIdentifier: null, clientVersion: null };
    const before = await server.database.db.selectFrom('access_policies').selectAll().orderBy('id').execute();
    await expect(service.replaceProjectServiceAccounts(smCallerOf(principal), project, { serviceAccountAccessPolicyRequests: [] })).rejects.toMatchObject({ statusCode: 404 });
    await expect(service.serviceAccountPeople(smCallerOf(principal), account)).rejects.toMatchObject({ statusCode: 404 });
    await expect(service.replaceServiceAccountPeople(smCallerOf(principal, client), account, {})).rejects.toMatchObject({ statusCode: 404 });
    await expect(service.replaceServiceAccountGrantedPolicies(smCallerOf(principal), account, { projectGrantedPolicyRequests: [] })).rejects.toMatchObject({ statusCode: 404 });
    await expect(service.peoplePotentialGrantees(smCallerOf(principal), org)).rejects.toMatchObject({ statusCode: 404 });
    expect(await server.database.db.selectFrom('access_policies').selectAll().orderBy('id').execute()).toEqual(before);
    expect(await service.serviceAccountPotentialGrantees(smCallerOf(principal), org)).toEqual([]);
  });

  it('answers 404 for the policies of a secret in the trash', async () => {
    const secret = await seedSecret(server, org, null, at);
    await server.database.db.updateTable('secrets').set({ deleted_date: T0 }).where('id', '=', secret).execute();
    expect((await get(`/secrets/${secret}/access-policies`, owner.token)).status).toBe(404);
  });
});

describe('query counts', () => {
  it('reads a project’s people in a constant number of queries whatever their count', async () => {
    const p = await seedProject(server, org, at);
    const { db, count } = counting(server.database.db);
    const service = (await import('./access-policies.service.js')).createAccessPolicyService({ db, clock: { now: () => new Date() }, audit: { record: async () => undefined, recordReads: async () => undefined } });
    const principal = { kind: 'user', userId: owner.userId, scopes: ['api'] } as never;
    await service.projectPeople(smCallerOf(principal), p);
    const few = count();
    for (let i = 0; i < 20; i++) await seedPolicy(server, { group: await seedGroup(server, org) }, { project: p }, READ_WRITE, at);
    await service.projectPeople(smCallerOf(principal), p);
    expect(count() - few).toBe(few);
  });
  it('replaces policies in the same number of queries for 2 grantees as for 30', async () => {
    const groups = [];
    for (let i = 0; i < 30; i++) groups.push(await seedGroup(server, org));
    const { createAccessPolicyService } = await import('./access-policies.service.js');
    const principal = { kind: 'user', userId: owner.userId, scopes: ['api'] } as never;
    const counts = [];
    for (const n of [2, 30]) {
      const p = await seedProject(server, org, at);
      // Something to remove and something to change, besides the additions.
      await seedPolicy(server, { member: reader.memberId }, { project: p }, READ_WRITE, at);
      await seedPolicy(server, { group: groups[0] as string }, { project: p }, READ_WRITE, at);
      const { db, count } = counting(server.database.db);
      const service = createAccessPolicyService({ db, clock: { now: () => new Date() }, audit: { record: async () => undefined, recordReads: async () => undefined } });
      await service.replaceProjectPeople(smCallerOf(principal), p, { groupAccessPolicyRequests: groups.slice(0, n).map((id) => ({ granteeId: id, read: true, write: false })) });
      counts.push(count());
    }
    expect(counts[1]).toBe(counts[0]);
  });
});
