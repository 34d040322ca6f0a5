/**
 * The Secrets Manager permission matrix: every kind of caller against every secret, project,
 * version, access-policy and machine-account operation. Expected outcomes are written out by
 * hand below as allow-lists, from the official server's authorization handlers; nothing here
 * asks Strongroom's own access module, so a change in it shows up as a row naming the operation
 * and the callers whose outcome moved.
 *
 * Grants, all on the project `P`, the secret in it and the machine account `T`:
 * - reader: a read-only user policy on P;
 * - writer: a read+write user policy on P, and a people policy on T;
 * - groupWriter: a member of a group holding read+write on P and a people policy on T;
 * - smWriter: a machine account of the organization with read+write on P;
 * - plain, smNone: a member with Secrets Manager access and a machine account, neither granted anything;
 * - noSm: a member without Secrets Manager access; smOther, stranger: a machine account and an owner of another organization.
 * Each mutation gets a fresh target with the same grants, so no outcome depends on row order.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actor, ENC, seedGroup, type Actor } from './support/admin.js';
import { seedOrganization } from './support/orgs.js';
import { allowSecretsManager, createAccessToken, machineLogin, policyRow, READ, READ_WRITE, seedMachineAccount, seedPolicy, seedProject, seedSecret, seedSecretVersion } from './support/sm.js';
import { generateSymmetricKey } from './support/bw-crypto.js';
import { startTestServer, type TestResponse, type TestServer } from './support/test-server.js';
import { OrganizationUserType as Role } from '../src/platform/access/roles.js';

const SETUP_TIMEOUT = 240_000;
const OTHER = ENC.replace('2.A', '2.B');

const USERS = ['owner', 'admin', 'plain', 'reader', 'writer', 'groupWriter', 'noSm', 'stranger'] as const;
const MACHINES = ['smWriter', 'smNone', 'smOther'] as const;
const CALLERS = [...USERS, ...MACHINES] as const;
type Caller = (typeof CALLERS)[number];

const ADMINS: Caller[] = ['owner', 'admin'];
const IN_ORG: Caller[] = ['owner', 'admin', 'plain', 'reader', 'writer', 'groupWriter', 'smWriter', 'smNone'];
const USERS_WITH_SM: Caller[] = ['owner', 'admin', 'plain', 'reader', 'writer', 'groupWriter'];
const PROJECT_READERS: Caller[] = ['owner', 'admin', 'reader', 'writer', 'groupWriter', 'smWriter'];
/** Users who read P; machine accounts are refused what only people use (counts). */
const USER_READERS: Caller[] = ['owner', 'admin', 'reader', 'writer', 'groupWriter'];
const PROJECT_WRITERS: Caller[] = ['owner', 'admin', 'writer', 'groupWriter', 'smWriter'];
const USER_WRITERS: Caller[] = ['owner', 'admin', 'writer', 'groupWriter'];
const MACHINE_MANAGERS: Caller[] = ['owner', 'admin', 'writer', 'groupWriter'];

type Outcome = number | string;

let server: TestServer;
let org: string;
let otherOrg: string;
let group: string;
const tokens = {} as Record<Caller, string>;
const members = {} as Partial<Record<Caller, Actor>>;
const machines = {} as Record<'smWriter' | 'smNone' | 'smOther', string>;
/** The shared targets of the reads. */
let P: string;
let S: string;
let T: string;
let V: string;

const db = () => server.database.db;

/** A project of `org` with the grants the header lists (reader, writer, the group, smWriter). */
async function grantedProject(): Promise<string> {
  const id = await seedProject(server, org);
  const project = { project: id };
  await db()
    .insertInto('access_policies')
    .values([
      policyRow({ member: members.reader!.memberId }, project, READ),
      policyRow({ member: members.writer!.memberId }, project, READ_WRITE),
      policyRow({ group }, project, READ_WRITE),
      policyRow({ machineAccount: machines.smWriter }, project, READ_WRITE),
    ])
    .execute();
  return id;
}

const secretIn = (projectId: string, opts: { trashed?: boolean } = {}) => seedSecret(server, org, projectId, opts);
const versionOf = (secretId: string) => seedSecretVersion(server, secretId, { value: OTHER });

/** A machine account of `org` the writer and the group manage (read+write people policies). */
async function managedMachineAccount(): Promise<string> {
  const id = await seedMachineAccount(server, org);
  const account = { machineAccount: id };
  await db()
    .insertInto('access_policies')
    .values([policyRow({ member: members.writer!.memberId }, account, READ_WRITE), policyRow({ group }, account, READ_WRITE)])
    .execute();
  return id;
}

