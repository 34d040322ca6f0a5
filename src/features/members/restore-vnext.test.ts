import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ENC } from '../../../test/support/admin.js';
import { memberEvents, memberOf, memberRow, orgWithOwner, seedPolicy } from '../../../test/support/members.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { EventType } from '../../platform/audit/event-type.js';
import { OrganizationUserStatusType as Status, OrganizationUserType as Role } from '../../platform/access/roles.js';
import { PolicyType } from '../policies/policy-type.js';

vi.setConfig({ testTimeout: 120_000 });

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server?.close());

const users = (orgId: string) => `/api/organizations/${orgId}/users`;
const restore = (token: string, orgId: string, id: string, json: unknown) => server.request('PUT', `${users(orgId)}/${id}/restore/vnext`, { token, json });
const statusOf = async (id: string) => (await memberRow(server, id))?.status;

/** The "My Items" collections (type 1) a member is assigned, with their access. */
const myItems = (memberId: string) =>
  server.database.db
    .selectFrom('collections')
    .innerJoin('collection_users', 'collection_users.collection_id', 'collections.id')
    .select(['collections.name', 'collections.organization_id', 'collection_users.read_only', 'collection_users.hide_passwords', 'collection_users.manage'])
    .where('collections.type', '=', 1)
    .where('collection_users.organization_user_id', '=', memberId)
    .execute();

async function orgWithPolicy(enabled = true) {
  const org = await orgWithOwner(server);
  await seedPolicy(server, org.orgId, PolicyType.OrganizationDataOwnership, enabled);
  return org;
}

describe('PUT /organizations/{orgId}/users/{id}/restore/vnext', () => {
  it('restores a member and gives them their own collection where the data ownership policy binds them, once', async () => {
    const { orgId, owner } = await orgWithPolicy();
    const member = await memberOf(server, orgId, { status: Status.Revoked });

    const res = await restore(owner.accessToken, orgId, member.memberId.toUpperCase(), { defaultUserCollectionName: ENC });
    expect(res.status, res.text).toBe(200);
    expect(res.text).toBe('');
    expect(await statusOf(member.memberId)).toBe(Status.Confirmed);
    expect(await myItems(member.memberId)).toEqual([{ name: ENC, organization_id: orgId, read_only: expect.anything(), hide_passwords: expect.anything(), manage: expect.anything() }]);
    const [access] = await myItems(member.memberId);
    expect([Boolean(access?.read_only), Boolean(access?.hide_passwords), Boolean(access?.manage)]).toEqual([false, false, true]);
    expect((await memberEvents(server)).filter((e) => e.organization_user_id === member.memberId)).toEqual([
      { type: EventType.OrganizationUser_Restored, organization_id: orgId, organization_user_id: member.memberId, acting_user_id: owner.userId },
    ]);

    // Revoked and restored again, the member keeps the one collection.
    expect((await server.request('PUT', `${users(orgId)}/${member.memberId}/revoke`, { token: owner.accessToken })).status).toBe(200);
    expect((await restore(owner.accessToken, orgId, member.memberId, { defaultUserCollectionName: ENC })).status).toBe(200);
    expect(await myItems(member.memberId)).toHaveLength(1);

    const again = await restore(owner.accessToken, orgId, member.memberId, { defaultUserCollectionName: ENC });
    expect(again.status).toBe(400);
    expect(again.body.message).toBe('Already active.');
  });

  it('restores without a collection where the policy is off or exempts the member, or no name is sent', async () => {
    const off = await orgWithPolicy(false);
    const on = await orgWithPolicy();
    const cases = [
      { org: off, member: await memberOf(server, off.orgId, { status: Status.Revoked }), body: { defaultUserCollectionName: ENC } },
      { org: on, member: await memberOf(server, on.orgId, { type: Role.Admin, status: Status.Revoked }), body: { defaultUserCollectionName: ENC } },
      { org: on, member: await memberOf(server, on.orgId, { status: Status.Revoked }), body: {} },
      { org: on, member: await memberOf(server, on.orgId, { status: Status.Revoked }), body: { defaultUserCollectionName: null } },
    ];
    for (const { org, member, body } of cases) {
      const res = await restore(org.owner.accessToken, org.orgId, member.memberId, body);
      expect(res.status, res.text).toBe(200);
      expect(await statusOf(member.memberId)).toBe(Status.Confirmed);
      expect(await myItems(member.memberId)).toEqual([]);
    }
  });

  it('refuses a name that is no encrypted string, naming the field, and restores nothing', async () => {
    const { orgId, owner } = await orgWithPolicy();
    const member = await memberOf(server, orgId, { status: Status.Revoked });
    const res = await restore(owner.accessToken, orgId, member.memberId, { defaultUserCollectionName: 'My Items' });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toContain('defaultUserCollectionName');
    expect(await statusOf(member.memberId)).toBe(Status.Revoked);
    expect(await myItems(member.memberId)).toEqual([]);
  });

  it('answers 404 for a member it does not know and 403 to members who do not manage users', async () => {
    const { orgId, owner } = await orgWithPolicy();
    const user = await memberOf(server, orgId);
    const member = await memberOf(server, orgId, { status: Status.Revoked });
    expect((await restore(owner.accessToken, orgId, randomUUID(), { defaultUserCollectionName: ENC })).status).toBe(404);
    expect((await restore(user.accessToken, orgId, member.memberId, { defaultUserCollectionName: ENC })).status).toBe(403);
    expect(await statusOf(member.memberId)).toBe(Status.Revoked);
  });
});

