import type { KyselyPlugin } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedAccount, type LoggedInUser } from '../../../test/support/accounts.js';
import { actor, seedCollection, type Actor } from '../../../test/support/admin.js';
import { seedOrgItem } from '../../../test/support/org-items.js';
import { seedOrganization } from '../../../test/support/orgs.js';
import { generateSymmetricKey } from '../../../test/support/bw-crypto.js';
import { OrganizationUserType } from '../../platform/access/roles.js';
import { counting } from '../../../test/support/query-count.js';
import { marksSettled } from '../../../test/support/change-marks.js';
import { encryptText } from '../../../test/support/bw-crypto.js';
import { startTestServer, type TestResponse, type TestServer } from '../../../test/support/test-server.js';
import { cipherBody, ciphersOf, KINDS, schemaErrors } from '../../../test/support/vault.js';
import { createSyncCache } from './sync-cache.js';
import { createSyncService } from './sync.service.js';
import { isSection } from './sync-vault.js';
import { SyncResponse, newestItemType, syncBody, syncBytes, type SyncData } from './sync.schemas.js';
import { CipherType } from './ciphers.schemas.js';
import { apiBaseUrl } from './attachment-data.js';
import { NO_CLIENT, type UserCaller } from '../../http/request-context.js';

const itemsOf = (data: SyncData) => {
  if (!isSection(data.vault)) throw new Error('a vault this small is kept as a section');
  return JSON.parse(Buffer.concat(data.vault.items.chunks()).toString()) as unknown[];
};

let server: TestServer;
let alice: LoggedInUser;
let bob: LoggedInUser;

beforeAll(async () => {
  server = await startTestServer();
  alice = await seedAccount(server, { email: 'alice@example.com' });
  bob = await seedAccount(server, { email: 'bob@example.com' });
});
afterAll(async () => server?.close());

/** The user as a sync service's caller (no client: the service reads only who it is). */
const asCaller = (userId: string): UserCaller => ({ userId, client: NO_CLIENT, log: server.app.log });

const CLIENT = { 'bitwarden-client-version': '2026.9.0' };
const req = (user: LoggedInUser, method: string, path: string, json?: unknown, headers = CLIENT) =>
  server.request(method, `/api${path}`, { token: user.accessToken, headers, ...(json === undefined ? {} : { json }) });

/** A plugin counting the rows the statements sent through it return, and among them the items' contents (rows with `data`). */
function rowCounting(): { plugin: KyselyPlugin; read: { rows: number; contents: number } } {
  const read = { rows: 0, contents: 0 };
  const plugin: KyselyPlugin = {
    transformQuery: (args) => args.node,
    transformResult: async (args) => {
      read.rows += args.result.rows.length;
      read.contents += args.result.rows.filter((row) => typeof row === 'object' && row !== null && 'data' in row && row.data !== null).length;
      return args.result;
    },
  };
  return { plugin, read };
}

async function importItems(user: LoggedInUser, count: number) {
  const ciphers = Array.from({ length: count }, (_, i) => cipherBody(KINDS[i % KINDS.length] ?? 'login', user.account.userKey));
  const res = await req(user, 'POST', '/ciphers/import', { folders: [], ciphers, folderRelationships: [] });
  expect(res.status, res.text).toBe(200);
}