beforeAll(async () => {
  server = await startTestServer();
  org = await seedOrganization(server, { name: 'SM matrix' });
  otherOrg = await seedOrganization(server, { name: 'Elsewhere' });
  const roles: Record<Exclude<(typeof USERS)[number], 'stranger'>, Role> = {
    owner: Role.Owner,
    admin: Role.Admin,
    plain: Role.User,
    reader: Role.User,
    writer: Role.User,
    groupWriter: Role.User,
    noSm: Role.User,
  };
  for (const [name, type] of Object.entries(roles)) members[name as Caller] = await actor(server, org, `sm-${name}@example.com`, { type });
  members.stranger = await actor(server, otherOrg, 'sm-stranger@example.com', { type: Role.Owner });
  await allowSecretsManager(
    server,
    USERS.filter((u) => u !== 'noSm').map((u) => members[u]!.memberId),
  );
  for (const user of USERS) tokens[user] = members[user]!.token;
  group = await seedGroup(server, org, [members.groupWriter!.memberId]);

  const orgKey = generateSymmetricKey();
  machines.smWriter = await seedMachineAccount(server, org);
  machines.smNone = await seedMachineAccount(server, org);
  machines.smOther = await seedMachineAccount(server, otherOrg);
  for (const name of MACHINES) {
    const owner = name === 'smOther' ? members.stranger : members.owner!;
    const made = await createAccessToken(server, owner.token, machines[name], orgKey);
    tokens[name] = await machineLogin(server, made.accessToken);
  }
  const foreignProject = await seedProject(server, otherOrg);
  await seedPolicy(server, { machineAccount: machines.smOther }, { project: foreignProject });

  P = await grantedProject();
  S = await secretIn(P);
  V = await versionOf(S);
  T = await managedMachineAccount();
}, SETUP_TIMEOUT);

afterAll(async () => {
  await server?.close();
});

const call = (caller: Caller, method: string, path: string, json?: unknown) =>
  server.request(method, `/api${path}`, { token: tokens[caller], ...(json !== undefined ? { json } : {}) });

/**
 * The expected outcome of every caller: `allowed` get `yes`, the others of the organization `no`,
 * the rest 404. Bulk deletes pass every caller as `inOrg`: they answer id by id, and an outsider's
 * ids are denied like any other (see sm-access.ts `bulkAccess`).
 */
function expected(allowed: readonly Caller[], yes: Outcome, no: Outcome, inOrg: readonly Caller[] = IN_ORG): Record<Caller, Outcome> {
  return Object.fromEntries(CALLERS.map((c) => [c, allowed.includes(c) ? yes : inOrg.includes(c) ? no : 404])) as Record<Caller, Outcome>;
}

interface Row {
  name: string;
  expect: Record<Caller, Outcome>;
  run: (caller: Caller) => Promise<Outcome>;
}

const status = (r: TestResponse) => r.status;
const listed = (ids: string[], id: string) => (ids.includes(id) ? 'seen' : 'hidden');
function bulkOutcome(response: TestResponse, id: string): Outcome {
  if (response.status !== 200) return response.status;
  const item = (response.body as { data: { id: string; error: string | null }[] }).data.find((r) => r.id === id);
  return item && !item.error ? 'deleted' : 'denied';
}
/** Whether a policy grants `grantedId` to `granteeId`. */
async function hasPolicy(
  grantee: 'organization_user_id' | 'group_id' | 'service_account_id',
  granteeId: string,
  granted: 'granted_project_id' | 'granted_service_account_id',
  grantedId: string,
): Promise<boolean> {
  return (await db().selectFrom('access_policies').select('id').where(grantee, '=', granteeId).where(granted, '=', grantedId).executeTakeFirst()) !== undefined;
}
/** The status, unless a refusal wrote the change anyway or an allowed call did not write it. */
const wrote = (r: TestResponse, written: boolean): Outcome => ((r.status === 200) !== written ? `${r.status}, ${written ? 'written' : 'not written'}` : r.status);
const secretBody = (projectId: string) => ({ key: ENC, value: OTHER, note: ENC, projectIds: [projectId] });

