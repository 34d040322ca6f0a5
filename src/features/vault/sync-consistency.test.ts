import fc from 'fast-check';
import { sql, type KyselyPlugin, type UnknownRow } from 'kysely';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actor, ENC, seedCollection, seedGroup, type Actor } from '../../../test/support/admin.js';
import { seedAccount } from '../../../test/support/accounts.js';
import { encryptText, generateSymmetricKey } from '../../../test/support/bw-crypto.js';
import { seedOrganization } from '../../../test/support/orgs.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { cipherBody } from '../../../test/support/vault.js';
import { apiBaseUrl } from './attachment-data.js';
import { OrganizationUserType } from '../../platform/access/roles.js';
import { touchVault } from './revisions.js';
import { createSyncCache } from './sync-cache.js';
import { createSyncService } from './sync.service.js';
import { isSection } from './sync-vault.js';
import { rowChange } from './ciphers.repository.js';
import { syncBody, syncBytes, type SyncData } from './sync.schemas.js';
import { CipherType } from './ciphers.schemas.js';
import { NO_CLIENT, type UserCaller } from '../../http/request-context.js';

/**
 * Sync answers from its caches (whole sections and each item's encoded shared part) must be
 * exactly what a fresh build without any cache gives, for every member whatever their rights,
 * after every kind of change. Each step below syncs everyone through HTTP (which fills and then
 * reuses the server's caches), makes one change, and compares everyone's next sync with an
 * uncached build (SYNC_CACHE_MEGABYTES=0 reads and encodes every item in one pass).
 */

let server: TestServer;
let org: string;
let owner: Actor;
let editor: Actor;
let reader: Actor;
let hider: Actor;
let manager: Actor;
let everyone: Actor[];
/** An account in no organization: its vault is served from the whole-section cache (sync-cache.ts). */
let solo: Actor;
const c = {} as Record<'shared' | 'readOnly' | 'managed' | 'spare', string>;
let group: string;
const orgKey = generateSymmetricKey();
const CLIENT = { 'bitwarden-client-version': '2026.9.0' };
/** The long walks below sync five members after each of dozens of changes. */
const LONG = 120_000;

const ok = async (who: Actor, method: string, path: string, json?: unknown) => {
  const res = await server.request(method, `/api${path}`, { token: who.token, headers: CLIENT, ...(json === undefined ? {} : { json }) });
  expect(res.status, `${method} ${path}: ${res.text}`).toBeLessThan(300);
  return res.body as { id: string };
};

type SyncJson = { ciphers: { id: string }[] } & Record<string, unknown>;
const normalized = (body: SyncJson) => ({ ...body, ciphers: [...body.ciphers].sort((a, b) => a.id.localeCompare(b.id)) });

async function cachedSync(who: Actor): Promise<SyncJson> {
  const res = await server.request('GET', '/api/sync', { token: who.token, headers: CLIENT });
  expect(res.status, res.text).toBe(200);
  return res.body as SyncJson;
}

/** A sync service of its own over the server's database: a cache of `cacheBytes`, through `plugin` when given. */
function serviceWith(cacheBytes: number, options: { plugin?: KyselyPlugin; listingPage?: number } = {}) {
  const db = options.plugin ? server.database.db.withPlugin(options.plugin) : server.database.db;
  return createSyncService({ db, engine: server.database.engine, apiBase: apiBaseUrl(server.config), cache: createSyncCache(cacheBytes), ...(options.listingPage ? { listingPage: options.listingPage } : {}) });
}

/** `data` as the sync body a client reads. */
const bodyOf = async (data: SyncData) => JSON.parse((await syncBytes(syncBody(data, { excludeDomains: false }))).toString()) as SyncJson;

async function uncachedSync(who: Actor, newestType: CipherType = CipherType.Passport): Promise<SyncJson> {
  return bodyOf(await serviceWith(0).load(asCaller(who.userId), { newestType }));
}

