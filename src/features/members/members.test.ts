import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

// Each test registers several accounts (slow key derivation); a busy CI machine needs the room.
vi.setConfig({ testTimeout: 120_000 });
import { seedAccount } from '../../../test/support/accounts.js';
import { freshEmail, seedCollection, seedGroup } from '../../../test/support/admin.js';
import { dataOf, memberEvents, memberEventTypes, memberOf, memberRow, orgWithOwner } from '../../../test/support/members.js';
import { seedMembership, seedOrganization } from '../../../test/support/orgs.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { EventType } from '../../platform/audit/event-type.js';
import { PlanType } from '../organizations/plans.js';
import { OrganizationUserStatusType as Status, OrganizationUserType as Role } from '../../platform/access/roles.js';

// One server for the file: each test makes its own organizations and users (fresh emails) and
// reads back only their events, rows and log lines.
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server.close());

/** What the server logged since `from` (a count of lines): this test's own lines. */
const logsSince = (from: number) => server.logs.lines.slice(from).join('\n');

const users = (orgId: string) => `/api/organizations/${orgId}/users`;
const invite = (token: string, orgId: string, json: unknown) => server.request('POST', `${users(orgId)}/invite`, { token, json });

async function listed(token: string, orgId: string, query = '') {
  const res = await server.request('GET', `${users(orgId)}${query}`, { token });
  expect(res.status).toBe(200);
  return res.body.data as { id: string; email: string; status: Status; type: Role; userId: string | null; groups: string[]; collections: unknown[] }[];
}

describe('inviting members', () => {
  it('creates invited memberships, lists them and records who invited whom', async () => {
    const logsFrom = server.logs.lines.length;
    const { orgId, owner } = await orgWithOwner(server);
    const collection = await seedCollection(server, orgId);
    const group = await seedGroup(server, orgId);
    const res = await invite(owner.accessToken, orgId, {
      emails: [' New.Person@Example.com', 'other@example.com', 'new.person@example.com'],
      type: Role.User,
      collections: [{ id: collection.toUpperCase(), readOnly: true }],
      groups: [group],
    });
    expect(res.status).toBe(200);
    expect(res.text).toBe('');

    const data = await listed(owner.accessToken, orgId, '?includeGroups=true&includeCollections=true');
    const invited = data.filter((m) => m.status === Status.Invited);
    expect(invited.map((m) => m.email).sort()).toEqual(['new.person@example.com', 'other@example.com']);
    expect(invited[0]).toMatchObject({
      object: 'organizationUserUserDetails',
      userId: null,
      type: Role.User,
      twoFactorEnabled: false,
      groups: [group],
      collections: [{ id: collection, readOnly: true, hidePasswords: false, manage: false }],
    });
    expect(Object.keys(invited[0] ?? {})[0]).toBe('object');

    const events = await memberEvents(server, [orgId]);
    expect(events.map((e) => e.type)).toEqual([EventType.OrganizationUser_Invited, EventType.OrganizationUser_Invited]);
    expect(events.every((e) => e.acting_user_id === owner.userId && e.organization_id === orgId)).toBe(true);
    // Without SMTP_HOST the invitation link is logged instead of mailed.
    expect(logsSince(logsFrom)).toContain('accept-organization?');
    expect(logsSince(logsFrom)).toContain('SMTP_HOST is not set');

    // Inviting the same address again is a no-op, not a second membership.
    expect((await invite(owner.accessToken, orgId, { emails: ['other@example.com'], type: Role.User })).status).toBe(200);
    expect(await listed(owner.accessToken, orgId)).toHaveLength(3);
    expect(await memberEventTypes(server, [orgId])).toHaveLength(2);
  });

  it('skips an address that already belongs to a joined member', async () => {
    const { orgId, owner } = await orgWithOwner(server);
    const email = freshEmail('joined');
    const member = await memberOf(server, orgId, { email });
    expect((await invite(owner.accessToken, orgId, { emails: [email.replace('joined', 'Joined')], type: Role.User })).status).toBe(200);
    const data = await listed(owner.accessToken, orgId);
    expect(data.filter((m) => m.email === email).map((m) => m.id)).toEqual([member.memberId]);
  });

  it('refuses bad input with 400 naming the field, and records nothing', async () => {
    const { orgId, owner } = await orgWithOwner(server);
    const other = await seedOrganization(server);
    const foreignCollection = await seedCollection(server, other);
    const foreignGroup = await seedGroup(server, other);
    const cases: [unknown, string][] = [
      [{ type: Role.User }, 'emails'],
      [{ emails: [], type: Role.User }, 'emails'],
      [{ emails: ['not-an-email'], type: Role.User }, 'emails[0]'],
      [{ emails: ['a@example.com'] }, 'type'],
      [{ emails: ['a@example.com'], type: 7 }, 'type'],
      [{ emails: ['a@example.com'], type: '2' }, 'type'],
      [{ emails: ['a@example.com'], type: Role.Custom }, 'permissions'],
      [{ emails: ['a@example.com'], type: Role.User, collections: [{ id: 'nope' }] }, 'collections[0].id'],
      [{ emails: ['a@example.com'], type: Role.User, collections: [{ id: foreignCollection }] }, 'collections'],
      [{ emails: ['a@example.com'], type: Role.User, collections: [{ id: randomUUID() }] }, 'collections'],
      [{ emails: ['a@example.com'], type: Role.User, groups: [foreignGroup] }, 'groups'],
      [{ emails: Array.from({ length: 21 }, (_, i) => `u${i}@example.com`), type: Role.User }, 'emails'],
    ];
    for (const [json, field] of cases) {
      const res = await invite(owner.accessToken, orgId, json);
      expect(res.status, JSON.stringify(json)).toBe(400);
      expect(Object.keys(res.body.validationErrors ?? {}), JSON.stringify(json)).toContain(field);
    }
    // The organization rule runs first, and an id that is not a GUID names no organization.
    expect((await server.request('POST', `${users('not-a-guid')}/invite`, { token: owner.accessToken, json: { emails: ['a@example.com'], type: 2 } })).status).toBe(404);
    expect(await memberEventTypes(server, [orgId, other])).toEqual([]);
    expect(await listed(owner.accessToken, orgId)).toHaveLength(1);
  });

  it('refuses custom roles on plans without custom permissions', async () => {
    const { orgId, owner } = await orgWithOwner(server, { planType: PlanType.TeamsAnnually });
    const res = await invite(owner.accessToken, orgId, { emails: ['c@example.com'], type: Role.Custom, permissions: { manageUsers: true } });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('To enable custom permissions the organization must be on an Enterprise plan.');
  });

  it('enforces the seat limit (Free: 2) counting invited, accepted and confirmed but not revoked members', async () => {
    const { orgId, owner } = await orgWithOwner(server, { planType: PlanType.Free });
    const tooMany = await invite(owner.accessToken, orgId, { emails: ['a@example.com', 'b@example.com'], type: Role.User });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.message).toBe('You have reached the maximum number of users (2) for this organization.');
    expect((await invite(owner.accessToken, orgId, { emails: ['a@example.com'], type: Role.User })).status).toBe(200);
    const full = await invite(owner.accessToken, orgId, { emails: ['b@example.com'], type: Role.User });
    expect(full.status).toBe(400);
    expect(await memberEventTypes(server, [orgId])).toEqual([EventType.OrganizationUser_Invited]);

    // A revoked member frees the seat; restoring them needs it back.
    const [invited] = (await listed(owner.accessToken, orgId)).filter((m) => m.status === Status.Invited);
    await server.database.db.deleteFrom('organization_users').where('id', '=', invited?.id ?? '').execute();
    const revoked = await memberOf(server, orgId, { status: Status.Revoked });
    expect((await invite(owner.accessToken, orgId, { emails: ['b@example.com'], type: Role.User })).status).toBe(200);
    const restore = await server.request('PUT', `${users(orgId)}/${revoked.memberId}/restore`, { token: owner.accessToken });
    expect(restore.status).toBe(400);
    expect(restore.body.message).toBe('You have reached the maximum number of users (2) for this organization.');
  });
});

