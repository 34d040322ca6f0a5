import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memberOf, orgWithOwner } from '../../../test/support/members.js';
import { counting } from '../../../test/support/query-count.js';
import { seedMembership } from '../../../test/support/orgs.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { EventType } from '../../platform/audit/event-type.js';
import { OrganizationUserStatusType as Status } from '../../platform/access/roles.js';
import { profileOrganizationsNew } from './profile-organizations.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server.close());

const now = () => new Date().toISOString();

async function link(userId: string, organizationId: string, externalId = `ext-${randomUUID()}`) {
  await server.database.db.insertInto('sso_users').values({ id: randomUUID(), user_id: userId, organization_id: organizationId, external_id: externalId, creation_date: now() }).execute();
  return externalId;
}

async function configure(organizationId: string, memberDecryptionType: number, enabled: boolean) {
  const data = JSON.stringify({ configType: 1, memberDecryptionType, authority: 'https://idp.example.com', clientId: 'c', clientSecret: 'sealed' });
  await server.database.db.insertInto('sso_configs').values({ organization_id: organizationId, enabled, data, creation_date: now(), revision_date: now() }).execute();
}

const links = (userId: string) => server.database.db.selectFrom('sso_users').select('organization_id').where('user_id', '=', userId).execute();
type ProfileOrg = { id: string; ssoBound: boolean; ssoEnabled: boolean; ssoMemberDecryptionType: number | null; keyConnectorEnabled: boolean };

describe("the profile's and sync's organizations", () => {
  it('say whether the member is linked, whether SSO is on and how members unlock, per organization', async () => {
    const { orgId: tde } = await orgWithOwner(server);
    const { orgId: off } = await orgWithOwner(server);
    const { orgId: plain } = await orgWithOwner(server);
    await configure(tde, 2, true);
    await configure(off, 0, false);
    const member = await memberOf(server, tde);
    await memberOf(server, off, { email: `off-${randomUUID()}@example.com` }).then(async (other) => {
      // Another account's link says nothing about this member.
      await link(other.userId, off);
    });
    for (const org of [off, plain]) {
      await seedMembership(server, { organizationId: org, userId: member.userId, status: Status.Confirmed, key: '4.aGVsbG8=' });
    }
    await link(member.userId, tde);

    const expected = {
      [tde]: { ssoBound: true, ssoEnabled: true, ssoMemberDecryptionType: 2, keyConnectorEnabled: false },
      [off]: { ssoBound: false, ssoEnabled: false, ssoMemberDecryptionType: 0, keyConnectorEnabled: false },
      [plain]: { ssoBound: false, ssoEnabled: false, ssoMemberDecryptionType: null, keyConnectorEnabled: false },
    };
    const profile = await server.request('GET', '/api/accounts/profile', { token: member.accessToken });
    const sync = await server.request('GET', '/api/sync', { token: member.accessToken });
    for (const orgs of [profile.body.organizations, sync.body.profile.organizations] as ProfileOrg[][]) {
      expect(orgs).toHaveLength(3);
      for (const org of orgs) expect(org, org.id).toMatchObject(expected[org.id] ?? {});
    }
  });

  it('are read in one query, however many organizations and links there are', async () => {
    const { orgId } = await orgWithOwner(server);
    const member = await memberOf(server, orgId);
    await configure(orgId, 2, true);
    await link(member.userId, orgId);
    const counted = counting(server.database.db);
    const orgs = await profileOrganizationsNew(counted.db, member.userId);
    expect(orgs.map((o) => o.ssoBound)).toEqual([true]);
    expect(counted.count()).toBe(1);
  });
});

describe('the members list', () => {
  it("shows which members are linked, and a member's external id", async () => {
    const { orgId, owner } = await orgWithOwner(server);
    const linked = await memberOf(server, orgId);
    const unlinked = await memberOf(server, orgId);
    const externalId = await link(linked.userId, orgId);
    const { orgId: elsewhere } = await orgWithOwner(server);
    await link(unlinked.userId, elsewhere);

    const list = await server.request('GET', `/api/organizations/${orgId}/users`, { token: owner.accessToken });
    const bound = new Map((list.body.data as { userId: string; ssoBound: boolean }[]).map((m) => [m.userId, m.ssoBound]));
    expect([bound.get(linked.userId), bound.get(unlinked.userId), bound.get(owner.userId)]).toEqual([true, false, false]);
    const one = await server.request('GET', `/api/organizations/${orgId}/users/${linked.memberId}`, { token: owner.accessToken });
    expect(one.body.ssoExternalId).toBe(externalId);
    const other = await server.request('GET', `/api/organizations/${orgId}/users/${unlinked.memberId}`, { token: owner.accessToken });
    expect(other.body.ssoExternalId).toBeNull();
  });
});

describe('DELETE /accounts/sso/{organizationId}', () => {
  it("removes only the caller's link to that organization and records OrganizationUser_UnlinkedSso", async () => {
    const { orgId } = await orgWithOwner(server);
    const { orgId: second } = await orgWithOwner(server);
    const member = await memberOf(server, orgId);
    const neighbour = await memberOf(server, orgId);
    await link(member.userId, orgId);
    await link(member.userId, second);
    await link(neighbour.userId, orgId);

    const res = await server.request('DELETE', `/api/accounts/sso/${orgId.toUpperCase()}`, { token: member.accessToken });
    expect(res.status).toBe(200);
    expect((await links(member.userId)).map((l) => l.organization_id)).toEqual([second]);
    expect(await links(neighbour.userId)).toHaveLength(1);
    const events = await server.database.db.selectFrom('events').selectAll().where('type', '=', EventType.OrganizationUser_UnlinkedSso).where('organization_id', '=', orgId).execute();
    expect(events).toMatchObject([{ organization_user_id: member.memberId, user_id: member.userId, acting_user_id: member.userId }]);
    const profile = await server.request('GET', '/api/accounts/profile', { token: member.accessToken });
    expect((profile.body.organizations as ProfileOrg[]).find((o) => o.id === orgId)?.ssoBound).toBe(false);
  });

  it("removes a former member's leftover link without an event, and answers 404 with neither link nor membership", async () => {
    const { orgId } = await orgWithOwner(server);
    const former = await memberOf(server, orgId);
    await link(former.userId, orgId);
    await server.database.db.deleteFrom('organization_users').where('id', '=', former.memberId).execute();
    expect((await server.request('DELETE', `/api/accounts/sso/${orgId}`, { token: former.accessToken })).status).toBe(200);
    expect(await links(former.userId)).toEqual([]);
    const events = await server.database.db.selectFrom('events').select('id').where('type', '=', EventType.OrganizationUser_UnlinkedSso).where('organization_id', '=', orgId).execute();
    expect(events).toEqual([]);
    expect((await server.request('DELETE', `/api/accounts/sso/${orgId}`, { token: former.accessToken })).status).toBe(404);
  });
});
