import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actor, ENC, eventsOf, freshEmail, freshOrgWithOwner, seedTarget } from '../../../test/support/admin.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { EventType } from '../../platform/audit/event-type.js';
import { OrganizationUserStatusType as Status, OrganizationUserType as Role } from '../../platform/access/roles.js';
import { CollectionType } from '../collections/collection-type.js';
import { PolicyType } from './policy-type.js';

// PUT /organizations/{orgId}/policies/{type}: the body of clients 2026.5 and later
// ({policy, metadata}) beside the older flat one, and what metadata does for data ownership.
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server.close());

const put = (token: string, org: string, type: number, json: unknown) => server.request('PUT', `/api/organizations/${org}/policies/${type}`, { token, json });
const NAME = ENC.replace('2.A', '2.B');

/** The "My Items" collections of the organization, by the member each belongs to. */
async function defaultCollections(org: string) {
  const rows = await server.database.db
    .selectFrom('collections')
    .innerJoin('collection_users', 'collection_users.collection_id', 'collections.id')
    .select(['collections.id', 'collections.name', 'collection_users.organization_user_id as member', 'collection_users.manage', 'collection_users.read_only'])
    .where('collections.organization_id', '=', org)
    .where('collections.type', '=', CollectionType.DefaultUserCollection)
    .execute();
  return new Map(rows.map((r) => [r.member, r]));
}

describe('the save body', () => {
  it('takes {policy: {enabled, data}, metadata} as it takes the flat body', async () => {
    const { org, owner } = await freshOrgWithOwner(server);
    const nested = await put(owner.token, org, PolicyType.MasterPassword, { policy: { enabled: true, data: { minLength: 14, requireUpper: true } }, metadata: {} });
    expect(nested.status, nested.text).toBe(200);
    expect(nested.body).toMatchObject({ object: 'policy', organizationId: org, type: PolicyType.MasterPassword, enabled: true, data: { minLength: 14, requireUpper: true } });
    const flat = await put(owner.token, org, PolicyType.MasterPassword, { enabled: false, data: { minLength: 20 } });
    expect(flat.body).toMatchObject({ id: nested.body.id, enabled: false, data: { minLength: 20 } });
    // `policy` wins over flat fields sent beside it, as the official server reads only `policy`.
    const both = await put(owner.token, org, PolicyType.MasterPassword, { enabled: false, policy: { enabled: true, data: null }, metadata: null });
    expect(both.body).toMatchObject({ enabled: true, data: null });
  });

  it.each([
    ['no policy and no enabled', {}, 'policy'],
    ['a policy without enabled', { policy: { data: null } }, 'policy.enabled'],
    ['enabled of the wrong type', { policy: { enabled: 'yes' } }, 'policy.enabled'],
    ['data that is not an object', { policy: { enabled: true, data: [1] } }, 'policy.data'],
    ['a data field out of range', { policy: { enabled: true, data: { minLength: 3 } } }, 'policy.data.minLength'],
    ['metadata that is not an object', { policy: { enabled: true }, metadata: 5 }, 'metadata'],
    ['a collection name that is not encrypted', { policy: { enabled: true }, metadata: { defaultUserCollectionName: 'My Items' } }, 'metadata.defaultUserCollectionName'],
    ['a flat enabled of the wrong type', { enabled: 1 }, 'enabled'],
    ['a flat body without enabled', { data: null }, 'enabled'],
  ])('refuses %s with a 400 naming the field, writing nothing', async (_name, body, field) => {
    const { org, owner } = await freshOrgWithOwner(server);
    const res = await put(owner.token, org, PolicyType.MasterPassword, body);
    expect(res.status, res.text).toBe(400);
    // A nullable object's other branch may add its parent's name beside the field.
    expect(Object.keys(res.body.validationErrors)).toContain(field);
    expect(await server.database.db.selectFrom('policies').select('id').where('organization_id', '=', org).execute()).toEqual([]);
    expect(await eventsOf(server, EventType.Policy_Updated, org)).toEqual([]);
  });

  it('names the nested field when Send controls get domains without "specific people"', async () => {
    const { org, owner } = await freshOrgWithOwner(server);
    const res = await put(owner.token, org, PolicyType.SendControls, { policy: { enabled: true, data: { allowedDomains: 'x.com', whoCanAccess: 1 } } });
    expect(res.status, res.text).toBe(400);
    expect(Object.keys(res.body.validationErrors)).toEqual(['policy.data.allowedDomains']);
  });
});