describe('who may manage members', () => {
  it('admits owners, admins and custom user managers; refuses other roles, unconfirmed, revoked and foreign callers', async () => {
    const { orgId, owner } = await orgWithOwner(server);
    const admin = await memberOf(server, orgId, { type: Role.Admin });
    const custom = await memberOf(server, orgId, { type: Role.Custom, permissions: { manageUsers: true } });
    const customNoUsers = await memberOf(server, orgId, { type: Role.Custom, permissions: { manageGroups: true } });
    const manager = await memberOf(server, orgId, { type: Role.Manager });
    const user = await memberOf(server, orgId, { type: Role.User });
    const invitedAdmin = await memberOf(server, orgId, { type: Role.Admin, status: Status.Invited });
    const acceptedAdmin = await memberOf(server, orgId, { type: Role.Admin, status: Status.Accepted });
    const revokedAdmin = await memberOf(server, orgId, { type: Role.Admin, status: Status.Revoked });
    const otherOrg = await orgWithOwner(server);

    for (const caller of [owner, admin, custom]) {
      expect((await server.request('GET', users(orgId), { token: caller.accessToken })).status).toBe(200);
    }
    for (const caller of [customNoUsers, manager, user]) {
      const res = await server.request('GET', users(orgId), { token: caller.accessToken });
      expect(res.status).toBe(403);
      expect((await invite(caller.accessToken, orgId, { emails: ['x@example.com'], type: Role.User })).status).toBe(403);
    }
    for (const caller of [invitedAdmin, acceptedAdmin, revokedAdmin, otherOrg.owner]) {
      expect((await server.request('GET', users(orgId), { token: caller.accessToken })).status).toBe(404);
      expect((await server.request('GET', `${users(orgId)}/${user.memberId}`, { token: caller.accessToken })).status).toBe(404);
      expect((await server.request('PUT', `${users(orgId)}/${user.memberId}/revoke`, { token: caller.accessToken })).status).toBe(404);
    }
    expect((await server.request('GET', users(orgId))).status).toBe(401);
    // The owner of another organization cannot reach this one's members through their own organization either.
    expect((await server.request('GET', `${users(otherOrg.orgId)}/${user.memberId}`, { token: otherOrg.owner.accessToken })).status).toBe(404);
    expect((await server.request('DELETE', `${users(otherOrg.orgId)}/${user.memberId}`, { token: otherOrg.owner.accessToken })).status).toBe(404);
    expect(await memberRow(server, user.memberId)).toBeDefined();
    expect(await memberEventTypes(server, [orgId, otherOrg.orgId])).toEqual([]);
  });

  it('lets only owners invite or edit owners, and keeps custom user managers away from admins', async () => {
    const { orgId, owner } = await orgWithOwner(server);
    const admin = await memberOf(server, orgId, { type: Role.Admin });
    const custom = await memberOf(server, orgId, { type: Role.Custom, permissions: { manageUsers: true } });
    const user = await memberOf(server, orgId);

    const adminInvitesOwner = await invite(admin.accessToken, orgId, { emails: ['o@example.com'], type: Role.Owner });
    expect(adminInvitesOwner.status).toBe(400);
    expect(adminInvitesOwner.body.message).toBe("Only an Owner can configure another Owner's account.");
    const customInvitesAdmin = await invite(custom.accessToken, orgId, { emails: ['a@example.com'], type: Role.Admin });
    expect(customInvitesAdmin.body.message).toBe('Custom users can not manage Admins or Owners.');
    const customGrantsMore = await invite(custom.accessToken, orgId, { emails: ['c@example.com'], type: Role.Custom, permissions: { manageUsers: true, managePolicies: true } });
    expect(customGrantsMore.body.message).toBe('Custom users can only grant the same custom permissions that they have.');
    expect((await invite(custom.accessToken, orgId, { emails: ['c@example.com'], type: Role.Custom, permissions: { manageUsers: true } })).status).toBe(200);
    expect((await invite(admin.accessToken, orgId, { emails: ['a2@example.com'], type: Role.Admin })).status).toBe(200);
    expect((await invite(owner.accessToken, orgId, { emails: ['o2@example.com'], type: Role.Owner })).status).toBe(200);

    const promote = await server.request('PUT', `${users(orgId)}/${user.memberId}`, { token: admin.accessToken, json: { type: Role.Owner } });
    expect(promote.status).toBe(400);
    const editOwner = await server.request('PUT', `${users(orgId)}/${owner.memberId}`, { token: admin.accessToken, json: { type: Role.Owner } });
    expect(editOwner.body.message).toBe("Only an Owner can configure another Owner's account.");
    const editAdmin = await server.request('PUT', `${users(orgId)}/${admin.memberId}`, { token: custom.accessToken, json: { type: Role.User } });
    expect(editAdmin.body.message).toBe('Custom users can not manage Admins or Owners.');
    expect((await memberRow(server, admin.memberId))?.type).toBe(Role.Admin);
  });

  it('shows mini details to every confirmed member and nobody else', async () => {
    const { orgId, owner } = await orgWithOwner(server);
    const email = freshEmail('mini');
    const user = await memberOf(server, orgId, { email, type: Role.User });
    const revoked = await memberOf(server, orgId, { status: Status.Revoked });
    const res = await server.request('GET', `${users(orgId)}/mini-details`, { token: user.accessToken });
    expect(res.status).toBe(200);
    expect(res.body.object).toBe('list');
    expect(res.body.data).toContainEqual({ object: 'organizationUserUserMiniDetails', id: user.memberId, userId: user.userId, type: 2, status: 2, name: email.split('@')[0], email });
    expect(dataOf(res.body).map((m) => m.id)).toContain(owner.memberId);
    expect((await server.request('GET', `${users(orgId)}/mini-details`, { token: revoked.accessToken })).status).toBe(404);
  });
});

