import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { seedCollection } from '../../../test/support/admin.js';
import { createUser, type LoggedInUser } from '../../../test/support/accounts.js';
import { memberOf, memberRow, orgWithOwner, seedPolicy, type SeededMember } from '../../../test/support/members.js';
import { seedOrgItem } from '../../../test/support/org-items.js';
import { orgApiToken } from '../../../test/support/public-api.js';
import { recordingPushes } from '../../../test/support/pushes.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { ciphersOf } from '../../../test/support/vault.js';
import { EventSystemUser, EventType } from '../audit/event-type.js';
import { PushType } from '../push/pushes.js';
import { OrganizationUserStatusType as Status } from './roles.js';
import { enableAuthenticator } from '../../../test/support/two-factor.js';

/*
 * revokeMemberships is the one writer of a revocation: each feature that revokes goes through
 * it, and each gets the same outcome here: the membership revoked, the event with its actor and
 * reason, the user made to sync (revision and SyncOrgKeys) and the organization's items gone.
 */

const pushes = recordingPushes();
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ pushes });
});
afterAll(async () => server.close());
beforeEach(() => pushes.clear());

const TWO_STEP_LOGIN = 0;
const DATA_OWNERSHIP = 5;

/** A confirmed member who sees one of the organization's items through a collection. */
async function memberWithItem(orgId: string): Promise<SeededMember & { itemId: string }> {
  const member = await memberOf(server, orgId);
  const collection = await seedCollection(server, orgId, { users: [[member.memberId]] });
  const itemId = await seedOrgItem(server, orgId, [collection]);
  expect(await syncedItemIds(member)).toContain(itemId);
  return { ...member, itemId };
}

async function syncedItemIds(user: LoggedInUser): Promise<string[]> {
  const res = await server.request('GET', '/api/sync', { token: user.accessToken });
  expect(res.status, res.text).toBe(200);
  return ciphersOf(res.body).map((c) => c.id);
}

const revision = async (userId: string) =>
  (await server.database.db.selectFrom('users').select('account_revision_date').where('id', '=', userId).executeTakeFirstOrThrow()).account_revision_date;

const eventsOf = (memberId: string) =>
  server.database.db
    .selectFrom('events')
    .select(['type', 'organization_id', 'organization_user_id', 'acting_user_id', 'system_user'])
    .where('organization_user_id', '=', memberId)
    .where('type', 'in', [EventType.OrganizationUser_Revoked, EventType.OrganizationUser_Revoked_TwoFactorNonCompliance, EventType.OrganizationUser_SelfRevoked])
    .execute();

/** The official RevocationReason each event's cause is stored as, which the web vault shows. */
const REASON_OF_EVENT: Partial<Record<EventType, number>> = {
  [EventType.OrganizationUser_Revoked]: 1,
  [EventType.OrganizationUser_Revoked_TwoFactorNonCompliance]: 2,
  [EventType.OrganizationUser_SelfRevoked]: 3,
};

/** What every revocation leaves, whoever caused it. */
async function expectRevoked(orgId: string, member: SeededMember & { itemId: string }, revisionBefore: string, event: { type: EventType; acting_user_id: string | null; system_user: number | null }) {
  expect(await memberRow(server, member.memberId)).toMatchObject({ status: Status.Revoked, revocation_reason: REASON_OF_EVENT[event.type] });
  expect(await eventsOf(member.memberId)).toEqual([{ ...event, organization_id: orgId, organization_user_id: member.memberId }]);
  expect(await revision(member.userId)).not.toBe(revisionBefore);
  expect(pushes.of(PushType.SyncOrgKeys).map((p) => p.target)).toContainEqual({ user: member.userId });
  expect(await syncedItemIds(member)).not.toContain(member.itemId);
}

/** Lets a revision written now differ from one read before. */
const tick = () => new Promise((r) => setTimeout(r, 5));

