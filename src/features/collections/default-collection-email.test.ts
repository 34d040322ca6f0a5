import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actor, ENC, freshEmail, freshOrgWithOwner, type Actor } from '../../../test/support/admin.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { OrganizationUserType as Role } from '../../platform/access/roles.js';
import { PolicyType } from '../policies/policy-type.js';
import { CollectionType } from './collection-type.js';

// A member's "My Items" collection outlives the member: it becomes a shared collection that
// keeps their email (`defaultUserCollectionEmail`), as on the official server.
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server.close());

/** An organization whose data ownership policy gave two members their own collections. */
async function orgWithMyItems() {
  const { org, owner } = await freshOrgWithOwner(server);
  const leaving = await actor(server, org, freshEmail('leaving'), { type: Role.User });
  const staying = await actor(server, org, freshEmail('staying'), { type: Role.User });
  const on = await server.request('PUT', `/api/organizations/${org}/policies/${PolicyType.OrganizationDataOwnership}`, {
    token: owner.token,
    json: { policy: { enabled: true }, metadata: { defaultUserCollectionName: ENC } },
  });
  expect(on.status, on.text).toBe(200);
  return { org, owner, leaving, staying };
}

async function collectionsAsOwner(org: string, owner: Actor) {
  const res = await server.request('GET', `/api/organizations/${org}/collections/details`, { token: owner.token });
  expect(res.status, res.text).toBe(200);
  return res.body.data as { id: string; type: number; defaultUserCollectionEmail: string | null; users: { id: string }[] }[];
}

describe('a departing member\'s "My Items" collection', () => {
  it('becomes shared with the member\'s email when they are removed; the others stay theirs', async () => {
    const { org, owner, leaving, staying } = await orgWithMyItems();
    const before = await collectionsAsOwner(org, owner);
    const mine = before.find((c) => c.users.some((u) => u.id === leaving.memberId));
    expect(mine).toMatchObject({ type: CollectionType.DefaultUserCollection, defaultUserCollectionEmail: null });

    const removed = await server.request('DELETE', `/api/organizations/${org}/users/${leaving.memberId}`, { token: owner.token });
    expect(removed.status, removed.text).toBe(200);
    const after = await collectionsAsOwner(org, owner);
    const email = (await server.database.db.selectFrom('users').select('email').where('id', '=', leaving.userId).executeTakeFirstOrThrow()).email;
    expect(after.find((c) => c.id === mine?.id)).toMatchObject({ type: CollectionType.SharedCollection, defaultUserCollectionEmail: email, users: [] });
    expect(after.find((c) => c.users.some((u) => u.id === staying.memberId))).toMatchObject({ type: CollectionType.DefaultUserCollection, defaultUserCollectionEmail: null });
    const single = await server.request('GET', `/api/organizations/${org}/collections/${mine?.id ?? ''}`, { token: owner.token });
    expect(single.body).toMatchObject({ object: 'collection', type: CollectionType.SharedCollection, defaultUserCollectionEmail: email });
  });

  it('does the same when the member deletes their account, and when they leave', async () => {
    const { org, owner, leaving, staying } = await orgWithMyItems();
    const ids = new Map((await collectionsAsOwner(org, owner)).map((c) => [c.users[0]?.id, c.id]));
    const deleted = await server.request('DELETE', '/api/accounts', { token: leaving.token, json: { masterPasswordHash: leaving.account.masterPasswordHash } });
    expect(deleted.status, deleted.text).toBe(200);
    const left = await server.request('POST', `/api/organizations/${org}/leave`, { token: staying.token });
    expect(left.status, left.text).toBe(200);
    const after = new Map((await collectionsAsOwner(org, owner)).map((c) => [c.id, c]));
    for (const who of [leaving, staying]) {
      const email = who === leaving ? null : (await server.database.db.selectFrom('users').select('email').where('id', '=', who.userId).executeTakeFirstOrThrow()).email;
      const collection = after.get(ids.get(who.memberId) ?? '');
      expect(collection?.type).toBe(CollectionType.SharedCollection);
      if (email) expect(collection?.defaultUserCollectionEmail).toBe(email);
      else expect(collection?.defaultUserCollectionEmail).toMatch(/^leaving-.*@example\.com$/);
    }
  });
});