describe('reading members', () => {
  it('answers one member in the shape `bw confirm org-member` reads', async () => {
    const { orgId, owner } = await orgWithOwner(server);
    const accepted = await memberOf(server, orgId, { status: Status.Accepted });
    const group = await seedGroup(server, orgId);
    await server.database.db.insertInto('group_users').values({ group_id: group, organization_user_id: accepted.memberId }).execute();
    const res = await server.request('GET', `${users(orgId)}/${accepted.memberId.toUpperCase()}`, { token: owner.accessToken });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)[0]).toBe('object');
    expect(res.body).toMatchObject({ object: 'organizationUserDetails', id: accepted.memberId, userId: accepted.userId, type: 2, status: 1, collections: [], hasMasterPassword: true });
    expect(res.body).not.toHaveProperty('groups');
    expect(res.body).not.toHaveProperty('permissions');
    const withGroups = await server.request('GET', `${users(orgId)}/${accepted.memberId}?includeGroups=true`, { token: owner.accessToken });
    expect(withGroups.body.groups).toEqual([group]);
    expect((await server.request('GET', `${users(orgId)}/${accepted.memberId}/groups`, { token: owner.accessToken })).body).toEqual([group]);
    expect((await server.request('GET', `${users(orgId)}/${randomUUID()}`, { token: owner.accessToken })).status).toBe(404);
    expect((await server.request('GET', `${users(orgId)}/12`, { token: owner.accessToken })).status).toBe(400);
  });

  it('lists members with the fields `bw list org-members` prints', async () => {
    const { orgId, owner } = await orgWithOwner(server);
    const custom = await memberOf(server, orgId, { type: Role.Custom, permissions: { manageGroups: true } });
    const res = await server.request('GET', users(orgId), { token: owner.accessToken });
    expect(res.body).toMatchObject({ object: 'list', continuationToken: null });
    const entry = dataOf(res.body).find((m) => m.id === custom.memberId);
    expect(entry).toMatchObject({ object: 'organizationUserUserDetails', userId: custom.userId, email: custom.account.email, type: 4, status: 2, twoFactorEnabled: false, groups: [], collections: [] });
    expect(entry?.permissions).toMatchObject({ manageGroups: true, manageUsers: false });
  });

  it('gives account recovery details to members who may reset passwords', async () => {
    const { orgId, owner } = await orgWithOwner(server);
    const email = freshEmail('recover');
    const member = await memberOf(server, orgId, { email });
    await server.database.db.updateTable('organization_users').set({ reset_password_key: '4.cmVzZXQ=' }).where('id', '=', member.memberId).execute();
    await server.database.db.updateTable('organizations').set({ private_key: '2.aQ==|aQ==|aQ==' }).where('id', '=', orgId).execute();
    const res = await server.request('GET', `${users(orgId)}/${member.memberId}/reset-password-details`, { token: owner.accessToken });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      object: 'organizationUserResetPasswordDetails',
      organizationUserId: member.memberId,
      kdf: 0,
      kdfIterations: 600000,
      kdfMemory: null,
      kdfParallelism: null,
      masterPasswordSalt: email,
      resetPasswordKey: '4.cmVzZXQ=',
      encryptedPrivateKey: '2.aQ==|aQ==|aQ==',
    });
    const bulk = await server.request('POST', `${users(orgId)}/account-recovery-details`, { token: owner.accessToken, json: { ids: [member.memberId, randomUUID()] } });
    expect(dataOf(bulk.body).map((d) => d.organizationUserId)).toEqual([member.memberId]);
    const userManager = await memberOf(server, orgId, { type: Role.Custom, permissions: { manageUsers: true } });
    expect((await server.request('GET', `${users(orgId)}/${member.memberId}/reset-password-details`, { token: userManager.accessToken })).status).toBe(403);
    const invited = await seedMembership(server, { organizationId: orgId, email: 'inv@example.com', status: Status.Invited });
    expect((await server.request('GET', `${users(orgId)}/${invited}/reset-password-details`, { token: owner.accessToken })).status).toBe(404);
    expect((await server.request('POST', `${users(orgId)}/account-recovery-details`, { token: owner.accessToken, json: { ids: ['x'] } })).body.validationErrors).toHaveProperty(['ids[0]']);
  });

  it('lists to account recovery managers only the members enrolled in account recovery', async () => {
    const { orgId, owner } = await orgWithOwner(server);
    const enrolled = await memberOf(server, orgId);
    await server.database.db.updateTable('organization_users').set({ reset_password_key: '4.cmVzZXQ=' }).where('id', '=', enrolled.memberId).execute();
    const recoverer = await memberOf(server, orgId, { type: Role.Custom, permissions: { manageResetPassword: true } });
    const res = await listed(recoverer.accessToken, orgId);
    expect(res.map((m) => m.id)).toEqual([enrolled.memberId]);
    expect(res[0]).toMatchObject({ object: 'organizationUserUserDetails', resetPasswordEnrolled: true });
    expect((await listed(owner.accessToken, orgId)).map((m) => m.id)).toEqual(expect.arrayContaining([owner.memberId, enrolled.memberId, recoverer.memberId]));
  });
});

