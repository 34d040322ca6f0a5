import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KyselyPlugin } from 'kysely';
import { actor, seedCollection, seedGroup, type Actor } from '../../../test/support/admin.js';
import { seedOrgItem } from '../../../test/support/org-items.js';
import { seedMembership, seedOrganization } from '../../../test/support/orgs.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { ciphersOf, schemaErrors, type CipherJson } from '../../../test/support/vault.js';
import { OrganizationUserStatusType, OrganizationUserType } from '../organizations/roles.js';
import { createSyncService } from './sync.service.js';
import { SyncResponse } from './sync.schemas.js';

let server: TestServer;
let org: string;
let owner: Actor;
let member: Actor;
const c = {} as Record<'readOnly' | 'hidden' | 'managed' | 'unassigned', string>;
const item = {} as Record<'readOnly' | 'hidden' | 'managed' | 'both' | 'unassigned' | 'nowhere', string>;

const CLIENT = { 'bitwarden-client-version': '2026.9.0' };
interface SyncBody {
  profile: { organizations: { id: string }[] };
  collections: { id: string }[];
  ciphers: CipherJson[];
}
const sync = async (who: Actor): Promise<SyncBody> => {
  const res = await server.request('GET', '/api/sync', { token: who.token, headers: CLIENT });
  expect(res.status, res.text).toBe(200);
  return res.body as SyncBody;
};
const byId = (body: unknown) => new Map(ciphersOf(body).map((x: CipherJson) => [x.id, x as CipherJson & Record<string, unknown>]));

beforeAll(async () => {
  server = await startTestServer();
  org = await seedOrganization(server, { name: 'Acme' });
  owner = await actor(server, org, 'owner@example.com', { type: OrganizationUserType.Owner });
  member = await actor(server, org, 'member@example.com');
  const group = await seedGroup(server, org, [member.memberId]);
  c.readOnly = await seedCollection(server, org, { users: [[member.memberId, { readOnly: true }]] });
  c.hidden = await seedCollection(server, org, { groups: [[group, { hidePasswords: true }]] });
  c.managed = await seedCollection(server, org, { users: [[member.memberId, { manage: true }]] });
  c.unassigned = await seedCollection(server, org);
  item.readOnly = await seedOrgItem(server, org, [c.readOnly]);
  item.hidden = await seedOrgItem(server, org, [c.hidden]);
  item.managed = await seedOrgItem(server, org, [c.managed]);
  item.both = await seedOrgItem(server, org, [c.readOnly, c.hidden, c.unassigned]);
  item.unassigned = await seedOrgItem(server, org, [c.unassigned]);
  item.nowhere = await seedOrgItem(server, org);
});
afterAll(async () => server?.close());