describe('turning data ownership on with a collection name', () => {
  it('gives each confirmed member it binds their own "My Items", once, and records the policy change', async () => {
    const { org, owner } = await freshOrgWithOwner(server);
    const user = await actor(server, org, freshEmail('user'), { type: Role.User });
    const custom = await seedTarget(server, org, { type: Role.Custom });
    const admin = await seedTarget(server, org, { type: Role.Admin });
    const accepted = await seedTarget(server, org, { status: Status.Accepted });
    const invited = await seedTarget(server, org, { status: Status.Invited });
    const revoked = await seedTarget(server, org, { status: Status.Revoked });

    const res = await put(owner.token, org, PolicyType.OrganizationDataOwnership, { policy: { enabled: true, data: null }, metadata: { defaultUserCollectionName: NAME } });
    expect(res.status, res.text).toBe(200);
    const given = await defaultCollections(org);
    expect([...given.keys()].sort()).toEqual([user.memberId, custom].sort());
    for (const row of given.values()) expect(row).toMatchObject({ name: NAME });
    expect(Boolean(given.get(user.memberId)?.manage)).toBe(true);
    expect(Boolean(given.get(user.memberId)?.read_only)).toBe(false);
    for (const left of [owner.memberId, admin, accepted, invited, revoked]) expect(given.has(left)).toBe(false);
    expect(await eventsOf(server, EventType.Policy_Updated, org)).toHaveLength(1);

    // The member sees it in sync as a collection of type 1 that they manage.
    const sync = await server.request('GET', '/api/sync', { token: user.token });
    expect(sync.body.collections).toEqual([expect.objectContaining({ id: given.get(user.memberId)?.id, type: CollectionType.DefaultUserCollection, defaultUserCollectionEmail: null, manage: true })]);

    // Saving it again while on, or off and on again, gives nobody a second one; a member
    // confirmed since gets theirs when it is turned on again.
    await put(owner.token, org, PolicyType.OrganizationDataOwnership, { policy: { enabled: true }, metadata: { defaultUserCollectionName: NAME } });
    await put(owner.token, org, PolicyType.OrganizationDataOwnership, { policy: { enabled: false } });
    const later = await seedTarget(server, org, { type: Role.User });
    await put(owner.token, org, PolicyType.OrganizationDataOwnership, { policy: { enabled: true }, metadata: { defaultUserCollectionName: NAME } });
    const after = await defaultCollections(org);
    expect([...after.keys()].sort()).toEqual([user.memberId, custom, later].sort());
    expect(after.get(user.memberId)?.id).toBe(given.get(user.memberId)?.id);
  });

  it('does the same at the /vnext path web vaults of the putPolicyVNext period send to', async () => {
    const { org, owner } = await freshOrgWithOwner(server);
    const member = await seedTarget(server, org, { type: Role.User });
    const res = await server.request('PUT', `/api/organizations/${org}/policies/${PolicyType.OrganizationDataOwnership}/vnext`, {
      token: owner.token,
      json: { policy: { enabled: true, data: null }, metadata: { defaultUserCollectionName: NAME } },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ object: 'policy', organizationId: org, type: PolicyType.OrganizationDataOwnership, enabled: true });
    const given = await defaultCollections(org);
    expect([...given.keys()]).toEqual([member]);
    expect(given.get(member)).toMatchObject({ name: NAME });
    expect(await eventsOf(server, EventType.Policy_Updated, org)).toHaveLength(1);
  });

  it('gives none without a name, with the flat body, or for another policy type', async () => {
    const { org, owner } = await freshOrgWithOwner(server);
    await seedTarget(server, org, { type: Role.User });
    expect((await put(owner.token, org, PolicyType.OrganizationDataOwnership, { policy: { enabled: true }, metadata: { defaultUserCollectionName: null } })).status).toBe(200);
    await put(owner.token, org, PolicyType.OrganizationDataOwnership, { policy: { enabled: false } });
    expect((await put(owner.token, org, PolicyType.OrganizationDataOwnership, { enabled: true })).status).toBe(200);
    expect((await put(owner.token, org, PolicyType.DisableSend, { policy: { enabled: true }, metadata: { defaultUserCollectionName: NAME } })).status).toBe(200);
    expect((await defaultCollections(org)).size).toBe(0);
  });
});