const ROWS: Row[] = [
  // Secrets
  {
    name: 'list the organization secrets',
    expect: expected(PROJECT_READERS, 'seen', 'hidden'),
    run: async (c) => {
      const r = await call(c, 'GET', `/organizations/${org}/secrets`);
      return r.status === 200 ? listed((r.body as { secrets: { id: string }[] }).secrets.map((s) => s.id), S) : r.status;
    },
  },
  { name: 'read a secret', expect: expected(PROJECT_READERS, 200, 404), run: async (c) => status(await call(c, 'GET', `/secrets/${S}`)) },
  { name: 'read secrets by ids', expect: expected(PROJECT_READERS, 200, 404), run: async (c) => status(await call(c, 'POST', '/secrets/get-by-ids', { ids: [S] })) },
  { name: "list a project's secrets", expect: expected(PROJECT_READERS, 200, 404), run: async (c) => status(await call(c, 'GET', `/projects/${P}/secrets`)) },
  { name: 'create a secret in the project', expect: expected(PROJECT_WRITERS, 200, 404), run: async (c) => status(await call(c, 'POST', `/organizations/${org}/secrets`, secretBody(P))) },
  {
    name: 'update a secret',
    expect: expected(PROJECT_WRITERS, 200, 404),
    run: async (c) => {
      const id = await secretIn(P);
      const r = await call(c, 'PUT', `/secrets/${id}`, secretBody(P));
      const row = await db().selectFrom('secrets').select('value').where('id', '=', id).executeTakeFirstOrThrow();
      // A refusal must leave the value as it was, and an allowed update must have written it.
      if ((r.status === 200) !== (row.value === OTHER)) return `${r.status}, value ${row.value === OTHER ? 'changed' : 'unchanged'}`;
      return r.status;
    },
  },
  {
    name: 'delete secrets',
    expect: expected(PROJECT_WRITERS, 'deleted', 'denied', CALLERS),
    run: async (c) => {
      const id = await secretIn(P);
      return bulkOutcome(await call(c, 'POST', '/secrets/delete', [id]), id);
    },
  },
  {
    name: 'sync secrets as a machine account',
    expect: { ...expected([], 0, 400), smWriter: 'seen', smNone: 'hidden' },
    run: async (c) => {
      const r = await call(c, 'GET', `/organizations/${org}/secrets/sync`);
      if (r.status !== 200) return r.status;
      const data = (r.body as { secrets: { data: { id: string }[] } | null }).secrets?.data ?? [];
      return listed(data.map((s) => s.id), S);
    },
  },
  { name: "list a secret's versions", expect: expected(PROJECT_READERS, 200, 404), run: async (c) => status(await call(c, 'GET', `/secrets/${S}/versions`)) },
  { name: 'read a version', expect: expected(PROJECT_READERS, 200, 404), run: async (c) => status(await call(c, 'GET', `/secret-versions/${V}`)) },
  { name: 'read versions by ids', expect: expected(PROJECT_READERS, 200, 404), run: async (c) => status(await call(c, 'POST', '/secret-versions/get-by-ids', [V])) },
  {
    name: 'restore a version',
    expect: expected(PROJECT_WRITERS, 200, 404),
    run: async (c) => {
      const id = await secretIn(P);
      return status(await call(c, 'PUT', `/secrets/${id}/versions/restore`, { versionId: await versionOf(id) }));
    },
  },
  {
    name: 'delete versions',
    expect: expected(PROJECT_WRITERS, 200, 404),
    run: async (c) => status(await call(c, 'POST', '/secret-versions/delete', [await versionOf(await secretIn(P))])),
  },
  { name: 'list the trash', expect: expected(ADMINS, 200, 401), run: async (c) => status(await call(c, 'GET', `/secrets/${org}/trash`)) },
  { name: 'restore from the trash', expect: expected(ADMINS, 200, 401), run: async (c) => status(await call(c, 'POST', `/secrets/${org}/trash/restore`, [await secretIn(P, { trashed: true })])) },
  { name: 'empty the trash', expect: expected(ADMINS, 200, 401), run: async (c) => status(await call(c, 'POST', `/secrets/${org}/trash/empty`, [await secretIn(P, { trashed: true })])) },
  // Projects
  {
    name: 'list projects',
    expect: expected(PROJECT_READERS, 'seen', 'hidden'),
    run: async (c) => {
      const r = await call(c, 'GET', `/organizations/${org}/projects`);
      return r.status === 200 ? listed((r.body as { data: { id: string }[] }).data.map((p) => p.id), P) : r.status;
    },
  },
  { name: 'read a project', expect: expected(PROJECT_READERS, 200, 404), run: async (c) => status(await call(c, 'GET', `/projects/${P}`)) },
  { name: 'create a project', expect: expected(IN_ORG, 200, 404), run: async (c) => status(await call(c, 'POST', `/organizations/${org}/projects`, { name: ENC })) },
  { name: 'rename a project', expect: expected(PROJECT_WRITERS, 200, 404), run: async (c) => status(await call(c, 'PUT', `/projects/${await grantedProject()}`, { name: OTHER })) },
  {
    name: 'delete projects',
    expect: expected(PROJECT_WRITERS, 'deleted', 'denied', CALLERS),
    run: async (c) => {
      const id = await grantedProject();
      return bulkOutcome(await call(c, 'POST', '/projects/delete', [id]), id);
    },
  },
  // Access policies
  { name: "read a project's people", expect: expected(USER_WRITERS, 200, 404), run: async (c) => status(await call(c, 'GET', `/projects/${P}/access-policies/people`)) },
  {
    name: "replace a project's people",
    expect: expected(USER_WRITERS, 200, 404),
    run: async (c) => {
      const id = await grantedProject();
      const r = await call(c, 'PUT', `/projects/${id}/access-policies/people`, {
        userAccessPolicyRequests: [
          { granteeId: members.writer!.memberId, read: true, write: true },
          { granteeId: members.plain!.memberId, read: true, write: false },
        ],
        groupAccessPolicyRequests: [],
      });
      return wrote(r, await hasPolicy('organization_user_id', members.plain!.memberId, 'granted_project_id', id));
    },
  },
  { name: "read a project's machine accounts", expect: expected(USER_WRITERS, 200, 404), run: async (c) => status(await call(c, 'GET', `/projects/${P}/access-policies/service-accounts`)) },
  { name: "read a secret's access policies", expect: expected(USER_WRITERS, 200, 404), run: async (c) => status(await call(c, 'GET', `/secrets/${S}/access-policies`)) },
  { name: "read a machine account's people", expect: expected(MACHINE_MANAGERS, 200, 404), run: async (c) => status(await call(c, 'GET', `/service-accounts/${T}/access-policies/people`)) },
  {
    name: "replace a machine account's people",
    expect: expected(MACHINE_MANAGERS, 200, 404),
    run: async (c) => {
      const id = await managedMachineAccount();
      // Leaves the group out: an allowed call removes its policy.
      const r = await call(c, 'PUT', `/service-accounts/${id}/access-policies/people`, { userAccessPolicyRequests: [{ granteeId: members.writer!.memberId, read: true, write: true }], groupAccessPolicyRequests: [] });
      return wrote(r, !(await hasPolicy('group_id', group, 'granted_service_account_id', id)));
    },
  },
  { name: "read a machine account's projects", expect: expected(MACHINE_MANAGERS, 200, 404), run: async (c) => status(await call(c, 'GET', `/service-accounts/${T}/granted-policies`)) },
  {
    name: 'grant a machine account a project',
    expect: expected(MACHINE_MANAGERS, 200, 404),
    run: async (c) => {
      const id = await managedMachineAccount();
      const r = await call(c, 'PUT', `/service-accounts/${id}/granted-policies`, { projectGrantedPolicyRequests: [{ grantedId: P, read: true, write: false }] });
      return wrote(r, await hasPolicy('service_account_id', id, 'granted_project_id', P));
    },
  },
  {
    name: "replace a project's machine accounts",
    // Granting needs write on the project and on the machine account granted, and only people manage policies.
    expect: expected(
      USER_WRITERS.filter((c) => MACHINE_MANAGERS.includes(c)),
      200,
      404,
    ),
    run: async (c) => {
      const project = await grantedProject();
      const account = await managedMachineAccount();
      const r = await call(c, 'PUT', `/projects/${project}/access-policies/service-accounts`, { serviceAccountAccessPolicyRequests: [{ granteeId: account, read: true, write: false }] });
      return wrote(r, await hasPolicy('service_account_id', account, 'granted_project_id', project));
    },
  },
  ...(['people', 'service-accounts', 'projects'] as const).map(
    (kind): Row => ({
      name: `list the potential grantees (${kind})`,
      // Machine accounts may list what they could grant (none, or the projects they write), never the members.
      expect: expected(kind === 'people' ? USERS_WITH_SM : IN_ORG, 200, 404),
      run: async (c) => status(await call(c, 'GET', `/organizations/${org}/access-policies/${kind}/potential-grantees`)),
    }),
  ),
  // Import, export and events
  { name: 'export the organization', expect: expected(ADMINS, 200, 404), run: async (c) => status(await call(c, 'GET', `/sm/${org}/export`)) },
  {
    name: 'import into the organization',
    expect: expected(ADMINS, 200, 404),
    run: async (c) => {
      const project = randomUUID();
      const body = { projects: [{ id: project, name: ENC }], secrets: [{ id: randomUUID(), key: ENC, value: ENC, note: ENC, projectIds: [project] }] };
      return status(await call(c, 'POST', `/sm/${org}/import`, body));
    },
  },
  { name: "read a secret's events", expect: expected(ADMINS, 200, 404), run: async (c) => status(await call(c, 'GET', `/organization/${org}/secrets/${S}/events`)) },
  { name: "read a project's events", expect: expected(ADMINS, 200, 404), run: async (c) => status(await call(c, 'GET', `/organization/${org}/projects/${P}/events`)) },
  { name: "read a machine account's events (event log)", expect: expected(ADMINS, 200, 404), run: async (c) => status(await call(c, 'GET', `/organization/${org}/service-account/${T}/events`)) },
  { name: "read a machine account's events (Secrets Manager)", expect: expected(MACHINE_MANAGERS, 200, 404), run: async (c) => status(await call(c, 'GET', `/sm/events/service-accounts/${T}`)) },
  // Machine accounts
  {
    name: 'list machine accounts',
    expect: expected(MACHINE_MANAGERS, 'seen', 'hidden'),
    run: async (c) => {
      const r = await call(c, 'GET', `/organizations/${org}/service-accounts`);
      return r.status === 200 ? listed((r.body as { data: { id: string }[] }).data.map((p) => p.id), T) : r.status;
    },
  },
  { name: 'read a machine account', expect: expected(MACHINE_MANAGERS, 200, 404), run: async (c) => status(await call(c, 'GET', `/service-accounts/${T}`)) },
  { name: 'create a machine account', expect: expected(USERS_WITH_SM, 200, 404), run: async (c) => status(await call(c, 'POST', `/organizations/${org}/service-accounts`, { name: ENC })) },
  { name: 'rename a machine account', expect: expected(MACHINE_MANAGERS, 200, 404), run: async (c) => status(await call(c, 'PUT', `/service-accounts/${await managedMachineAccount()}`, { name: OTHER })) },
  {
    name: 'delete machine accounts',
    expect: expected(MACHINE_MANAGERS, 'deleted', 'denied', CALLERS),
    run: async (c) => {
      const id = await managedMachineAccount();
      return bulkOutcome(await call(c, 'POST', '/service-accounts/delete', [id]), id);
    },
  },
  { name: "list a machine account's access tokens", expect: expected(MACHINE_MANAGERS, 200, 404), run: async (c) => status(await call(c, 'GET', `/service-accounts/${T}/access-tokens`)) },
  {
    name: 'create an access token',
    expect: expected(MACHINE_MANAGERS, 200, 404),
    run: async (c) => status(await call(c, 'POST', `/service-accounts/${await managedMachineAccount()}/access-tokens`, { name: ENC, encryptedPayload: ENC, key: ENC })),
  },
  {
    name: 'revoke access tokens',
    expect: expected(MACHINE_MANAGERS, 200, 404),
    run: async (c) => status(await call(c, 'POST', `/service-accounts/${await managedMachineAccount()}/access-tokens/revoke`, { ids: [randomUUID()] })),
  },
  // Counts
  { name: 'count the organization', expect: expected(USERS_WITH_SM, 200, 404), run: async (c) => status(await call(c, 'GET', `/organizations/${org}/sm-counts`)) },
  { name: 'count a project', expect: expected(USER_READERS, 200, 404), run: async (c) => status(await call(c, 'GET', `/projects/${P}/sm-counts`)) },
  { name: 'count a machine account', expect: expected(MACHINE_MANAGERS, 200, 404), run: async (c) => status(await call(c, 'GET', `/service-accounts/${T}/sm-counts`)) },
];

describe('the Secrets Manager permission matrix', () => {
  for (const row of ROWS) {
    it(`${row.name}: only the allowed callers`, async () => {
      const outcomes = {} as Record<Caller, Outcome>;
      for (const caller of CALLERS) outcomes[caller] = await row.run(caller);
      expect(outcomes).toEqual(row.expect);
    });
  }
});