describe('revokeMemberships, through each feature that revokes', () => {
  it('a member manager revokes one member (PUT …/users/{id}/revoke): OrganizationUser_Revoked by the manager', async () => {
    const { orgId, owner } = await orgWithOwner(server);
    const member = await memberWithItem(orgId);
    const before = await revision(member.userId);
    await tick();

    const res = await server.request('PUT', `/api/organizations/${orgId}/users/${member.memberId}/revoke`, { token: owner.accessToken });
    expect(res.status, res.text).toBe(200);
    await expectRevoked(orgId, member, before, { type: EventType.OrganizationUser_Revoked, acting_user_id: owner.userId, system_user: null });
  });

  it('a member manager revokes several at once (PUT …/users/revoke): one event each', async () => {
    const { orgId, owner } = await orgWithOwner(server);
    const first = await memberWithItem(orgId);
    const second = await memberWithItem(orgId);
    const before = [await revision(first.userId), await revision(second.userId)] as const;
    await tick();

    const res = await server.request('PUT', `/api/organizations/${orgId}/users/revoke`, { token: owner.accessToken, json: { ids: [first.memberId, second.memberId] } });
    expect(res.status, res.text).toBe(200);
    const event = { type: EventType.OrganizationUser_Revoked, acting_user_id: owner.userId, system_user: null };
    await expectRevoked(orgId, first, before[0], event);
    await expectRevoked(orgId, second, before[1], event);
  });

  it('the public API revokes a member (POST /public/members/{id}/revoke): OrganizationUser_Revoked by the PublicApi system user', async () => {
    const { orgId } = await orgWithOwner(server);
    const { token } = await orgApiToken(server, orgId);
    const member = await memberWithItem(orgId);
    const before = await revision(member.userId);
    await tick();

    const res = await server.request('POST', `/api/public/members/${member.memberId}/revoke`, { token });
    expect(res.status, res.text).toBe(200);
    await expectRevoked(orgId, member, before, { type: EventType.OrganizationUser_Revoked, acting_user_id: null, system_user: EventSystemUser.PublicApi });
  });

  it('turning the Two-step login policy on revokes members without it: OrganizationUser_Revoked_TwoFactorNonCompliance by the admin', async () => {
    const { orgId, owner } = await orgWithOwner(server);
    const member = await memberWithItem(orgId);
    const before = await revision(member.userId);
    await tick();

    const res = await server.request('PUT', `/api/organizations/${orgId}/policies/${TWO_STEP_LOGIN}`, { token: owner.accessToken, json: { enabled: true } });
    expect(res.status, res.text).toBe(200);
    await expectRevoked(orgId, member, before, { type: EventType.OrganizationUser_Revoked_TwoFactorNonCompliance, acting_user_id: owner.userId, system_user: null });
  });

  it('a user turning two-step login off under the policy is revoked: OrganizationUser_Revoked_TwoFactorNonCompliance by TwoFactorDisabled', async () => {
    const { orgId, owner } = await orgWithOwner(server);
    const member = await memberWithItem(orgId);
    await enableAuthenticator(server, member);
    expect((await server.request('PUT', `/api/organizations/${orgId}/policies/${TWO_STEP_LOGIN}`, { token: owner.accessToken, json: { enabled: true } })).status).toBe(200);
    expect((await memberRow(server, member.memberId))?.status).toBe(Status.Confirmed);
    const before = await revision(member.userId);
    pushes.clear();
    await tick();

    const res = await server.request('PUT', '/api/two-factor/disable', { token: member.accessToken, json: { masterPasswordHash: member.account.masterPasswordHash, type: 0 } });
    expect(res.status, res.text).toBe(200);
    await expectRevoked(orgId, member, before, { type: EventType.OrganizationUser_Revoked_TwoFactorNonCompliance, acting_user_id: null, system_user: EventSystemUser.TwoFactorDisabled });
  });

  it('a member declining the data ownership policy revokes themself (PUT …/users/revoke-self): OrganizationUser_SelfRevoked by the member', async () => {
    const { orgId } = await orgWithOwner(server);
    await seedPolicy(server, orgId, DATA_OWNERSHIP);
    const member = await memberWithItem(orgId);
    const before = await revision(member.userId);
    await tick();

    const res = await server.request('PUT', `/api/organizations/${orgId}/users/revoke-self`, { token: member.accessToken });
    expect(res.status, res.text).toBe(200);
    await expectRevoked(orgId, member, before, { type: EventType.OrganizationUser_SelfRevoked, acting_user_id: member.userId, system_user: null });
  });

  it('leaves members it does not revoke as they were', async () => {
    const { orgId, owner } = await orgWithOwner(server);
    const revoked = await memberWithItem(orgId);
    const kept = await memberWithItem(orgId);
    const stranger = await createUser(server);
    const keptBefore = await revision(kept.userId);
    await tick();

    expect((await server.request('PUT', `/api/organizations/${orgId}/users/${revoked.memberId}/revoke`, { token: owner.accessToken })).status).toBe(200);
    expect((await memberRow(server, kept.memberId))?.status).toBe(Status.Confirmed);
    expect(await eventsOf(kept.memberId)).toEqual([]);
    expect(await revision(kept.userId)).toBe(keptBefore);
    expect(await syncedItemIds(kept)).toContain(kept.itemId);
    expect(pushes.of(PushType.SyncOrgKeys).map((p) => p.target)).not.toContainEqual({ user: kept.userId });
    expect(pushes.of(PushType.SyncOrgKeys).map((p) => p.target)).not.toContainEqual({ user: stranger.userId });
  });
});
