import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedGroup } from '../../../test/support/admin.js';
import { seedMembership, seedOrganization } from '../../../test/support/orgs.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import type { Principal } from '../../http/access.js';
import { OrganizationUserStatusType as Status, OrganizationUserType as Role } from '../organizations/roles.js';
import { projectRights, secretRights, serviceAccountRights, smAccessOf, smCaller } from './sm-access.js';

let server: TestServer;
let org: string;
const db = () => server.database.db;
const now = new Date().toISOString();

async function user(): Promise<string> {
  const id = randomUUID();
  await db()
    .insertInto('users')
    .values({
      id,
      email: `${id}@example.com`,
      name: null,
      email_verified: true,
      master_password_hash: null,
      master_password_hint: null,
      master_password_salt: null,
      key: null,
      public_key: null,
      private_key: null,
      kdf: 0,
      kdf_iterations: 600_000,
      kdf_memory: null,
      kdf_parallelism: null,
      security_stamp: 'stamp',
      api_key: 'key',
      user_key_id: null,
      premium: true,
      culture: 'en-US',
      avatar_color: null,
      equivalent_domains: null,
      excluded_global_equivalent_domains: null,
      force_password_reset: false,
      verify_devices: false,
      creation_date: now,
      revision_date: now,
      account_revision_date: now,
      last_password_change_date: null,
    })
    .execute();
  return id;
}

const asUser = (userId: string): Principal => ({ kind: 'user', userId, email: '', securityStamp: 'stamp', deviceIdentifier: null, clientId: 'web', scopes: ['api'], amr: ['Application'] });

async function member(type: Role, opts: { sm?: boolean; status?: Status; organizationId?: string } = {}) {
  const userId = await user();
  const memberId = await seedMembership(server, { organizationId: opts.organizationId ?? org, userId, type, ...(opts.status !== undefined ? { status: opts.status } : {}) });
  if (opts.sm ?? true) await db().updateTable('organization_users').set({ access_secrets_manager: true }).where('id', '=', memberId).execute();
  return { userId, memberId, principal: asUser(userId) };
}

function policy(grantee: { organization_user_id?: string; group_id?: string; service_account_id?: string }, granted: { granted_project_id?: string; granted_secret_id?: string; granted_service_account_id?: string }, read: boolean, write: boolean) {
  return {
    id: randomUUID(),
    organization_user_id: grantee.organization_user_id ?? null,
    group_id: grantee.group_id ?? null,
    service_account_id: grantee.service_account_id ?? null,
    granted_project_id: granted.granted_project_id ?? null,
    granted_secret_id: granted.granted_secret_id ?? null,
    granted_service_account_id: granted.granted_service_account_id ?? null,
    read,
    write,
    creation_date: now,
    revision_date: now,
  };
}

beforeAll(async () => {
  server = await startTestServer();
  org = await seedOrganization(server);
});

afterAll(async () => {
  await server?.close();
});

describe('who acts in Secrets Manager', () => {
  it('makes owners and admins with Secrets Manager access administrators, and other members plain members with their groups', async () => {
    const owner = await member(Role.Owner);
    const admin = await member(Role.Admin);
    const custom = await member(Role.Custom);
    const group = await seedGroup(server, org, [custom.memberId]);
    expect(await smCaller(db(), owner.principal, org)).toMatchObject({ kind: 'admin', organizationUserId: owner.memberId });
    expect(await smCaller(db(), admin.principal, org)).toMatchObject({ kind: 'admin' });
    expect(await smCaller(db(), custom.principal, org)).toMatchObject({ kind: 'member', organizationUserId: custom.memberId, groupIds: [group] });
  });

  it('gives no standing without the Secrets Manager flag, without confirmation, or in an organization without Secrets Manager', async () => {
    const flagless = await member(Role.Owner, { sm: false });
    const revoked = await member(Role.Owner, { status: Status.Revoked });
    const noSmOrg = await seedOrganization(server, { overrides: { use_secrets_manager: false } });
    const there = await member(Role.Owner, { organizationId: noSmOrg });
    expect(await smCaller(db(), flagless.principal, org)).toBeNull();
    expect(await smCaller(db(), revoked.principal, org)).toBeNull();
    expect(await smCaller(db(), there.principal, noSmOrg)).toBeNull();
  });

  it("gives a machine account standing in its own organization only", async () => {
    const principal: Principal = { kind: 'serviceAccount', serviceAccountId: randomUUID(), organizationId: org, accessTokenId: randomUUID(), clientId: 'x', scopes: ['api.secrets'] };
    expect(await smCaller(db(), principal, org)).toMatchObject({ kind: 'serviceAccount' });
    expect(await smCaller(db(), principal, randomUUID())).toBeNull();
  });
});