describe('member status transitions', () => {
  it('confirms only accepted members, with a valid encrypted key', async () => {
    const { orgId, owner } = await orgWithOwner(server);
    const confirm = (id: string, key = '4.a2V5') => server.request('POST', `${users(orgId)}/${id}/confirm`, { token: owner.accessToken, json: { key } });
    const invited = await seedMembership(server, { organizationId: orgId, email: 'i@example.com', status: Status.Invited });
    const confirmed = await memberOf(server, orgId);
    const revoked = await memberOf(server, orgId, { status: Status.Revoked });
    const accepted = await memberOf(server, orgId, { status: Status.Accepted });
    for (const [id, message] of [
      [invited, 'User not accepted.'],
      [confirmed.memberId, 'User already confirmed.'],
      [revoked.memberId, 'User is revoked.'],
    ] as const) {
      const res = await confirm(id);
      expect(res.status).toBe(400);
      expect(res.body.message).toBe(message);
    }
    const badKey = await confirm(accepted.memberId, 'not encrypted');
    expect(badKey.body.validationErrors).toEqual({ key: ['The key field is not a valid encrypted string.'] });
    expect((await server.request('POST', `${users(orgId)}/${accepted.memberId}/confirm`, { token: owner.accessToken, json: {} })).body.validationErrors).toHaveProperty('key');
    expect((await confirm(randomUUID())).status).toBe(404);
    expect(await memberEventTypes(server, [orgId])).toEqual([]);

    expect((await confirm(accepted.memberId)).status).toBe(200);
    const row = await memberRow(server, accepted.memberId);
    expect(row).toMatchObject({ status: Status.Confirmed, key: '4.a2V5' });
    expect(await memberEvents(server, [orgId])).toEqual([{ type: EventType.OrganizationUser_Confirmed, organization_id: orgId, organization_user_id: accepted.memberId, acting_user_id: owner.userId }]);
  });

  it('confirms in bulk with a result per id', async () => {
    const { orgId, owner } = await orgWithOwner(server);
    const a = await memberOf(server, orgId, { status: Status.Accepted });
    const b = await memberOf(server, orgId, { status: Status.Invited });
    const unknown = randomUUID();
    const res = await server.request('POST', `${users(orgId)}/confirm`, {
      token: owner.accessToken,
      json: { keys: [{ id: a.memberId, key: '4.a2V5' }, { id: b.memberId, key: '4.a2V5' }, { id: unknown, key: '4.a2V5' }] },
    });
    expect(res.body).toEqual({
      object: 'list',
      data: [
        { object: 'OrganizationBulkConfirmResponseModel', id: a.memberId, error: '' },
        { object: 'OrganizationBulkConfirmResponseModel', id: b.memberId, error: 'User not accepted.' },
        { object: 'OrganizationBulkConfirmResponseModel', id: unknown, error: 'User not found.' },
      ],
      continuationToken: null,
    });
    expect(await memberEventTypes(server, [orgId])).toEqual([EventType.OrganizationUser_Confirmed]);
  });

  it('revokes confirmed members and restores revoked ones, refusing every other transition', async () => {
    const { orgId, owner } = await orgWithOwner(server);
    const put = (path: string, token = owner.accessToken) => server.request('PUT', `${users(orgId)}/${path}`, { token });
    const member = await memberOf(server, orgId);
    const invited = await seedMembership(server, { organizationId: orgId, email: 'i@example.com', status: Status.Invited });
    const accepted = await memberOf(server, orgId, { status: Status.Accepted });

    for (const id of [invited, accepted.memberId]) {
      const res = await put(`${id}/revoke`);
      expect(res.status).toBe(400);
      expect(res.body.message).toBe('Only confirmed members can be revoked.');
      expect((await put(`${id}/restore`)).body.message).toBe('Already active.');
    }
    expect((await put(`${member.memberId}/restore`)).body.message).toBe('Already active.');
    expect((await put(`${owner.memberId}/revoke`)).body.message).toBe('You cannot revoke yourself.');
    expect(await memberEventTypes(server, [orgId])).toEqual([]);

    expect((await put(`${member.memberId}/revoke`)).status).toBe(200);
    expect((await memberRow(server, member.memberId))?.status).toBe(Status.Revoked);
    // Revoked: no access at all, but still listed.
    expect((await server.request('GET', `${users(orgId)}/mini-details`, { token: member.accessToken })).status).toBe(404);
    // Both member answers say why (1: by a member manager), as the 2026 web vaults read it.
    expect((await listed(owner.accessToken, orgId)).find((m) => m.id === member.memberId)).toMatchObject({ status: -1, revocationReason: 1 });
    expect((await server.request('GET', `${users(orgId)}/${member.memberId}`, { token: owner.accessToken })).body).toMatchObject({ status: -1, revocationReason: 1 });
    expect((await put(`${member.memberId}/revoke`)).body.message).toBe('Already revoked.');

    expect((await put(`${member.memberId}/restore`)).status).toBe(200);
    expect(await memberRow(server, member.memberId)).toMatchObject({ status: Status.Confirmed, revocation_reason: null });
    expect((await server.request('GET', `${users(orgId)}/${member.memberId}`, { token: owner.accessToken })).body).toMatchObject({ status: 2, revocationReason: null });
    expect((await server.request('GET', `${users(orgId)}/mini-details`, { token: member.accessToken })).status).toBe(200);
    expect(await memberEventTypes(server, [orgId])).toEqual([EventType.OrganizationUser_Revoked, EventType.OrganizationUser_Restored]);
  });

  it('keeps revoke and restore of owners to owners, and admins away from custom user managers', async () => {
    const { orgId, owner } = await orgWithOwner(server);
    const owner2 = await memberOf(server, orgId, { type: Role.Owner });
    const admin = await memberOf(server, orgId, { type: Role.Admin });
    const custom = await memberOf(server, orgId, { type: Role.Custom, permissions: { manageUsers: true } });
    const put = (path: string, token: string) => server.request('PUT', `${users(orgId)}/${path}`, { token });
    expect((await put(`${owner2.memberId}/revoke`, admin.accessToken)).body.message).toBe('Only owners can revoke other owners.');
    expect((await put(`${admin.memberId}/revoke`, custom.accessToken)).body.message).toBe('Custom users can not revoke admins.');
    expect((await put(`${owner2.memberId}/revoke`, owner.accessToken)).status).toBe(200);
    expect((await put(`${owner2.memberId}/restore`, admin.accessToken)).body.message).toBe('Only owners can restore other owners.');
    expect((await put(`${owner2.memberId}/restore`, owner.accessToken)).status).toBe(200);
  });

  it('revokes and restores in bulk with a result per id', async () => {
    const { orgId, owner } = await orgWithOwner(server);
    const a = await memberOf(server, orgId);
    const b = await memberOf(server, orgId, { status: Status.Accepted });
    const unknown = randomUUID();
    const revoke = await server.request('PUT', `${users(orgId)}/revoke`, { token: owner.accessToken, json: { ids: [a.memberId, b.memberId, owner.memberId, unknown] } });
    expect(revoke.status).toBe(200);
    expect(dataOf(revoke.body).map((r) => r.error)).toEqual(['', 'Only confirmed members can be revoked.', 'You cannot revoke yourself.', 'User not found.']);
    const restore = await server.request('PUT', `${users(orgId)}/restore`, { token: owner.accessToken, json: { ids: [a.memberId, b.memberId] } });
    expect(dataOf(restore.body).map((r) => r.error)).toEqual(['', 'Already active.']);
    expect(await memberEventTypes(server, [orgId])).toEqual([EventType.OrganizationUser_Revoked, EventType.OrganizationUser_Restored]);
    expect((await server.request('PUT', `${users(orgId)}/revoke`, { token: owner.accessToken, json: { ids: [] } })).body.validationErrors).toHaveProperty('ids');
  });

  it('removes members in any status, never oneself, and only owners remove owners', async () => {
    const { orgId, owner } = await orgWithOwner(server);
    const admin = await memberOf(server, orgId, { type: Role.Admin });
    const owner2 = await memberOf(server, orgId, { type: Role.Owner });
    const custom = await memberOf(server, orgId, { type: Role.Custom, permissions: { manageUsers: true } });
    const del = (id: string, token: string) => server.request('DELETE', `${users(orgId)}/${id}`, { token });

    const self = await del(owner.memberId, owner.accessToken);
    expect(self.status).toBe(400);
    expect(self.body.message).toBe('You cannot remove yourself.');
    expect((await del(owner2.memberId, admin.accessToken)).body.message).toBe('Only owners can remove other owners.');
    expect((await del(admin.memberId, custom.accessToken)).body.message).toBe('Custom users can not remove admins.');
    expect(await memberEventTypes(server, [orgId])).toEqual([]);

    const collection = await seedCollection(server, orgId);
    for (const status of [Status.Invited, Status.Accepted, Status.Confirmed, Status.Revoked]) {
      const member = await memberOf(server, orgId, { status });
      await server.database.db.insertInto('collection_users').values({ collection_id: collection, organization_user_id: member.memberId, read_only: false, hide_passwords: false, manage: false }).execute();
      expect((await del(member.memberId, admin.accessToken)).status).toBe(200);
      expect(await memberRow(server, member.memberId)).toBeUndefined();
    }
    expect(await server.database.db.selectFrom('collection_users').selectAll().where('collection_id', '=', collection).execute()).toEqual([]);
    expect((await server.request('POST', `${users(orgId)}/${owner2.memberId}/remove`, { token: owner.accessToken })).status).toBe(200);
    expect(await memberEventTypes(server, [orgId])).toEqual(Array(5).fill(EventType.OrganizationUser_Removed));
    expect((await del(randomUUID(), owner.accessToken)).status).toBe(404);
  });

  it('removes in bulk with a result per id', async () => {
    const { orgId, owner } = await orgWithOwner(server);
    const a = await memberOf(server, orgId);
    const b = await seedMembership(server, { organizationId: orgId, email: 'b@example.com', status: Status.Invited });
    const other = await orgWithOwner(server);
    const res = await server.request('DELETE', users(orgId), { token: owner.accessToken, json: { ids: [a.memberId, b, owner.memberId, other.owner.memberId] } });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([
      { object: 'OrganizationBulkConfirmResponseModel', id: a.memberId, error: '' },
      { object: 'OrganizationBulkConfirmResponseModel', id: b, error: '' },
      { object: 'OrganizationBulkConfirmResponseModel', id: owner.memberId, error: 'You cannot remove yourself.' },
      { object: 'OrganizationBulkConfirmResponseModel', id: other.owner.memberId, error: 'User not found.' },
    ]);
    expect(await memberRow(server, other.owner.memberId)).toBeDefined();
    expect(await memberEventTypes(server, [orgId, other.orgId])).toEqual([EventType.OrganizationUser_Removed, EventType.OrganizationUser_Removed]);
  });
});