describe('PUT /organizations/{orgId}/users/restore with defaultUserCollectionName', () => {
  it('gives each restored member the policy binds their own collection', async () => {
    const { orgId, owner } = await orgWithPolicy();
    const [first, second] = [await memberOf(server, orgId, { status: Status.Revoked }), await memberOf(server, orgId, { status: Status.Revoked })];
    const res = await server.request('PUT', `${users(orgId)}/restore`, { token: owner.accessToken, json: { ids: [first.memberId, second.memberId], defaultUserCollectionName: ENC } });
    expect(res.status, res.text).toBe(200);
    expect((res.body.data as { error: string }[]).map((r) => r.error)).toEqual(['', '']);
    expect(await myItems(first.memberId)).toHaveLength(1);
    expect(await myItems(second.memberId)).toHaveLength(1);
  });
});

describe('POST /organizations/{orgId}/users/{id}/confirm and the bulk confirm, with a "My Items" name', () => {
  it('give each confirmed member the policy binds their own collection, and no one else', async () => {
    const on = await orgWithPolicy();
    const off = await orgWithPolicy(false);
    const one = await memberOf(server, on.orgId, { status: Status.Accepted });
    const [a, b] = [await memberOf(server, on.orgId, { status: Status.Accepted }), await memberOf(server, on.orgId, { status: Status.Accepted })];
    const admin = await memberOf(server, on.orgId, { type: Role.Admin, status: Status.Accepted });
    const unbound = await memberOf(server, off.orgId, { status: Status.Accepted });
    const confirm = (org: { orgId: string; owner: { accessToken: string } }, memberId: string) =>
      server.request('POST', `${users(org.orgId)}/${memberId}/confirm`, { token: org.owner.accessToken, json: { key: ENC, defaultUserCollectionName: ENC } });

    expect((await confirm(on, one.memberId)).status).toBe(200);
    expect(await myItems(one.memberId)).toHaveLength(1);
    const bulk = await server.request('POST', `${users(on.orgId)}/confirm`, {
      token: on.owner.accessToken,
      json: { keys: [a, b, admin].map((m) => ({ id: m.memberId, key: ENC })), defaultUserCollectionName: ENC },
    });
    expect(bulk.status, bulk.text).toBe(200);
    expect((await myItems(a.memberId)).map((c) => c.name)).toEqual([ENC]);
    expect(await myItems(b.memberId)).toHaveLength(1);
    // Admins are exempt from the policy; where it is off nobody gets one.
    expect(await myItems(admin.memberId)).toEqual([]);
    expect((await confirm(off, unbound.memberId)).status).toBe(200);
    expect(await myItems(unbound.memberId)).toEqual([]);
  });

  it('refuse a name that is not an encrypted string, confirming nobody', async () => {
    const on = await orgWithPolicy();
    const member = await memberOf(server, on.orgId, { status: Status.Accepted });
    const res = await server.request('POST', `${users(on.orgId)}/${member.memberId}/confirm`, { token: on.owner.accessToken, json: { key: ENC, defaultUserCollectionName: 'My Items' } });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toContain('defaultUserCollectionName');
    expect(await statusOf(member.memberId)).toBe(Status.Accepted);
  });
});
