import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { passwordGrantForm, testAccount } from '../../../test/support/accounts.js';
import { actor, orgWithCallers, custom, eventsOf, freshEmail, freshOrgWithOwner, ROLES, type Actor } from '../../../test/support/admin.js';
import { seedMembership, seedOrganization } from '../../../test/support/orgs.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { EventType } from '../../platform/audit/event-type.js';
import { PlanType } from '../organizations/plans.js';
import { OrganizationUserStatusType, OrganizationUserType } from '../../platform/access/roles.js';
import { syncPoliciesForUser } from './policies.service.js';
import { PolicyType } from './policy-type.js';

const put = (server: TestServer, token: string, org: string, type: number, json: unknown) =>
  server.request('PUT', `/api/organizations/${org}/policies/${type}`, { token, json });

// One server for the file: each test makes its own organizations and users (fresh emails) and
// reads back only those.
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server.close());

describe('policy permission matrix', () => {
  let org: string;
  let actors: Record<string, Actor> = {};
  const CASES = { ...ROLES, managePolicies: custom('managePolicies'), manageGroups: custom('manageGroups') };

  beforeAll(async () => {
    ({ org, actors } = await orgWithCallers(server, CASES));
  });

  it.each([
    ['owner', 200],
    ['admin', 200],
    ['managePolicies', 200],
    ['user', 403],
    ['manager', 403],
    ['manageGroups', 403],
    ['invited', 404],
    ['accepted', 404],
    ['revoked', 404],
    ['stranger', 404],
  ] as const)('%s: list, get and save answer %i', async (who, status) => {
    const token = actors[who]?.token ?? '';
    expect((await server.request('GET', `/api/organizations/${org}/policies`, { token })).status).toBe(status);
    expect((await server.request('GET', `/api/organizations/${org}/policies/${PolicyType.DisableSend}`, { token })).status).toBe(status);
    expect((await put(server, token, org, PolicyType.DisableSend, { enabled: true })).status).toBe(status);
  });
});

