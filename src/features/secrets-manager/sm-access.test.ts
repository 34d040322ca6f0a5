import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedGroup, seedUser } from '../../../test/support/admin.js';
import { seedMembership, seedOrganization } from '../../../test/support/orgs.js';
import { counting } from '../../../test/support/query-count.js';
import { allowSecretsManager, policyRow, READ, READ_WRITE, seedMachineAccount, seedPolicy, seedProject, seedSecret } from '../../../test/support/sm.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import type { Principal } from '../../http/access.js';
import { OrganizationUserStatusType as Status, OrganizationUserType as Role } from '../../platform/access/roles.js';
import { projectRights, secretRights, serviceAccountRights, smAccessOf, smStandingOf } from './sm-access.js';

let server: TestServer;
let org: string;
const db = () => server.database.db;
const asUser = (userId: string): Principal => ({ kind: 'user', userId, email: '', securityStamp: 'stamp', deviceIdentifier: null, clientId: 'web', scopes: ['api'], amr: ['Application'] });

async function member(type: Role, opts: { sm?: boolean; status?: Status; organizationId?: string } = {}) {
  const userId = await seedUser(server);
  const memberId = await seedMembership(server, { organizationId: opts.organizationId ?? org, userId, type, ...(opts.status !== undefined ? { status: opts.status } : {}) });
  if (opts.sm ?? true) await allowSecretsManager(server, [memberId]);
  return { userId, memberId, principal: asUser(userId) };
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
    expect(await smStandingOf(db(), owner.principal, org)).toMatchObject({ kind: 'admin', organizationUserId: owner.memberId });
    expect(await smStandingOf(db(), admin.principal, org)).toMatchObject({ kind: 'admin' });
    expect(await smStandingOf(db(), custom.principal, org)).toMatchObject({ kind: 'member', organizationUserId: custom.memberId, groupIds: [group] });
  });

  it('gives no standing without the Secrets Manager flag, without confirmation, or in an organization without Secrets Manager', async () => {
    const flagless = await member(Role.Owner, { sm: false });
    const revoked = await member(Role.Owner, { status: Status.Revoked });
    const noSmOrg = await seedOrganization(server, { overrides: { use_secrets_manager: false } });
    const there = await member(Role.Owner, { organizationId: noSmOrg });
    expect(await smStandingOf(db(), flagless.principal, org)).toBeNull();
    expect(await smStandingOf(db(), revoked.principal, org)).toBeNull();
    expect(await smStandingOf(db(), there.principal, noSmOrg)).toBeNull();
  });

  it('decides an admin in one query and a member in two (the membership with its organization, then its groups)', async () => {
    const admin = await member(Role.Admin);
    const user = await member(Role.User);
    for (const [who, queries] of [[admin, 1], [user, 2]] as const) {
      const counted = counting(db());
      expect(await smStandingOf(counted.db, who.principal, org)).not.toBeNull();
      expect(counted.count()).toBe(queries);
    }
  });

  it("gives a machine account standing in its own organization only", async () => {
    const principal: Principal = { kind: 'serviceAccount', serviceAccountId: randomUUID(), organizationId: org, accessTokenId: randomUUID(), clientId: 'x', scopes: ['api.secrets'] };
    expect(await smStandingOf(db(), principal, org)).toMatchObject({ kind: 'serviceAccount' });
    expect(await smStandingOf(db(), principal, randomUUID())).toBeNull();
  });
});

describe('what access policies grant', () => {
  it('adds up grants to the membership and its groups, the highest winning, and reaches a secret through its project or its own policy', async () => {
    const someone = await member(Role.User);
    const group = await seedGroup(server, org, [someone.memberId]);
    const [p1, p2, p3] = [await seedProject(server, org), await seedProject(server, org), await seedProject(server, org)];
    const [inP1, direct, loose] = [await seedSecret(server, org, p1), await seedSecret(server, org, null), await seedSecret(server, org, null)];
    const machine = await seedMachineAccount(server, org);
    await db()
      .insertInto('access_policies')
      .values([
        policyRow({ member: someone.memberId }, { project: p1 }, READ),
        policyRow({ group }, { project: p1 }, READ_WRITE),
        policyRow({ group }, { project: p2 }, READ),
        policyRow({ member: someone.memberId }, { secret: direct }, READ),
        policyRow({ group }, { machineAccount: machine }, READ_WRITE),
      ])
      .execute();
    const caller = await smStandingOf(db(), someone.principal, org);
    const access = await smAccessOf(db(), caller!);
    expect(projectRights(access, p1)).toEqual({ read: true, write: true });
    expect(projectRights(access, p2)).toEqual({ read: true, write: false });
    expect(projectRights(access, p3)).toEqual({ read: false, write: false });
    expect(secretRights(access, { id: inP1, project_id: p1 })).toEqual({ read: true, write: true });
    expect(secretRights(access, { id: direct, project_id: null })).toEqual({ read: true, write: false });
    expect(secretRights(access, { id: loose, project_id: null })).toEqual({ read: false, write: false });
    expect(serviceAccountRights(access, machine)).toEqual({ read: true, write: true });

    const admin = await smAccessOf(db(), (await smStandingOf(db(), (await member(Role.Admin)).principal, org))!);
    expect(secretRights(admin, { id: loose, project_id: null })).toEqual({ read: true, write: true });
  });

  it('grants a machine account what policies name it for, and never other machine accounts', async () => {
    const machine = await seedMachineAccount(server, org);
    const project = await seedProject(server, org);
    await seedPolicy(server, { machineAccount: machine }, { project }, READ);
    const principal: Principal = { kind: 'serviceAccount', serviceAccountId: machine, organizationId: org, accessTokenId: randomUUID(), clientId: 'x', scopes: ['api.secrets'] };
    const access = await smAccessOf(db(), (await smStandingOf(db(), principal, org))!);
    expect(projectRights(access, project)).toEqual({ read: true, write: false });
    expect(serviceAccountRights(access, machine)).toEqual({ read: false, write: false });
  });
});