describe('updating members', () => {
  it('changes role, collections and groups, recording the update and the group change', async () => {
    const { orgId, owner } = await orgWithOwner(server);
    const member = await memberOf(server, orgId);
    const c1 = await seedCollection(server, orgId);
    const g1 = await seedGroup(server, orgId);
    const res = await server.request('PUT', `${users(orgId)}/${member.memberId}`, {
      token: owner.accessToken,
      json: { type: Role.Custom, permissions: { manageGroups: true, manageCiphers: true }, collections: [{ id: c1, hidePasswords: true }], groups: [g1] },
    });
    expect(res.status).toBe(200);
    const details = await server.request('GET', `${users(orgId)}/${member.memberId}?includeGroups=true`, { token: owner.accessToken });
    expect(details.body).toMatchObject({ type: 4, collections: [{ id: c1, readOnly: false, hidePasswords: true, manage: false }], groups: [g1] });
    // manageCiphers (read by the 2026.9 clients) is kept as set and answered beside the others.
    expect(details.body.permissions).toMatchObject({ manageGroups: true, manageCiphers: true, manageUsers: false });
    expect(await memberEventTypes(server, [orgId])).toEqual([EventType.OrganizationUser_Updated, EventType.OrganizationUser_UpdatedGroups]);

    // Same groups again: an update, but no group change; omitted collections stay as they were.
    await server.request('PUT', `${users(orgId)}/${member.memberId}`, { token: owner.accessToken, json: { type: Role.User, groups: [g1] } });
    const after = await server.request('GET', `${users(orgId)}/${member.memberId}`, { token: owner.accessToken });
    expect(after.body).toMatchObject({ type: Role.User, collections: [{ id: c1 }] });
    expect(after.body).not.toHaveProperty('permissions');
    expect(await memberEventTypes(server, [orgId])).toHaveLength(3);

    const groupsPut = await server.request('PUT', `${users(orgId)}/${member.memberId}/groups`, { token: owner.accessToken, json: { groupIds: [] } });
    expect(groupsPut.status).toBe(200);
    expect((await server.request('GET', `${users(orgId)}/${member.memberId}/groups`, { token: owner.accessToken })).body).toEqual([]);
    expect((await memberEventTypes(server, [orgId])).at(-1)).toBe(EventType.OrganizationUser_UpdatedGroups);
  });

  it('keeps callers from widening access through the member routes', async () => {
    const s = server;
    const { orgId, owner } = await orgWithOwner(s);
    const caller = await memberOf(s, orgId, { type: Role.Custom, permissions: { manageUsers: true } });
    const other = await memberOf(s, orgId);
    const limited = await seedGroup(s, orgId);
    const everything = await seedGroup(s, orgId, [], true);
    const put = (path: string, json: unknown, token = caller.accessToken) => s.request('PUT', `${users(orgId)}/${path}`, { token, json });
    const groupsOf = async (memberId: string) => (await s.database.db.selectFrom('group_users').select('group_id').where('organization_user_id', '=', memberId).execute()).map((r) => r.group_id);

    // Into a group without access to all collections: the rule the group routes apply.
    const own = await put(`${caller.memberId}/groups`, { groupIds: [limited] });
    expect(own.status).toBe(400);
    expect(own.body.validationErrors.groupIds).toEqual(['You cannot add yourself to groups.']);
    const viaUpdate = await put(caller.memberId, { type: Role.Custom, permissions: { manageUsers: true }, groups: [everything, limited] });
    expect(viaUpdate.body.validationErrors).toHaveProperty('groups');
    expect(await groupsOf(caller.memberId)).toEqual([]);
    expect((await put(`${caller.memberId}/groups`, { groupIds: [everything] })).status).toBe(200);
    // Others may be put into any group.
    expect((await put(`${other.memberId}/groups`, { groupIds: [limited] })).status).toBe(200);

    // Access to all collections needs editAnyCollection, on update and on invite.
    const all = await put(other.memberId, { type: Role.User, accessAll: true });
    expect(all.status).toBe(400);
    expect(all.body.validationErrors).toHaveProperty('accessAll');
    const invite = await s.request('POST', `${users(orgId)}/invite`, { token: caller.accessToken, json: { emails: ['everything@example.com'], type: Role.User, accessAll: true, collections: [] } });
    expect(invite.body.validationErrors).toHaveProperty('accessAll');
    expect((await memberRow(s, other.memberId))?.access_all).toBeFalsy();
    expect((await put(other.memberId, { type: Role.User, accessAll: true }, owner.accessToken)).status).toBe(200);
  });

  it('keeps at least one confirmed owner', async () => {
    const { orgId, owner } = await orgWithOwner(server);
    const res = await server.request('PUT', `${users(orgId)}/${owner.memberId}`, { token: owner.accessToken, json: { type: Role.Admin } });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('Organization must have at least one confirmed owner.');
    const owner2 = await memberOf(server, orgId, { type: Role.Owner });
    expect((await server.request('PUT', `${users(orgId)}/${owner.memberId}`, { token: owner.accessToken, json: { type: Role.Admin } })).status).toBe(200);
    // Now an admin, the former owner can no longer touch owners.
    const revoke = await server.request('PUT', `${users(orgId)}/${owner2.memberId}/revoke`, { token: owner.accessToken });
    expect(revoke.body.message).toBe('Only owners can revoke other owners.');
    expect(await memberEventTypes(server, [orgId])).toEqual([EventType.OrganizationUser_Updated]);
  });

  it('refuses bad input naming the field', async () => {
    const { orgId, owner } = await orgWithOwner(server);
    const member = await memberOf(server, orgId);
    const foreignOrg = await seedOrganization(server);
    const foreign = await seedGroup(server, foreignOrg);
    const collection = await seedCollection(server, orgId);
    for (const [json, field] of [
      [{}, 'type'],
      [{ type: Role.Custom }, 'permissions'],
      [{ type: Role.User, accessAll: 'yes' }, 'accessAll'],
      [{ type: Role.User, groups: [foreign] }, 'groups'],
      [{ type: Role.User, permissions: { manageUsers: 1 } }, 'permissions.manageUsers'],
      // Manage excludes read-only and hidden passwords, as in the official server.
      [{ type: Role.User, collections: [{ id: collection, manage: true, hidePasswords: true }] }, 'collections'],
    ] as const) {
      const res = await server.request('PUT', `${users(orgId)}/${member.memberId}`, { token: owner.accessToken, json });
      expect(res.status, JSON.stringify(json)).toBe(400);
      expect(Object.keys(res.body.validationErrors ?? {}), JSON.stringify(json)).toContain(field);
    }
    expect((await server.request('PUT', `${users(orgId)}/${member.memberId}/groups`, { token: owner.accessToken, json: { groupIds: [foreign] } })).body.validationErrors).toHaveProperty('groupIds');
    expect(await memberEventTypes(server, [orgId, foreignOrg])).toEqual([]);
  });

  it('refuses group assignments on a plan without groups', async () => {
    const { orgId, owner } = await orgWithOwner(server, { planType: PlanType.FamiliesAnnually2025 });
    const member = await memberOf(server, orgId);
    const group = await seedGroup(server, orgId);
    const viaUpdate = await server.request('PUT', `${users(orgId)}/${member.memberId}`, { token: owner.accessToken, json: { type: Role.User, groups: [group] } });
    expect(viaUpdate.body.validationErrors).toEqual({ groups: ['This organization cannot use groups.'] });
    const direct = await server.request('PUT', `${users(orgId)}/${member.memberId}/groups`, { token: owner.accessToken, json: { groupIds: [group] } });
    expect(direct.body.validationErrors).toEqual({ groupIds: ['This organization cannot use groups.'] });
    expect(await server.database.db.selectFrom('group_users').selectAll().where('group_id', '=', group).execute()).toEqual([]);
  });
});