describe('policies', () => {
  it('answers an unsaved policy as off, saves one, lists it and records the change', async () => {
    const { org, owner } = await freshOrgWithOwner(server);
    const base = `/api/organizations/${org}/policies`;
    const before = await server.request('GET', `${base}/${PolicyType.MasterPassword}`, { token: owner.token });
    expect(before.body).toEqual({ object: 'policy', id: null, organizationId: org, type: 1, data: null, enabled: false, revisionDate: '1970-01-01T00:00:00.000Z', canToggleState: true });

    const data = { minComplexity: 3, minLength: 14, requireUpper: true, requireLower: false, requireNumbers: true, requireSpecial: false, enforceOnLogin: true, ignored: 'x' };
    const saved = await put(server, owner.token, org, PolicyType.MasterPassword, { type: 1, enabled: true, data });
    expect(saved.status).toBe(200);
    const { ignored: _ignored, ...kept } = data;
    expect(saved.body).toMatchObject({ object: 'policy', organizationId: org, type: 1, enabled: true, data: kept });
    expect(saved.body.id).toMatch(/^[0-9a-f-]{36}$/);

    const again = await put(server, owner.token, org, PolicyType.MasterPassword, { enabled: false, data: null });
    expect(again.body).toMatchObject({ id: saved.body.id, enabled: false, data: null });
    const list = await server.request('GET', base, { token: owner.token });
    expect(list.body.data).toEqual([again.body]);
    const events = await eventsOf(server, EventType.Policy_Updated, org);
    expect(events.map((e) => [e.policy_id, e.organization_id, e.acting_user_id])).toEqual([
      [saved.body.id, org, owner.userId],
      [saved.body.id, org, owner.userId],
    ]);
  });

  it('refuses organizations whose plan has no policies', async () => {
    const { org, owner } = await freshOrgWithOwner(server, PlanType.TeamsAnnually);
    const res = await put(server, owner.token, org, PolicyType.TwoFactorAuthentication, { enabled: true });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('This organization cannot use policies.');
    expect(await server.database.db.selectFrom('policies').selectAll().where('organization_id', '=', org).execute()).toEqual([]);
  });

  it('answers bad input with a 400 naming the field', async () => {
    const { org, owner } = await freshOrgWithOwner(server);
    const cases: [number, unknown, string][] = [
      [1, { enabled: true, data: { minLength: 5 } }, 'data.minLength'],
      [1, { enabled: true, data: { minComplexity: 7 } }, 'data.minComplexity'],
      [1, { enabled: true, data: { requireUpper: 'yes' } }, 'data.requireUpper'],
      [9, { enabled: true, data: { minutes: -1 } }, 'data.minutes'],
      [6, { enabled: true, data: [1, 2] }, 'data'],
      [6, { enabled: true, data: 'text' }, 'data'],
      [6, { enabled: true, type: 7 }, 'type'],
      [6, { data: null }, 'enabled'],
      [6, { enabled: 'true' }, 'enabled'],
      [99, { enabled: true }, 'type'],
    ];
    for (const [type, json, field] of cases) {
      const res = await put(server, owner.token, org, type, json);
      expect(res.status, field).toBe(400);
      expect(Object.keys(res.body.validationErrors ?? {}), JSON.stringify(res.body)).toContain(field);
    }
  });

  it('keeps policies that need Single organization behind it', async () => {
    const { org, owner } = await freshOrgWithOwner(server);
    const sso = await put(server, owner.token, org, PolicyType.RequireSso, { enabled: true });
    expect(sso.status).toBe(400);
    expect(sso.body.message).toBe('Turn on the Single organization policy because it is required for the Require single sign-on authentication policy.');
    expect((await put(server, owner.token, org, PolicyType.SingleOrg, { enabled: true })).status).toBe(200);
    expect((await put(server, owner.token, org, PolicyType.ResetPassword, { enabled: true, data: { autoEnrollEnabled: false } })).status).toBe(200);
    const off = await put(server, owner.token, org, PolicyType.SingleOrg, { enabled: false });
    expect(off.status).toBe(400);
    expect(off.body.message).toBe('Turn off the Account recovery administration policy because it requires the Single organization policy.');
    expect((await put(server, owner.token, org, PolicyType.ResetPassword, { enabled: false })).status).toBe(200);
    expect((await put(server, owner.token, org, PolicyType.SingleOrg, { enabled: false })).status).toBe(200);
  });

  it('refuses Single organization while a member who is not an owner or admin belongs to another organization', async () => {
    const { org, owner, otherOrg } = await freshOrgWithOwner(server);
    const member = await actor(server, org, freshEmail('member'));
    const admin = await actor(server, org, freshEmail('admin'), ROLES.admin);
    await seedMembership(server, { organizationId: otherOrg, userId: admin.userId, email: admin.account.email });
    // Invited elsewhere does not count.
    const invitedElsewhere = await seedMembership(server, { organizationId: otherOrg, userId: member.userId, email: member.account.email, status: OrganizationUserStatusType.Invited });
    expect((await put(server, owner.token, org, PolicyType.SingleOrg, { enabled: false })).status).toBe(200);

    await server.database.db.updateTable('organization_users').set({ status: OrganizationUserStatusType.Confirmed }).where('id', '=', invitedElsewhere).execute();
    const refused = await put(server, owner.token, org, PolicyType.SingleOrg, { enabled: true });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toContain(member.account.email);
    expect(refused.body.message).not.toContain(admin.account.email);

    await server.database.db.deleteFrom('organization_users').where('id', '=', invitedElsewhere).execute();
    expect((await put(server, owner.token, org, PolicyType.SingleOrg, { enabled: true })).status).toBe(200);
  });

  it('shows the enabled master password policy to members of any status, and 404 to others', async () => {
    const { org, owner, stranger } = await freshOrgWithOwner(server);
    const invited = await actor(server, org, freshEmail('invited'), ROLES.invited);
    const path = `/api/organizations/${org}/policies/master-password`;
    expect((await server.request('GET', path, { token: invited.token })).status).toBe(404);
    const saved = await put(server, owner.token, org, PolicyType.MasterPassword, { enabled: true, data: { minLength: 16 } });
    const res = await server.request('GET', path, { token: invited.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(saved.body);
    expect((await server.request('GET', path, { token: stranger.token })).status).toBe(404);
    expect((await server.request('GET', path)).status).toBe(401);
  });

  it('records Two-step login as a policy', async () => {
    const { org, owner } = await freshOrgWithOwner(server);
    const res = await put(server, owner.token, org, PolicyType.TwoFactorAuthentication, { enabled: true, data: null });
    expect(res.body).toMatchObject({ type: 0, enabled: true });
  });
});

describe('policy effects for users', () => {
  async function tokenResponse(s: TestServer, email: string): Promise<Record<string, unknown>> {
    const account = testAccount(email);
    const res = await s.request('POST', '/identity/connect/token', { form: passwordGrantForm(account) });
    expect(res.status).toBe(200);
    return res.body as Record<string, unknown>;
  }

  it('puts the strictest enabled master password requirements of the user\'s organizations in the token response', async () => {
    const { org, owner, otherOrg, stranger } = await freshOrgWithOwner(server);
    expect((await tokenResponse(server, owner.account.email)).MasterPasswordPolicy).toEqual({ Object: 'masterPasswordPolicy' });

    await seedMembership(server, { organizationId: otherOrg, userId: owner.userId, email: owner.account.email, status: OrganizationUserStatusType.Accepted });
    await put(server, owner.token, org, PolicyType.MasterPassword, { enabled: true, data: { minComplexity: 2, minLength: 20, requireUpper: true, requireLower: false } });
    await put(server, stranger.token, otherOrg, PolicyType.MasterPassword, { enabled: true, data: { minComplexity: 4, minLength: 12, requireLower: true, enforceOnLogin: true } });
    const thirdOrg = await seedOrganization(server, { name: 'Third' });
    const third = await actor(server, thirdOrg, freshEmail('third'), ROLES.owner);
    await seedMembership(server, { organizationId: thirdOrg, userId: owner.userId, email: owner.account.email, status: OrganizationUserStatusType.Invited });
    await put(server, third.token, thirdOrg, PolicyType.MasterPassword, { enabled: true, data: { minLength: 100 } });

    expect((await tokenResponse(server, owner.account.email)).MasterPasswordPolicy).toEqual({
      Object: 'masterPasswordPolicy',
      MinComplexity: 4,
      MinLength: 20,
      RequireUpper: true,
      RequireLower: true,
      EnforceOnLogin: true,
    });

    await put(server, owner.token, org, PolicyType.MasterPassword, { enabled: false, data: { minLength: 30 } });
    expect((await tokenResponse(server, owner.account.email)).MasterPasswordPolicy).toEqual({
      Object: 'masterPasswordPolicy',
      MinComplexity: 4,
      MinLength: 12,
      RequireLower: true,
      EnforceOnLogin: true,
    });
  });

  it('gives sync the policies of organizations where the user is confirmed, and with accepted ones as policiesNew', async () => {
    const { org, owner, otherOrg, stranger } = await freshOrgWithOwner(server);
    await seedMembership(server, { organizationId: otherOrg, userId: owner.userId, email: owner.account.email, type: OrganizationUserType.User, status: OrganizationUserStatusType.Accepted });
    const mine = await put(server, owner.token, org, PolicyType.DisableSend, { enabled: true });
    const accepted = await put(server, stranger.token, otherOrg, PolicyType.DisableSend, { enabled: true });
    const both = [mine.body, accepted.body].sort((a, b) => (a.organizationId < b.organizationId ? -1 : 1));
    expect(await syncPoliciesForUser(server.database.db, owner.userId)).toEqual({ policies: [mine.body], policiesNew: both });
    const sync = await server.request('GET', '/api/sync', { token: owner.token });
    expect(sync.body.policies).toEqual([mine.body]);
    expect(sync.body.policiesNew).toEqual(both);
  });
});