/** Everyone's sync, through the server's caches, equals an uncached build; answers the item ids each sees. */
async function expectExact(): Promise<Map<Actor, string[]>> {
  const seen = new Map<Actor, string[]>();
  for (const who of [...everyone, solo]) {
    const cached = normalized(await cachedSync(who));
    expect(cached).toEqual(normalized(await uncachedSync(who)));
    seen.set(
      who,
      cached.ciphers.map((x) => x.id),
    );
  }
  return seen;
}

/**
 * A plugin that records the listings sync takes of a vault with organization collections (the
 * personal items by version, the reached organization items' ids, the organization items by
 * version: rows without contents, told apart by their columns), then, told to replay some of
 * them, serves those recorded rows instead: as if what changed since had landed after the
 * listing and before the read of the items.
 */
function recordedListings() {
  type Kind = 'personal' | 'ids' | 'organization';
  const recorded = new Map<Kind, UnknownRow[]>();
  let replayed = new Set<Kind>();
  const kindOf = (row: object | undefined): Kind | undefined => {
    if (!row || 'data' in row) return undefined;
    if ('version' in row) return 'collection_id' in row ? 'organization' : 'personal';
    return Object.keys(row).sort().join() === 'collection_id,id,organization_id' ? 'ids' : undefined;
  };
  const plugin: KyselyPlugin = {
    transformQuery: (args) => args.node,
    transformResult: async (args) => {
      const kind = kindOf(args.result.rows[0]);
      if (!kind) return args.result;
      if (!replayed.has(kind)) recorded.set(kind, args.result.rows);
      return replayed.has(kind) ? { ...args.result, rows: recorded.get(kind) ?? args.result.rows } : args.result;
    },
  };
  return { plugin, replay: (kinds: Kind[]) => (replayed = new Set(kinds)), recorded };
}

const personalItem = async (who: Actor) => ok(who, 'POST', '/ciphers', cipherBody('login', who.account.userKey));
const orgItem = async (who: Actor, collectionIds: string[]) =>
  ok(who, 'POST', '/ciphers/create', { cipher: cipherBody('login', orgKey, { organizationId: org }), collectionIds });

beforeAll(async () => {
  server = await startTestServer();
  org = await seedOrganization(server, { name: 'Acme' });
  owner = await actor(server, org, 'owner@example.com', { type: OrganizationUserType.Owner });
  editor = await actor(server, org, 'editor@example.com');
  reader = await actor(server, org, 'reader@example.com');
  hider = await actor(server, org, 'hider@example.com');
  manager = await actor(server, org, 'manager@example.com');
  everyone = [owner, editor, reader, hider, manager];
  const alone = await seedAccount(server, { email: 'solo@example.com' });
  solo = { userId: alone.userId, token: alone.accessToken, memberId: '', account: alone.account };
  group = await seedGroup(server, org, [hider.memberId]);
  const byOwner: [string, { manage: boolean }] = [owner.memberId, { manage: true }];
  c.shared = await seedCollection(server, org, { users: [byOwner, [editor.memberId], [reader.memberId, { readOnly: true }], [manager.memberId, { manage: true }]], groups: [[group, { hidePasswords: true }]] });
  c.readOnly = await seedCollection(server, org, { users: [byOwner, [editor.memberId, { readOnly: true }], [reader.memberId, { readOnly: true }]] });
  c.managed = await seedCollection(server, org, { users: [byOwner, [manager.memberId, { manage: true }], [editor.memberId]] });
  c.spare = await seedCollection(server, org, { users: [byOwner] });
});
afterAll(async () => server?.close());

/** The user as a sync service's caller (no client: the service reads only who it is). */
const asCaller = (userId: string): UserCaller => ({ userId, client: NO_CLIENT, log: server.app.log });