describe('reinviting', () => {
  it('resends only to invited members', async () => {
    const { orgId, owner } = await orgWithOwner(server);
    const email = freshEmail('again');
    const invited = await seedMembership(server, { organizationId: orgId, email, status: Status.Invited });
    const confirmed = await memberOf(server, orgId);
    const logsFrom = server.logs.lines.length;
    expect((await server.request('POST', `${users(orgId)}/${invited}/reinvite`, { token: owner.accessToken })).status).toBe(200);
    expect(logsSince(logsFrom)).toContain(encodeURIComponent(email));
    const refused = await server.request('POST', `${users(orgId)}/${confirmed.memberId}/reinvite`, { token: owner.accessToken });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toBe('Only invited members can be reinvited.');
    const bulk = await server.request('POST', `${users(orgId)}/reinvite`, { token: owner.accessToken, json: { ids: [invited, confirmed.memberId] } });
    expect(dataOf(bulk.body).map((r) => r.error)).toEqual(['', 'Only invited members can be reinvited.']);
    expect((await server.request('POST', `${users(orgId)}/${randomUUID()}/reinvite`, { token: owner.accessToken })).status).toBe(404);
    const user = await seedAccount(server);
    expect((await server.request('POST', `${users(orgId)}/${invited}/reinvite`, { token: user.accessToken })).status).toBe(404);
  });
});
