import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memberOf, memberRow, orgWithOwner } from '../../../test/support/members.js';
import { seedMembership } from '../../../test/support/orgs.js';
import { createUser } from '../../../test/support/accounts.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { EventSystemUser, EventType } from '../../platform/audit/event-type.js';
import { OrganizationUserStatusType as Status, OrganizationUserType as Role } from '../../platform/access/roles.js';
import { PolicyType } from './policy-type.js';
import { enableAuthenticator } from '../../../test/support/two-factor.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server.close());

const revocationEvents = (orgId: string) =>
  server.database.db
    .selectFrom('events')
    .selectAll()
    .where('type', '=', EventType.OrganizationUser_Revoked_TwoFactorNonCompliance)
    .where('organization_id', '=', orgId)
    .orderBy('seq')
    .execute();

describe('the Two-step login policy (type 0)', () => {
  it('turned on, revokes accepted and confirmed members without two-step login, not owners, admins or the compliant', async () => {
    const { orgId, owner } = await orgWithOwner(server);
    const plain = await memberOf(server, orgId);
    const accepted = await memberOf(server, orgId, { status: Status.Accepted });
    const invited = await seedMembership(server, { organizationId: orgId, email: 'invitee@example.com', status: Status.Invited });
    const admin = await memberOf(server, orgId, { type: Role.Admin });
    const secured = await memberOf(server, orgId);
    await enableAuthenticator(server, secured);

    const res = await server.request('PUT', `/api/organizations/${orgId}/policies/${PolicyType.TwoFactorAuthentication}`, { token: owner.accessToken, json: { enabled: true } });
    expect(res.status).toBe(200);
    expect((await memberRow(server, plain.memberId))?.status).toBe(Status.Revoked);
    expect((await memberRow(server, accepted.memberId))?.status).toBe(Status.Revoked);
    expect((await memberRow(server, invited))?.status).toBe(Status.Invited);
    expect((await memberRow(server, admin.memberId))?.status).toBe(Status.Confirmed);
    expect((await memberRow(server, secured.memberId))?.status).toBe(Status.Confirmed);
    const events = await revocationEvents(orgId);
    expect(events.map((e) => e.organization_user_id).sort()).toEqual([plain.memberId, accepted.memberId].sort());
    expect(events.every((e) => e.acting_user_id === owner.userId)).toBe(true);

    // Saving it again while on revokes nobody more.
    await server.request('PUT', `/api/organizations/${orgId}/policies/${PolicyType.TwoFactorAuthentication}`, { token: owner.accessToken, json: { enabled: true } });
    expect(await revocationEvents(orgId)).toHaveLength(2);

    // The members list shows who has two-step login.
    const list = await server.request('GET', `/api/organizations/${orgId}/users`, { token: owner.accessToken });
    const byUser = new Map((list.body.data as { userId: string; twoFactorEnabled: boolean }[]).map((m) => [m.userId, m.twoFactorEnabled]));
    expect(byUser.get(secured.userId)).toBe(true);
    expect(byUser.get(plain.userId)).toBe(false);
  });

  it("revokes a member who turns their last provider off, where the policy binds them, as the system (TwoFactorDisabled)", async () => {
    const { orgId, owner } = await orgWithOwner(server);
    const member = await memberOf(server, orgId);
    await enableAuthenticator(server, member);
    const { orgId: otherOrg } = await orgWithOwner(server);
    const elsewhere = await seedMembership(server, { organizationId: otherOrg, userId: member.userId, key: '4.aGVsbG8=' });
    expect((await server.request('PUT', `/api/organizations/${orgId}/policies/0`, { token: owner.accessToken, json: { enabled: true } })).status).toBe(200);
    expect((await memberRow(server, member.memberId))?.status).toBe(Status.Confirmed);

    const revision = async () => (await server.database.db.selectFrom('users').select('account_revision_date').where('id', '=', member.userId).executeTakeFirstOrThrow()).account_revision_date;
    const before = await revision();
    await new Promise((r) => setTimeout(r, 5));
    const off = await server.request('PUT', '/api/two-factor/disable', { token: member.accessToken, json: { masterPasswordHash: member.account.masterPasswordHash, type: 0 } });
    expect(off.status).toBe(200);
    expect((await memberRow(server, member.memberId))?.status).toBe(Status.Revoked);
    // The revoked member's clients see a newer account revision and sync the organization away.
    expect(await revision()).not.toBe(before);
    // An organization without the policy keeps them.
    expect((await memberRow(server, elsewhere))?.status).toBe(Status.Confirmed);
    const [event] = await revocationEvents(orgId);
    expect(event).toMatchObject({ organization_user_id: member.memberId, system_user: EventSystemUser.TwoFactorDisabled, acting_user_id: null });
  });

  it('lets an invitee join once they have two-step login on', async () => {
    const { orgId, owner } = await orgWithOwner(server);
    await server.request('PUT', `/api/organizations/${orgId}/policies/0`, { token: owner.accessToken, json: { enabled: true } });
    const user = await createUser(server);
    const accepted = await seedMembership(server, { organizationId: orgId, userId: user.userId, status: Status.Accepted });
    const refused = await server.request('POST', `/api/organizations/${orgId}/users/${accepted}/confirm`, { token: owner.accessToken, json: { key: '4.a2V5' } });
    expect(refused.body.message).toBe('User does not have two-step login enabled.');
    await enableAuthenticator(server, user);
    expect((await server.request('POST', `/api/organizations/${orgId}/users/${accepted}/confirm`, { token: owner.accessToken, json: { key: '4.a2V5' } })).status).toBe(200);
  });
});