describe('sync from its caches', () => {
  it('answers exactly the uncached build after every kind of change, for the owner and members with different rights', async () => {
    const mine = await personalItem(editor);
    const other = await personalItem(editor);
    const shared = await orgItem(owner, [c.shared]);
    const inTwo = await orgItem(owner, [c.shared, c.readOnly]);
    const managed = await orgItem(owner, [c.managed]);
    const folder = await ok(editor, 'POST', '/folders', { name: encryptText('F', editor.account.userKey) });
    const readerFolder = await ok(reader, 'POST', '/folders', { name: encryptText('R', reader.account.userKey) });
    await expectExact();

    const steps: [string, () => Promise<unknown>][] = [
      ['edit a personal item', () => ok(editor, 'PUT', `/ciphers/${mine.id}`, cipherBody('card', editor.account.userKey))],
      ['edit an organization item', () => ok(editor, 'PUT', `/ciphers/${shared.id}`, cipherBody('secureNote', orgKey, { organizationId: org }))],
      ['move items into a folder', () => ok(editor, 'PUT', '/ciphers/move', { ids: [mine.id, shared.id], folderId: folder.id })],
      ['file an organization item in a reader folder', () => ok(reader, 'PUT', `/ciphers/${inTwo.id}/partial`, { folderId: readerFolder.id, favorite: false })],
      ['mark a favorite', () => ok(reader, 'PUT', `/ciphers/${shared.id}/partial`, { folderId: null, favorite: true })],
      ['archive', () => ok(editor, 'PUT', `/ciphers/${shared.id}/archive`)],
      ['unarchive', () => ok(editor, 'PUT', `/ciphers/${shared.id}/unarchive`)],
      ['trash an organization item', () => ok(manager, 'PUT', `/ciphers/${managed.id}/delete`)],
      ['restore it', () => ok(manager, 'PUT', `/ciphers/${managed.id}/restore`)],
      ['trash a personal item', () => ok(editor, 'PUT', `/ciphers/${other.id}/delete`)],
      ['share a personal item', () => ok(editor, 'PUT', `/ciphers/${mine.id}/share`, { cipher: cipherBody('login', orgKey, { organizationId: org }), collectionIds: [c.shared] })],
      ['change the collections of an item', () => ok(owner, 'PUT', `/ciphers/${shared.id}/collections_v2`, { collectionIds: [c.shared, c.managed] })],
      ['give a collection to another member read-only', () => ok(owner, 'PUT', `/organizations/${org}/collections/${c.spare}/users`, [{ id: hider.memberId, readOnly: true }])],
      ['put an item into that collection', () => ok(owner, 'PUT', `/ciphers/${managed.id}/collections_v2`, { collectionIds: [c.managed, c.spare] })],
      ['give a group a collection', () => ok(owner, 'PUT', `/organizations/${org}/collections/${c.managed}`, { name: ENC, groups: [{ id: group, manage: true }], users: [{ id: manager.memberId, manage: true }] })],
      ['take a member out of the group', () => ok(owner, 'PUT', `/organizations/${org}/groups/${group}/users`, [])],
      ['make a reader an editor', () => ok(owner, 'PUT', `/organizations/${org}/users/${reader.memberId}`, { type: OrganizationUserType.User, collections: [{ id: c.shared }], groups: [] })],
      ['make an editor a manager', () => ok(owner, 'PUT', `/organizations/${org}/users/${editor.memberId}`, { type: OrganizationUserType.User, collections: [{ id: c.shared, manage: true }], groups: [] })],
      ['make a manager read-only', () => ok(owner, 'PUT', `/organizations/${org}/users/${manager.memberId}`, { type: OrganizationUserType.User, collections: [{ id: c.managed, readOnly: true }], groups: [] })],
      ['make a member an admin', () => ok(owner, 'PUT', `/organizations/${org}/users/${hider.memberId}`, { type: OrganizationUserType.Admin, collections: [], groups: [] })],
      ['limit item deletion to managers', () => server.database.db.updateTable('organizations').set({ limit_item_deletion: true, use_totp: false }).where('id', '=', org).execute()],
      ['delete an item for good', () => ok(owner, 'DELETE', `/ciphers/${inTwo.id}`)],
      ['create items', () => Promise.all([personalItem(reader), orgItem(owner, [c.readOnly])])],
      // Organization changes that move no vault revision of the members who see them: each
      // member's section is patched from the stamps of migration 0021.
      ['another member edits an organization item', () => ok(owner, 'PUT', `/ciphers/${shared.id}`, cipherBody('card', orgKey, { organizationId: org }))],
      ['take an item out of the collections of some members', () => ok(owner, 'PUT', `/ciphers/${shared.id}/collections_v2`, { collectionIds: [c.readOnly] })],
      ['put it back', () => ok(owner, 'PUT', `/ciphers/${shared.id}/collections_v2`, { collectionIds: [c.shared, c.readOnly] })],
      ['archive an organization item for one member', () => ok(reader, 'PUT', `/ciphers/${shared.id}/archive`)],
      ['mark it a favorite for another', () => ok(editor, 'PUT', `/ciphers/${shared.id}/partial`, { folderId: null, favorite: true })],
      ['trash an item another member has filed', () => ok(owner, 'PUT', `/ciphers/${shared.id}/delete`)],
      ['restore it as its manager', () => ok(owner, 'PUT', `/ciphers/${shared.id}/restore`)],
      ['share a personal item into a collection', async () => ok(editor, 'PUT', `/ciphers/${(await personalItem(editor)).id}/share`, { cipher: cipherBody('login', orgKey, { organizationId: org }), collectionIds: [c.shared] })],
      ['make a member read-only on a collection', () => ok(owner, 'PUT', `/organizations/${org}/collections/${c.shared}/users`, [{ id: editor.memberId, readOnly: true }, { id: reader.memberId, hidePasswords: true }, { id: manager.memberId, manage: true }])],
      ['put a member back in the group', () => ok(owner, 'PUT', `/organizations/${org}/groups/${group}/users`, [hider.memberId])],
      ['take the group off a collection', () => ok(owner, 'PUT', `/organizations/${org}/collections/${c.shared}`, { name: ENC, groups: [], users: [{ id: owner.memberId, manage: true }, { id: manager.memberId, manage: true }, { id: editor.memberId }] })],
      ['delete for good an item several members see', async () => ok(owner, 'DELETE', `/ciphers/${(await orgItem(owner, [c.shared, c.readOnly])).id}`)],
      ['delete one and create another between syncs', async () => {
        await ok(owner, 'DELETE', `/ciphers/${(await orgItem(owner, [c.shared])).id}`);
        await orgItem(owner, [c.shared]);
      }],
      // A collection deleted stamps none of its items: those who reached it get a new section key.
      ['delete a collection holding items that other collections hold too', async () => {
        const doomed = await seedCollection(server, org, { users: [[owner.memberId, { manage: true }], [editor.memberId], [reader.memberId, { readOnly: true }]] });
        await ok(owner, 'PUT', `/ciphers/${shared.id}/collections_v2`, { collectionIds: [c.shared, c.readOnly, doomed] });
        const only = await orgItem(owner, [doomed]);
        await expectExact();
        await ok(owner, 'DELETE', `/organizations/${org}/collections/${doomed}`);
        return only;
      }],
      // The same made elsewhere (another instance, another release), seen only through the database.
      // (By now the owner reaches c.readOnly, and not the collections that hold `managed`.)
      ['an organization item assigned to a collection by hand', () => server.database.db.insertInto('collection_ciphers').values({ collection_id: c.readOnly, cipher_id: managed.id }).execute()],
      ['and taken out by hand', () => server.database.db.deleteFrom('collection_ciphers').where('collection_id', '=', c.readOnly).where('cipher_id', '=', managed.id).execute()],
      ['a member\'s settings of an organization item written by hand, no revision moved', () =>
        server.database.db.updateTable('cipher_user_settings').set({ favorite: false, archived_date: null }).where('cipher_id', '=', shared.id).execute()],
      ['an organization item deleted by hand, no revision moved', async () => {
        const gone = await orgItem(owner, [c.shared]);
        await expectExact();
        await server.database.db.deleteFrom('ciphers').where('id', '=', gone.id).execute();
      }],
      // An older release (migration 0020's code) stamps an organization item's write with 1.
      ['an organization item written by an older release', () =>
        server.database.db.updateTable('ciphers').set({ reprompt: 1, revision_date: new Date(Date.now() + 5000).toISOString(), version: sql`version + 1`, change: 1 }).where('id', '=', shared.id).execute()],
      ['an organization\'s TOTP flag changed by hand', () => server.database.db.updateTable('organizations').set({ use_totp: true }).where('id', '=', org).execute()],
    ];
    for (const [name, change] of steps) {
      await expect(change(), name).resolves.not.toThrow();
      await expect(expectExact(), name).resolves.toBeDefined();
    }
  }, LONG);

  it('never serves an item changed by another instance, which reaches this one only through the database', async () => {
    const item = await orgItem(owner, [c.shared]);
    const personal = await personalItem(owner);
    const before = await expectExact();
    expect(before.get(editor)).toContain(item.id);
    const db = server.database.db;
    // No revision date moves here: the item's version (moved by the database) is all that tells.
    const [row] = await db.selectFrom('ciphers').select(['data', 'revision_date']).where('id', '=', item.id).execute();
    await db.updateTable('ciphers').set({ data: row!.data.replace('"name":"', '"name":"2.changed|') }).where('id', '=', item.id).execute();
    await expectExact();
    await db.updateTable('ciphers').set({ attachments: JSON.stringify({ a1: { fileName: 'x', key: null, size: 1 } }) }).where('id', '=', item.id).execute();
    await expectExact();
    // A personal item changed elsewhere, with the vault revision moved as every write path does.
    await db.updateTable('ciphers').set({ reprompt: 1 }).where('id', '=', personal.id).execute();
    await touchVault(db, owner.userId, new Date().toISOString());
    await expectExact();
    // The same for an account in no organization, whose whole vault section was cached.
    const soloItem = await personalItem(solo);
    expect((await expectExact()).get(solo)).toEqual([soloItem.id]);
    await db.updateTable('ciphers').set({ reprompt: 1 }).where('id', '=', soloItem.id).execute();
    await touchVault(db, solo.userId, new Date(Date.now() + 1000).toISOString());
    await expectExact();
  });

  it('reads again, with the rights given now, an item changed between the listing and its read', async () => {
    // A member and a collection of this test's own: the walks above change the others' grants.
    const member = await actor(server, org, 'relisted@example.com');
    const collection = await seedCollection(server, org, { users: [[owner.memberId, { manage: true }], [member.memberId, { readOnly: true }]] });
    const kept = await orgItem(owner, [collection]);
    const revoked = await orgItem(owner, [collection]);
    const mine = await personalItem(member);
    const listings = recordedListings();
    // Each build with a cache of its own, so that every item's content is read.
    const build = async () => bodyOf(await serviceWith(64 * 1024 * 1024, { plugin: listings.plugin }).load(asCaller(member.userId), { newestType: CipherType.Passport }));
    const before = await build();
    expect(before.ciphers.map((x) => x.id)).toEqual(expect.arrayContaining([kept.id, revoked.id, mine.id]));

    const db = server.database.db;
    const later = new Date(Date.now() + 5000).toISOString();
    // Edited by another member; taken out of the editor's reach, then edited; edited on another device.
    await db.updateTable('ciphers').set({ revision_date: later, ...rowChange }).where('id', '=', kept.id).execute();
    await db.deleteFrom('collection_ciphers').where('cipher_id', '=', revoked.id).execute();
    await db.updateTable('ciphers').set({ revision_date: later, ...rowChange }).where('id', 'in', [revoked.id, mine.id]).execute();
    listings.replay(['personal', 'organization']);
    const after = await build();
    const dates = new Map(after.ciphers.map((x) => [x.id, (x as { revisionDate?: string }).revisionDate]));
    expect(dates.get(kept.id)).toBe(later);
    expect(dates.get(mine.id)).toBe(later);
    expect(dates.has(revoked.id)).toBe(false);
    expect(normalized(after)).toEqual(normalized(await uncachedSync(member)));
  });

  it('sends an item shared into an organization between the listing and its read as the organization item it now is', async () => {
    const member = await actor(server, org, 'sharer@example.com');
    const collection = await seedCollection(server, org, { users: [[owner.memberId, { manage: true }], [member.memberId, { manage: true }]] });
    await orgItem(owner, [collection]);
    // Another personal item stays: the plugin tells a listing by its rows, and an empty one by none.
    await personalItem(member);
    const shared = await personalItem(member);
    const listings = recordedListings();
    const build = async () => bodyOf(await serviceWith(64 * 1024 * 1024, { plugin: listings.plugin }).load(asCaller(member.userId), { newestType: CipherType.Passport }));
    await build();
    expect([...listings.recorded.keys()].sort()).toEqual(['ids', 'organization', 'personal']);
    // Shared as the share route does it in the database: the item moves to the organization and into the collection.
    const db = server.database.db;
    await db.updateTable('ciphers').set({ organization_id: org, user_id: null, ...rowChange }).where('id', '=', shared.id).execute();
    await db.insertInto('collection_ciphers').values({ collection_id: collection, cipher_id: shared.id }).execute();
    // The personal listing and the organization ids as they were before; the pages read now.
    listings.replay(['personal', 'ids']);
    const after = await build();
    expect(after.ciphers.filter((x) => x.id === shared.id)).toHaveLength(1);
    expect(normalized(after)).toEqual(normalized(await uncachedSync(member)));
  });

  it('lists a vault with organization collections a page at a time, and sends it as it reads it once it outgrows the budget: exactly the uncached build', async () => {
    // Listed five organization items at a time: three pages.
    const service = (bytes: number) => serviceWith(bytes, { listingPage: 5 });
    const member = await actor(server, org, 'streamed@example.com');
    const collection = await seedCollection(server, org, { users: [[owner.memberId, { manage: true }], [member.memberId, { hidePasswords: true }]] });
    for (let i = 0; i < 12; i++) await orgItem(owner, [collection]);
    await personalItem(member);
    // 20 KB: sections of up to 10 KB are kept, a few items.
    const data = await service(20_000).load(asCaller(member.userId), { newestType: CipherType.Passport });
    expect(isSection(data.vault)).toBe(false);
    const sent = await bodyOf(data);
    expect(sent.ciphers).toHaveLength(13);
    expect(normalized(sent)).toEqual(normalized(await uncachedSync(member)));
    expect(isSection((await service(64 * 1024 * 1024).load(asCaller(member.userId), { newestType: CipherType.Passport })).vault)).toBe(true);
  });

  it('patches the section of a vault in no organization with exactly what changed, for new and older clients', async () => {
    // An account in no organization: after its first sync, each sync after a change patches its
    // last section with the items written since (sync.service.ts, migration 0020). Clients older
    // than 2024.12 (no version header) get their own section, without SSH keys.
    const alone = await seedAccount(server, { email: 'patched@example.com' });
    const me: Actor = { userId: alone.userId, token: alone.accessToken, memberId: '', account: alone.account };
    const key = me.account.userKey;
    const sync = async (headers: Record<string, string>) => {
      const res = await server.request('GET', '/api/sync', { token: me.token, headers });
      expect(res.status, res.text).toBe(200);
      return normalized(res.body as SyncJson);
    };
    const exact = async () => {
      expect(await sync(CLIENT)).toEqual(normalized(await uncachedSync(me)));
      expect(await sync({})).toEqual(normalized(await uncachedSync(me, CipherType.Identity)));
      return (await sync(CLIENT)).ciphers.map((x) => x.id);
    };
    const db = server.database.db;
    const items: string[] = [];
    for (let i = 0; i < 6; i++) items.push((await personalItem(me)).id);
    const ssh = await ok(me, 'POST', '/ciphers', cipherBody('sshKey', key));
    const folder = await ok(me, 'POST', '/folders', { name: encryptText('F', key) });
    const other = await ok(me, 'POST', '/folders', { name: encryptText('G', key) });
    expect(await exact()).toHaveLength(7);
    const [a, b, c2, d, e, f] = items as [string, string, string, string, string, string];

    const steps: [string, () => Promise<unknown>][] = [
      ['edit an item', () => ok(me, 'PUT', `/ciphers/${a}`, cipherBody('card', key))],
      ['edit an item twice between syncs', async () => {
        await ok(me, 'PUT', `/ciphers/${b}`, cipherBody('identity', key));
        await ok(me, 'PUT', `/ciphers/${b}`, cipherBody('secureNote', key, { favorite: true }));
      }],
      ['turn an item into an SSH key (older clients no longer see it)', () => ok(me, 'PUT', `/ciphers/${c2}`, cipherBody('sshKey', key))],
      ['turn it back', () => ok(me, 'PUT', `/ciphers/${c2}`, cipherBody('login', key))],
      ['edit the SSH key', () => ok(me, 'PUT', `/ciphers/${ssh.id}`, cipherBody('sshKey', key, { favorite: true }))],
      ['create an item', () => personalItem(me)],
      ['create an SSH key', () => ok(me, 'POST', '/ciphers', cipherBody('sshKey', key))],
      ['move items into a folder', () => ok(me, 'PUT', '/ciphers/move', { ids: [a, d], folderId: folder.id })],
      ['mark a favorite', () => ok(me, 'PUT', `/ciphers/${e}/partial`, { folderId: other.id, favorite: true })],
      ['archive', () => ok(me, 'PUT', `/ciphers/${d}/archive`)],
      ['unarchive', () => ok(me, 'PUT', `/ciphers/${d}/unarchive`)],
      ['trash', () => ok(me, 'PUT', `/ciphers/${e}/delete`)],
      ['restore', () => ok(me, 'PUT', `/ciphers/${e}/restore`)],
      ['rename a folder', () => ok(me, 'PUT', `/folders/${folder.id}`, { name: encryptText('F2', key) })],
      ['delete a folder (its items move to no folder)', () => ok(me, 'DELETE', `/folders/${folder.id}`)],
      ['delete an item for good', () => ok(me, 'DELETE', `/ciphers/${f}`)],
      ['delete one and create another between syncs', async () => {
        await ok(me, 'DELETE', `/ciphers/${e}`);
        await personalItem(me);
      }],
      ['import items', () => ok(me, 'POST', '/ciphers/import', { folders: [], ciphers: [cipherBody('login', key), cipherBody('sshKey', key)], folderRelationships: [] })],
      ['trash several', () => ok(me, 'PUT', '/ciphers/delete', { ids: [a, b] })],
      ['restore several', () => ok(me, 'PUT', '/ciphers/restore', { ids: [a, b] })],
      // Changes made elsewhere (another instance, another release), seen only through the database.
      ['an update by hand, with the vault revision moved', async () => {
        await db.updateTable('ciphers').set({ reprompt: 1 }).where('id', '=', d).execute();
        await touchVault(db, me.userId, new Date().toISOString());
      }],
      ['a row inserted by hand, with the vault revision moved', async () => {
        const [row] = await db.selectFrom('ciphers').selectAll().where('id', '=', a).execute();
        const { version: _, change: __, ...copy } = row!;
        await db.insertInto('ciphers').values({ ...copy, id: randomUUID() }).execute();
        await touchVault(db, me.userId, new Date().toISOString());
      }],
      ['a row deleted by hand, with the vault revision moved', async () => {
        await db.deleteFrom('ciphers').where('id', '=', d).execute();
        await touchVault(db, me.userId, new Date().toISOString());
      }],
      // What a folder deletion racing an item's filing leaves on PostgreSQL: the foreign key
      // clears the item's folder, and no write path stamped the item for it (VaultSection.folderIds).
      ['a folder deleted by hand, its foreign key clearing an item\'s folder, with the vault revision moved', async () => {
        const held = await ok(me, 'POST', '/folders', { name: encryptText('H', key) });
        await ok(me, 'PUT', '/ciphers/move', { ids: [b], folderId: held.id });
        await exact();
        await db.deleteFrom('folders').where('id', '=', held.id).execute();
        await touchVault(db, me.userId, new Date().toISOString());
      }],
    ];
    for (const [name, change] of steps) {
      await change();
      await expect(exact(), name).resolves.toBeDefined();
    }
  }, LONG);

  it('answers exactly the uncached build after random sequences of changes by random members', async () => {
    const folders = new Map<Actor, string>();
    for (const who of everyone) folders.set(who, (await ok(who, 'POST', '/folders', { name: encryptText('P', who.account.userKey) })).id);
    const collections = Object.values(c);
    const pick = <T,>(list: readonly T[], n: number): T | undefined => list[n % Math.max(list.length, 1)];

    // Each action is tried as given; the server refusing it (no right, wrong state) is fine, as
    // long as everyone's sync still equals the uncached build.
    let accepted = 0;
    const action = fc.record({
      who: fc.nat(everyone.length - 1),
      kind: fc.constantFrom('create', 'createOrg', 'edit', 'move', 'favorite', 'archive', 'unarchive', 'trash', 'restore', 'purge', 'collections', 'share', 'grant', 'role', 'ungrant', 'group'),
      n: fc.nat(1000),
      m: fc.nat(1000),
      flag: fc.boolean(),
    });
    let seen = await expectExact();
    await fc.assert(
      fc.asyncProperty(fc.array(action, { minLength: 1, maxLength: 6 }), async (actions) => {
        for (const { who: w, kind, n, m, flag } of actions) {
          const who = everyone[w]!;
          const item = pick(seen.get(who) ?? [], n);
          const collection = pick(collections, m)!;
          const target = pick(everyone.slice(1), m)!;
          const call = async (by: Actor, method: string, path: string, json?: unknown) => {
            const res = await server.request(method, `/api${path}`, { token: by.token, headers: CLIENT, ...(json === undefined ? {} : { json }) });
            if (res.status < 300) accepted++;
            return res;
          };
          switch (kind) {
            case 'create':
              await personalItem(who);
              break;
            case 'createOrg':
              await call(who, 'POST', '/ciphers/create', { cipher: cipherBody('login', orgKey, { organizationId: org }), collectionIds: [collection] });
              break;
            case 'edit':
              if (item) await call(who, 'PUT', `/ciphers/${item}`, cipherBody('identity', flag ? orgKey : who.account.userKey, flag ? { organizationId: org } : {}));
              break;
            case 'move':
              if (item) await call(who, 'PUT', '/ciphers/move', { ids: [item], folderId: flag ? folders.get(who) : null });
              break;
            case 'favorite':
              if (item) await call(who, 'PUT', `/ciphers/${item}/partial`, { folderId: null, favorite: flag });
              break;
            case 'archive':
            case 'unarchive':
            case 'restore':
              if (item) await call(who, 'PUT', `/ciphers/${item}/${kind}`);
              break;
            case 'trash':
              if (item) await call(who, 'PUT', `/ciphers/${item}/delete`);
              break;
            case 'purge':
              if (item && flag) await call(who, 'DELETE', `/ciphers/${item}`);
              break;
            case 'collections':
              if (item) await call(who, 'PUT', `/ciphers/${item}/collections_v2`, { collectionIds: flag ? [collection] : [collection, c.shared] });
              break;
            case 'share':
              if (item) await call(who, 'PUT', `/ciphers/${item}/share`, { cipher: cipherBody('login', orgKey, { organizationId: org }), collectionIds: [collection] });
              break;
            case 'grant':
              await call(owner, 'PUT', `/organizations/${org}/collections/${collection}/users`, [{ id: target.memberId, readOnly: flag, hidePasswords: n % 3 === 0, manage: n % 5 === 0 }]);
              break;
            case 'ungrant':
              await call(owner, 'PUT', `/organizations/${org}/collections/${collection}/users`, []);
              break;
            case 'group':
              await call(owner, 'PUT', `/organizations/${org}/groups/${group}/users`, flag ? [target.memberId] : []);
              break;
            case 'role':
              await call(owner, 'PUT', `/organizations/${org}/users/${target.memberId}`, {
                type: flag ? OrganizationUserType.User : OrganizationUserType.Manager,
                collections: [{ id: collection, readOnly: n % 2 === 0, manage: n % 7 === 0 }],
                groups: n % 3 === 0 ? [group] : [],
              });
              break;
          }
          seen = await expectExact();
        }
      }),
      { numRuns: 15 },
    );
    // The sequences changed the vaults, not only tried to.
    expect(accepted).toBeGreaterThan(10);
  }, LONG);
});