describe('what access policies grant', () => {
  it('adds up grants to the membership and its groups, the highest winning, and reaches a secret through its project or its own policy', async () => {
    const someone = await member(Role.User);
    const group = await seedGroup(server, org, [someone.memberId]);
    const [p1, p2, p3] = [randomUUID(), randomUUID(), randomUUID()];
    for (const id of [p1, p2, p3]) await db().insertInto('projects').values({ id, organization_id: org, name: '2.x', creation_date: now, revision_date: now }).execute();
    const [inP1, direct, loose] = [randomUUID(), randomUUID(), randomUUID()];
    for (const [id, project] of [[inP1, p1], [direct, null], [loose, null]] as const) {
      await db().insertInto('secrets').values({ id, organization_id: org, project_id: project, key: '2.x', value: '2.x', note: '2.x', creation_date: now, revision_date: now, deleted_date: null }).execute();
    }
    const machine = randomUUID();
    await db().insertInto('service_accounts').values({ id: machine, organization_id: org, name: '2.x', creation_date: now, revision_date: now }).execute();
    await db()
      .insertInto('access_policies')
      .values([
        policy({ organization_user_id: someone.memberId }, { granted_project_id: p1 }, true, false),
        policy({ group_id: group }, { granted_project_id: p1 }, true, true),
        policy({ group_id: group }, { granted_project_id: p2 }, true, false),
        policy({ organization_user_id: someone.memberId }, { granted_secret_id: direct }, true, false),
        policy({ group_id: group }, { granted_service_account_id: machine }, true, true),
      ])
      .execute();
    const caller = await smCaller(db(), someone.principal, org);
    const access = await smAccessOf(db(), caller!);
    expect(projectRights(access, p1)).toEqual({ read: true, write: true });
    expect(projectRights(access, p2)).toEqual({ read: true, write: false });
    expect(projectRights(access, p3)).toEqual({ read: false, write: false });
    expect(secretRights(access, { id: inP1, project_id: p1 })).toEqual({ read: true, write: true });
    expect(secretRights(access, { id: direct, project_id: null })).toEqual({ read: true, write: false });
    expect(secretRights(access, { id: loose, project_id: null })).toEqual({ read: false, write: false });
    expect(serviceAccountRights(access, machine)).toEqual({ read: true, write: true });

    const admin = await smAccessOf(db(), (await smCaller(db(), (await member(Role.Admin)).principal, org))!);
    expect(secretRights(admin, { id: loose, project_id: null })).toEqual({ read: true, write: true });
  });

  it('grants a machine account what policies name it for, and never other machine accounts', async () => {
    const machine = randomUUID();
    await db().insertInto('service_accounts').values({ id: machine, organization_id: org, name: '2.x', creation_date: now, revision_date: now }).execute();
    const project = randomUUID();
    await db().insertInto('projects').values({ id: project, organization_id: org, name: '2.x', creation_date: now, revision_date: now }).execute();
    await db().insertInto('access_policies').values(policy({ service_account_id: machine }, { granted_project_id: project }, true, false)).execute();
    const principal: Principal = { kind: 'serviceAccount', serviceAccountId: machine, organizationId: org, accessTokenId: randomUUID(), clientId: 'x', scopes: ['api.secrets'] };
    const access = await smAccessOf(db(), (await smCaller(db(), principal, org))!);
    expect(projectRights(access, project)).toEqual({ read: true, write: false });
    expect(serviceAccountRights(access, machine)).toEqual({ read: false, write: false });
  });
});