describe('sync', () => {
  it('returns profile, folders, items (trashed and archived too), domains and decryption data in the official shape', async () => {
    const folder = (await req(alice, 'POST', '/folders', { name: encryptText('Work', alice.account.userKey) })).body;
    const items: TestResponse["body"][] = [];
    for (const kind of KINDS) items.push((await req(alice, 'POST', '/ciphers', cipherBody(kind, alice.account.userKey, { folderId: folder.id }))).body);
    await req(alice, 'PUT', `/ciphers/${items[0].id}/delete`);
    await req(alice, 'PUT', `/ciphers/${items[1].id}/archive`);
    await req(bob, 'POST', '/ciphers', cipherBody('login', bob.account.userKey));

    const res = await req(alice, 'GET', '/sync');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(schemaErrors(SyncResponse, res.body)).toEqual([]);
    const body = res.body;
    expect(body.object).toBe('sync');
    expect(body.profile).toMatchObject({ object: 'profile', id: alice.userId, email: 'alice@example.com' });
    expect(body.folders).toEqual([folder]);
    expect(body.collections).toEqual([]);
    expect(body.policies).toEqual([]);
    expect(body.sends).toEqual([]);
    expect(body.domains).toEqual({ object: 'domains', equivalentDomains: null, globalEquivalentDomains: [] });
    expect(body.userDecryption.masterPasswordUnlock).toMatchObject({ salt: 'alice@example.com', kdf: { kdfType: 0 } });
    expect(ciphersOf(body).map((c) => c.id).sort()).toEqual(items.map((c) => String(c.id)).sort());
    const byId = new Map(ciphersOf(body).map((c) => [c.id, c]));
    expect(byId.get(items[0].id)).toMatchObject({ object: 'cipherDetails', deletedDate: expect.any(String), folderId: folder.id });
    expect(byId.get(items[1].id)).toMatchObject({ archivedDate: expect.any(String), deletedDate: null });
    // Each item is the same in sync as read alone (plus its collections).
    const single = (await req(alice, 'GET', `/ciphers/${items[2].id}/details`)).body;
    expect(byId.get(items[2].id)).toEqual(single);
  });

  it('leaves domains out when the client asks', async () => {
    const res = await req(alice, 'GET', '/sync?excludeDomains=true');
    expect(res.body.domains).toBeNull();
  });

  it('hides SSH keys from clients older than 2024.12 or that name no version', async () => {
    const user = await seedAccount(server);
    await req(user, 'POST', '/ciphers', cipherBody('sshKey', user.account.userKey));
    await req(user, 'POST', '/ciphers', cipherBody('login', user.account.userKey));
    const types = async (headers: Record<string, string>) =>
      ciphersOf((await req(user, 'GET', '/sync', undefined, headers as typeof CLIENT)).body).map((c) => c.type).sort();
    expect(await types(CLIENT)).toEqual([1, 5]);
    expect(await types({ 'bitwarden-client-version': '2024.11.2' })).toEqual([1]);
    expect(await types({})).toEqual([1]);
    expect(newestItemType('2024.12.0')).toBe(CipherType.SSHKey);
    expect(newestItemType('2025.1.0')).toBe(CipherType.SSHKey);
    expect(newestItemType('2026.1.9')).toBe(CipherType.SSHKey);
    expect(newestItemType('2026.2.0')).toBe(CipherType.Passport);
    expect(newestItemType('2024.11.2')).toBe(CipherType.Identity);
    expect(newestItemType('garbage')).toBe(CipherType.Identity);
  });

  it('refuses callers without a token', async () => {
    expect((await server.request('GET', '/api/sync')).status).toBe(401);
  });

  it('runs the same number of queries for 10 and for 200 personal items', async () => {
    const small = await seedAccount(server);
    const large = await seedAccount(server);
    await importItems(small, 10);
    await importItems(large, 200);
    const a = counting(server.database.db);
    const smallData = await createSyncService({ db: a.db, engine: server.database.engine, apiBase: 'http://test/api', cache: createSyncCache(0) }).load(asCaller(small.userId), { newestType: CipherType.Passport });
    const b = counting(server.database.db);
    const largeData = await createSyncService({ db: b.db, engine: server.database.engine, apiBase: 'http://test/api', cache: createSyncCache(0) }).load(asCaller(large.userId), { newestType: CipherType.Passport });
    expect(itemsOf(smallData)).toHaveLength(10);
    expect(itemsOf(largeData)).toHaveLength(200);
    expect(b.count()).toBe(a.count());
    // User, revision, memberships, policies, the collection lookup, the passkeys that unlock,
    // folders, the personal items' ids and their rows (one read per slice of 500 ids); see
    // org-items.test.ts for vaults with organizations.
    expect(a.count()).toBeLessThanOrEqual(10);
  });

  it('reuses its last answer while the vault is unchanged, reading only the user and the revision', async () => {
    const user = await seedAccount(server);
    await importItems(user, 20);
    const c = counting(server.database.db);
    const sync = createSyncService({ db: c.db, engine: server.database.engine, apiBase: 'http://test/api', cache: createSyncCache(1024 * 1024) });
    const first = await sync.load(asCaller(user.userId), { newestType: CipherType.Passport });
    const cold = c.count();
    const second = await sync.load(asCaller(user.userId), { newestType: CipherType.Passport });
    // Only the user, the revision, the organization lookups and the passkeys; no folders or items.
    expect(c.count() - cold).toBeLessThan(cold);
    expect(c.count() - cold).toBeLessThanOrEqual(7);
    expect(second.vault).toBe(first.vault);
    // Any change through the vault services moves the revision: the next answer is fresh.
    await req(user, 'POST', '/ciphers', cipherBody('card', user.account.userKey));
    const third = await sync.load(asCaller(user.userId), { newestType: CipherType.Passport });
    expect(itemsOf(third)).toHaveLength(21);
    // Older clients get their own answer, without SSH keys.
    const older = await sync.load(asCaller(user.userId), { newestType: CipherType.Identity });
    expect(itemsOf(older).length).toBeLessThan(21);
  });

  it('gives back a section no sync used for a whole release round, and builds the same answer again', async () => {
    const user = await seedAccount(server);
    await importItems(user, 20);
    const c = counting(server.database.db);
    const cache = createSyncCache(1024 * 1024);
    const sync = createSyncService({ db: c.db, engine: server.database.engine, apiBase: 'http://test/api', cache });
    const first = await sync.load(asCaller(user.userId), { newestType: CipherType.Passport });
    const cold = c.count();
    // Built in this round, then served in the next: kept both times.
    expect(cache.dropUnused()).toBe(0);
    expect((await sync.load(asCaller(user.userId), { newestType: CipherType.Passport })).vault).toBe(first.vault);
    expect(cache.dropUnused()).toBe(0);
    const warm = c.count();
    // A round without a sync: the section (its items' JSON, at least) goes.
    expect(cache.dropUnused()).toBeGreaterThan(20 * 500);
    const again = await sync.load(asCaller(user.userId), { newestType: CipherType.Passport });
    expect(c.count() - warm).toBe(cold);
    expect(again.vault).not.toBe(first.vault);
    expect(itemsOf(again)).toEqual(itemsOf(first));
  });

  it('after a change, reads the items written since its last answer, not the whole vault', async () => {
    const user = await seedAccount(server);
    await importItems(user, 200);
    const { plugin: rowCounter, read } = rowCounting();
    const sync = createSyncService({ db: server.database.db.withPlugin(rowCounter), engine: server.database.engine, apiBase: 'http://test/api', cache: createSyncCache(64 * 1024 * 1024) });
    const load = async () => {
      await marksSettled(server.database);
      return itemsOf(await sync.load(asCaller(user.userId), { newestType: CipherType.Passport })) as { id: string; type: number }[];
    };
    const first = await load();
    expect(first).toHaveLength(200);
    expect(read.rows).toBeGreaterThan(200);
    const changed = first.find((item) => item.type !== 3)!;
    await req(user, 'PUT', `/ciphers/${changed.id}`, cipherBody('card', user.account.userKey));
    read.rows = 0;
    const after = await load();
    // The user, the revision, memberships, policies, collections, Sends, folders, the changed item.
    expect(read.rows).toBeLessThanOrEqual(10);
    expect(after).toHaveLength(200);
    expect(after.find((item) => item.id === changed.id)?.type).toBe(3);
    expect(after.filter((item) => item.id !== changed.id)).toEqual(first.filter((item) => item.id !== changed.id));

    // An item deleted for good leaves no row: the vault's ids are read to find it, no item's contents.
    await req(user, 'DELETE', `/ciphers/${changed.id}`);
    read.contents = 0;
    const deleted = await load();
    expect(read.contents).toBe(0);
    expect(deleted).toEqual(after.filter((item) => item.id !== changed.id));
  });

  it('answers every change at once through HTTP, however often it syncs', async () => {
    const user = await seedAccount(server);
    const item = (await req(user, 'POST', '/ciphers', cipherBody('login', user.account.userKey))).body;
    const names = async () => ciphersOf((await req(user, 'GET', '/sync')).body).map((c) => [c.id, c.folderId, c.deletedDate === null]);
    expect(await names()).toEqual([[item.id, null, true]]);
    expect(await names()).toEqual([[item.id, null, true]]);
    const folder = (await req(user, 'POST', '/folders', { name: encryptText('F', user.account.userKey) })).body;
    await req(user, 'PUT', '/ciphers/move', { ids: [item.id], folderId: folder.id });
    expect(await names()).toEqual([[item.id, folder.id, true]]);
    await req(user, 'PUT', `/ciphers/${item.id}/delete`);
    expect(await names()).toEqual([[item.id, folder.id, false]]);
    await req(user, 'DELETE', `/folders/${folder.id}`);
    expect(await names()).toEqual([[item.id, null, false]]);
    await req(user, 'DELETE', `/ciphers/${item.id}`);
    expect(await names()).toEqual([]);
  });

  it('sends a vault larger than the sync cache keeps as it reads it, the same answer, and keeps none of it', async () => {
    // SYNC_CACHE_MEGABYTES=1: sections of up to 512 KB are kept; 600 items are about 1 MB.
    const small = await startTestServer({ env: { SYNC_CACHE_MEGABYTES: '1' } });
    try {
      const syncOf = (user: LoggedInUser) => small.request('GET', '/api/sync', { token: user.accessToken, headers: CLIENT });
      const uncached = async (user: LoggedInUser) => {
        const fresh = createSyncService({ db: small.database.db, engine: small.database.engine, apiBase: apiBaseUrl(small.config), cache: createSyncCache(0) });
        return JSON.parse((await syncBytes(syncBody(await fresh.load(asCaller(user.userId), { newestType: CipherType.Passport }), { excludeDomains: false }))).toString()) as unknown;
      };
      const large = await seedAccount(small, { email: 'large@example.com' });
      const ciphers = Array.from({ length: 600 }, (_, i) => cipherBody(KINDS[i % KINDS.length] ?? 'login', large.account.userKey));
      expect((await small.request('POST', '/api/ciphers/import', { token: large.accessToken, json: { folders: [], ciphers, folderRelationships: [] } })).status).toBe(200);

      const first = await syncOf(large);
      expect(first.status).toBe(200);
      // Sent as it was read: its length was not known when the answer started.
      expect(first.headers.get('content-length')).toBeNull();
      expect(first.text.length).toBeGreaterThan(512 * 1024);
      expect(schemaErrors(SyncResponse, first.body)).toEqual([]);
      expect(ciphersOf(first.body)).toHaveLength(600);
      expect(first.body).toEqual(await uncached(large));

      // Nothing was kept: an edit shows at once, and the next answer is read afresh as well.
      const edited = ciphersOf(first.body)[123]!;
      const body = cipherBody('login', large.account.userKey);
      expect((await small.request('PUT', `/api/ciphers/${edited.id}`, { token: large.accessToken, json: body })).status).toBe(200);
      const second = await syncOf(large);
      expect(second.headers.get('content-length')).toBeNull();
      expect(ciphersOf(second.body).find((c) => c.id === edited.id)?.name).toBe(body.name);
      expect(second.body).toEqual(await uncached(large));

      // A vault within the budget is kept and sent whole, with its length.
      const few = await seedAccount(small, { email: 'few@example.com' });
      expect((await small.request('POST', '/api/ciphers', { token: few.accessToken, json: cipherBody('login', few.account.userKey) })).status).toBe(200);
      const kept = await syncOf(few);
      expect(Number(kept.headers.get('content-length'))).toBe(Buffer.byteLength(kept.text));
      expect(ciphersOf(kept.body)).toHaveLength(1);
    } finally {
      await small.close();
    }
  });

  it('after another member changes one organization item, reads only that item, and runs a constant number of queries while nothing changed', async () => {
    const org = await seedOrganization(server, { name: 'Sync Org' });
    const owner = await actor(server, org, 'sync-owner@example.com', { type: OrganizationUserType.Owner });
    const member = await actor(server, org, 'sync-member@example.com');
    const few = await actor(server, org, 'sync-few@example.com');
    const collection = await seedCollection(server, org, { users: [[owner.memberId, { manage: true }], [member.memberId]] });
    const other = await seedCollection(server, org, { users: [[owner.memberId, { manage: true }], [few.memberId]] });
    const ids: string[] = [];
    for (let i = 0; i < 200; i++) ids.push(await seedOrgItem(server, org, [collection]));
    for (let i = 0; i < 3; i++) await seedOrgItem(server, org, [other]);
    const { plugin: rowCounter, read } = rowCounting();
    const c = counting(server.database.db.withPlugin(rowCounter));
    const sync = createSyncService({ db: c.db, engine: server.database.engine, apiBase: 'http://test/api', cache: createSyncCache(64 * 1024 * 1024) });
    const load = async (who: Actor) => {
      await marksSettled(server.database);
      return itemsOf(await sync.load(asCaller(who.userId), { newestType: CipherType.Passport })) as { id: string; type: number; favorite: boolean; collectionIds: string[] }[];
    };
    const first = await load(member);
    expect(first).toHaveLength(200);
    expect(await load(few)).toHaveLength(3);

    // Nothing changed: the section as it is, in as many queries for 200 items as for 3, no item read.
    const hit = async (who: Actor) => {
      const [before, rowsBefore] = [c.count(), read.rows];
      await load(who);
      return { queries: c.count() - before, rows: read.rows - rowsBefore };
    };
    const large = await hit(member);
    const small = await hit(few);
    expect(large.queries).toBe(small.queries);
    // User, revision, memberships, policies, the collection lookups (memberships, grants,
    // collections), Sends, the passkeys, the marks, and the three lookups of changes (items,
    // settings, removals).
    expect(large.queries).toBeLessThanOrEqual(15);
    expect(large.rows).toBe(small.rows);

    // Another member edits one item: this member's next sync reads that item alone.
    const orgKey = generateSymmetricKey();
    const asUser = (who: Actor) => ({ ...who, accessToken: who.token }) as unknown as LoggedInUser;
    const changed = ids[17]!;
    const res = await req(asUser(owner), 'PUT', `/ciphers/${changed}`, cipherBody('card', orgKey, { organizationId: org }));
    expect(res.status, res.text).toBe(200);
    read.rows = 0;
    read.contents = 0;
    const after = await load(member);
    expect(read.contents).toBe(1);
    expect(read.rows).toBeLessThanOrEqual(16);
    expect(after).toHaveLength(200);
    expect(after.find((item) => item.id === changed)?.type).toBe(3);
    expect(after.filter((item) => item.id !== changed)).toEqual(first.filter((item) => item.id !== changed));

    // The member's own setting of an organization item: that item alone, for this member.
    expect((await req(asUser(member), 'PUT', `/ciphers/${ids[3]}/partial`, { folderId: null, favorite: true })).status).toBe(200);
    read.contents = 0;
    const favorite = await load(member);
    expect(read.contents).toBe(1);
    expect(favorite.find((item) => item.id === ids[3])?.favorite).toBe(true);

    // Out of the member's collection, then deleted for good: no item's contents read.
    expect((await req(asUser(owner), 'PUT', `/ciphers/${ids[5]}/collections_v2`, { collectionIds: [other] })).status).toBe(200);
    read.contents = 0;
    expect((await load(member)).map((item) => item.id)).not.toContain(ids[5]);
    expect(read.contents).toBeLessThanOrEqual(1);
    expect((await req(asUser(owner), 'DELETE', `/ciphers/${ids[6]}`)).status).toBeLessThan(300);
    read.contents = 0;
    const left = await load(member);
    expect(read.contents).toBe(0);
    expect(left).toHaveLength(198);
    expect(left.map((item) => item.id)).not.toContain(ids[6]);
  });
});