describe('sync with organizations', () => {
  it('returns the organizations, collections and the items reached through them with the right rights', async () => {
    const body = await sync(member);
    expect(schemaErrors(SyncResponse, body)).toEqual([]);
    expect(body.profile.organizations.map((o) => o.id)).toEqual([org]);
    expect(body.collections.map((x) => x.id).sort()).toEqual([c.readOnly, c.hidden, c.managed].sort());
    const items = byId(body);
    expect([...items.keys()].sort()).toEqual([item.readOnly, item.hidden, item.managed, item.both].sort());
    expect(items.get(item.readOnly)).toMatchObject({
      organizationId: org,
      edit: false,
      viewPassword: true,
      permissions: { delete: false, restore: false },
      collectionIds: [c.readOnly],
      organizationUseTotp: true,
    });
    expect(items.get(item.hidden)).toMatchObject({ edit: true, viewPassword: false, permissions: { delete: true, restore: true }, collectionIds: [c.hidden] });
    expect(items.get(item.managed)).toMatchObject({ edit: true, viewPassword: true, permissions: { delete: true, restore: true } });
    // Highest access wins; only the collections the member sees are listed.
    expect(items.get(item.both)).toMatchObject({ edit: true, viewPassword: true, collectionIds: [c.readOnly, c.hidden].sort() });
  });

  it('lets only managers delete when the organization limits item deletion', async () => {
    await server.database.db.updateTable('organizations').set({ limit_item_deletion: true }).where('id', '=', org).execute();
    try {
      const items = byId(await sync(member));
      expect(items.get(item.hidden)).toMatchObject({ edit: true, permissions: { delete: false, restore: false } });
      expect(items.get(item.managed)).toMatchObject({ permissions: { delete: true, restore: true } });
    } finally {
      await server.database.db.updateTable('organizations').set({ limit_item_deletion: false }).where('id', '=', org).execute();
    }
  });

  it('gives an owner without collections no organization items (unassigned ones are for the admin views)', async () => {
    const body = await sync(owner);
    expect(body.profile.organizations).toHaveLength(1);
    expect(ciphersOf(body)).toEqual([]);
  });

  it('gives an owner with access to all collections every item in a collection, but not unassigned ones', async () => {
    const admin = await actor(server, org, 'all@example.com', { type: OrganizationUserType.Admin });
    await server.database.db.updateTable('organization_users').set({ access_all: true }).where('id', '=', admin.memberId).execute();
    const items = byId(await sync(admin));
    expect([...items.keys()].sort()).toEqual([item.readOnly, item.hidden, item.managed, item.both, item.unassigned].sort());
    expect(items.get(item.both)?.collectionIds).toEqual([c.readOnly, c.hidden, c.unassigned].sort());
  });

  it('gives invited, accepted, revoked and other-organization members nothing', async () => {
    for (const [email, status] of [
      ['invited@example.com', OrganizationUserStatusType.Invited],
      ['accepted@example.com', OrganizationUserStatusType.Accepted],
      ['revoked@example.com', OrganizationUserStatusType.Revoked],
    ] as const) {
      const who = await actor(server, org, email, { status });
      await server.database.db.insertInto('collection_users').values({ collection_id: c.readOnly, organization_user_id: who.memberId, read_only: false, hide_passwords: false, manage: false }).execute();
      const body = await sync(who);
      expect(body.profile.organizations, email).toEqual([]);
      expect(body.collections, email).toEqual([]);
      expect(ciphersOf(body), email).toEqual([]);
    }
    const other = await seedOrganization(server, { name: 'Other' });
    const stranger = await actor(server, other, 'stranger@example.com');
    await seedCollection(server, other, { users: [[stranger.memberId]] });
    expect(ciphersOf(await sync(stranger))).toEqual([]);
  });

  it('runs the same number of queries for a small and an organization-heavy vault', async () => {
    let count = 0;
    const plugin: KyselyPlugin = {
      transformQuery: (args) => {
        count++;
        return args.node;
      },
      transformResult: async (args) => args.result,
    };
    const counted = () => {
      count = 0;
      return createSyncService({ db: server.database.db.withPlugin(plugin) });
    };
    const small = await actor(server, org, 'small@example.com');
    await seedCollection(server, org, { users: [[small.memberId]] });
    const heavy = await actor(server, org, 'heavy@example.com');
    const heavyGroup = await seedGroup(server, org, [heavy.memberId]);
    for (let o = 0; o < 3; o++) {
      const other = o === 0 ? org : await seedOrganization(server, { name: `Org ${o}` });
      const membership = o === 0 ? heavy.memberId : await seedMembership(server, { organizationId: other, userId: heavy.userId });
      for (let k = 0; k < 4; k++) {
        const col = await seedCollection(server, other, o === 0 ? { groups: [[heavyGroup, { readOnly: k % 2 === 0 }]] } : { users: [[membership]] });
        for (let n = 0; n < 10; n++) await seedOrgItem(server, other, [col]);
      }
    }
    const a = await counted().load(small.userId);
    const smallCount = count;
    const b = await counted().load(heavy.userId);
    expect(a.ciphers).toHaveLength(0);
    expect(b.ciphers).toHaveLength(120);
    expect(b.organizations).toHaveLength(3);
    expect(count).toBe(smallCount);
  });
});
