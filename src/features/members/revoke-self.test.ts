import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { memberEvents, memberOf, memberRow, orgWithOwner, seedPolicy } from '../../../test/support/members.js';
import { recordingPushes } from '../../../test/support/pushes.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { EventType } from '../../platform/audit/event-type.js';
import { OrganizationUserStatusType as Status, OrganizationUserType as Role } from '../../platform/access/roles.js';
import { PushType } from '../../platform/push/pushes.js';
import { PolicyType } from '../policies/policy-type.js';

vi.setConfig({ testTimeout: 120_000 });

const pushes = recordingPushes();
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ pushes });
});
afterAll(async () => server?.close());
beforeEach(() => pushes.clear());

const NOT_ELIGIBLE =
  'User is not eligible for self-revocation. The organization data ownership policy must be enabled and the user must be a confirmed member.';
const revokeSelf = (token: string, orgId: string) => server.request('PUT', `/api/organizations/${orgId}/users/revoke-self`, { token });
const statusOf = async (id: string) => (await memberRow(server, id))?.status;

/** An organization with the Enforce organization data ownership policy on. */
async function orgWithPolicy() {
  const org = await orgWithOwner(server);
  await seedPolicy(server, org.orgId, PolicyType.OrganizationDataOwnership);
  return org;
}

describe('PUT /organizations/{orgId}/users/revoke-self', () => {
  it('revokes the caller where the data ownership policy binds them, records who and tells their apps', async () => {
    const { orgId } = await orgWithPolicy();
    const member = await memberOf(server, orgId, { type: Role.Custom, permissions: { manageUsers: true } });

    const res = await revokeSelf(member.accessToken, orgId);
    expect(res.status, res.text).toBe(200);
    expect(res.text).toBe('');
    expect(await statusOf(member.memberId)).toBe(Status.Revoked);
    const events = (await memberEvents(server)).filter((e) => e.organization_user_id === member.memberId);
    expect(events).toEqual([{ type: EventType.OrganizationUser_SelfRevoked, organization_id: orgId, organization_user_id: member.memberId, acting_user_id: member.userId }]);
    expect(pushes.of(PushType.SyncOrgKeys).map((p) => p.target)).toEqual([{ user: member.userId }]);

    // Revoked, the caller is no member any more: the organization is not there for them.
    expect((await revokeSelf(member.accessToken, orgId)).status).toBe(404);
  });

  it('refuses owners and admins, whom the policy exempts', async () => {
    const { orgId, owner } = await orgWithPolicy();
    const admin = await memberOf(server, orgId, { type: Role.Admin });
    for (const caller of [owner, admin]) {
      const res = await revokeSelf(caller.accessToken, orgId);
      expect(res.status).toBe(400);
      expect(res.body.message).toBe(NOT_ELIGIBLE);
      expect(await statusOf(caller.memberId)).toBe(Status.Confirmed);
    }
    expect(pushes.sent).toEqual([]);
  });

  it('refuses where the policy is off, missing, or the organization does not use policies', async () => {
    const none = await orgWithOwner(server);
    const off = await orgWithOwner(server);
    await seedPolicy(server, off.orgId, PolicyType.OrganizationDataOwnership, false);
    const unused = await orgWithPolicy();
    await server.database.db.updateTable('organizations').set({ use_policies: false }).where('id', '=', unused.orgId).execute();
    // Another policy being on does not open it.
    const other = await orgWithOwner(server);
    await seedPolicy(server, other.orgId, PolicyType.SingleOrg);

    for (const { orgId } of [none, off, unused, other]) {
      const member = await memberOf(server, orgId);
      const res = await revokeSelf(member.accessToken, orgId);
      expect(res.status).toBe(400);
      expect(res.body.message).toBe(NOT_ELIGIBLE);
      expect(await statusOf(member.memberId)).toBe(Status.Confirmed);
    }
    const orgs = [none, off, unused, other].map((o) => o.orgId);
    expect((await memberEvents(server)).filter((e) => e.organization_id && orgs.includes(e.organization_id))).toEqual([]);
  });

  it('answers 404 to invited, accepted and revoked members and to strangers, changing nothing', async () => {
    const { orgId } = await orgWithPolicy();
    const elsewhere = await orgWithPolicy();
    const callers = [
      await memberOf(server, orgId, { status: Status.Invited }),
      await memberOf(server, orgId, { status: Status.Accepted }),
      await memberOf(server, orgId, { status: Status.Revoked }),
    ];
    for (const caller of callers) {
      const before = await statusOf(caller.memberId);
      expect((await revokeSelf(caller.accessToken, orgId)).status).toBe(404);
      expect(await statusOf(caller.memberId)).toBe(before);
    }
    expect((await revokeSelf(elsewhere.owner.accessToken, orgId)).status).toBe(404);
  });
});
