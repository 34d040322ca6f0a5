import type { KyselyPlugin } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, type LoggedInUser } from '../../../test/support/accounts.js';
import { counting } from '../../../test/support/query-count.js';
import { encryptText } from '../../../test/support/bw-crypto.js';
import { startTestServer, type TestResponse, type TestServer } from '../../../test/support/test-server.js';
import { cipherBody, ciphersOf, KINDS, schemaErrors } from '../../../test/support/vault.js';
import { createSyncCache } from './sync-cache.js';
import { createSyncService, type SyncData } from './sync.service.js';
import { SyncResponse, supportsSshKeys } from './sync.schemas.js';

const itemsOf = (data: SyncData) => JSON.parse(Buffer.concat(data.vault.items.chunks()).toString()) as unknown[];

let server: TestServer;
let alice: LoggedInUser;
let bob: LoggedInUser;

beforeAll(async () => {
  server = await startTestServer();
  alice = await createUser(server, { email: 'alice@example.com' });
  bob = await createUser(server, { email: 'bob@example.com' });
});
afterAll(async () => server?.close());

const CLIENT = { 'bitwarden-client-version': '2026.9.0' };
const req = (user: LoggedInUser, method: string, path: string, json?: unknown, headers = CLIENT) =>
  server.request(method, `/api${path}`, { token: user.accessToken, headers, ...(json === undefined ? {} : { json }) });

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
    const user = await createUser(server);
    await req(user, 'POST', '/ciphers', cipherBody('sshKey', user.account.userKey));
    await req(user, 'POST', '/ciphers', cipherBody('login', user.account.userKey));
    const types = async (headers: Record<string, string>) =>
      ciphersOf((await req(user, 'GET', '/sync', undefined, headers as typeof CLIENT)).body).map((c) => c.type).sort();
    expect(await types(CLIENT)).toEqual([1, 5]);
    expect(await types({ 'bitwarden-client-version': '2024.11.2' })).toEqual([1]);
    expect(await types({})).toEqual([1]);
    expect(supportsSshKeys('2024.12.0')).toBe(true);
    expect(supportsSshKeys('2025.1.0')).toBe(true);
    expect(supportsSshKeys('garbage')).toBe(false);
  });

  it('refuses callers without a token', async () => {
    expect((await server.request('GET', '/api/sync')).status).toBe(401);
  });

  it('runs the same number of queries for 10 and for 200 personal items', async () => {
    const small = await createUser(server);
    const large = await createUser(server);
    await importItems(small, 10);
    await importItems(large, 200);
    const a = counting(server.database.db);
    const smallData = await createSyncService({ db: a.db, engine: server.database.engine, apiBase: 'http://test/api', cache: createSyncCache(0) }).load(small.userId, { withSshKeys: true });
    const b = counting(server.database.db);
    const largeData = await createSyncService({ db: b.db, engine: server.database.engine, apiBase: 'http://test/api', cache: createSyncCache(0) }).load(large.userId, { withSshKeys: true });
    expect(itemsOf(smallData)).toHaveLength(10);
    expect(itemsOf(largeData)).toHaveLength(200);
    expect(b.count()).toBe(a.count());
    // User, revision, memberships, policies, the collection lookup, folders, the personal items'
    // ids and their rows (one read per slice of 500 ids); see org-items.test.ts for vaults with
    // organizations.
    expect(a.count()).toBeLessThanOrEqual(9);
  });

  it('reuses its last answer while the vault is unchanged, reading only the user and the revision', async () => {
    const user = await createUser(server);
    await importItems(user, 20);
    const c = counting(server.database.db);
    const sync = createSyncService({ db: c.db, engine: server.database.engine, apiBase: 'http://test/api', cache: createSyncCache(1024 * 1024) });
    const first = await sync.load(user.userId, { withSshKeys: true });
    const cold = c.count();
    const second = await sync.load(user.userId, { withSshKeys: true });
    // Only the user, the revision and the organization lookups; no folders or items.
    expect(c.count() - cold).toBeLessThan(cold);
    expect(c.count() - cold).toBeLessThanOrEqual(6);
    expect(second.vault).toBe(first.vault);
    // Any change through the vault services moves the revision: the next answer is fresh.
    await req(user, 'POST', '/ciphers', cipherBody('card', user.account.userKey));
    const third = await sync.load(user.userId, { withSshKeys: true });
    expect(itemsOf(third)).toHaveLength(21);
    // Older clients get their own answer, without SSH keys.
    const older = await sync.load(user.userId, { withSshKeys: false });
    expect(itemsOf(older).length).toBeLessThan(21);
  });

  it('after a change, reads the items written since its last answer, not the whole vault', async () => {
    const user = await createUser(server);
    await importItems(user, 200);
    let rows = 0;
    let contents = 0;
    const rowCounter: KyselyPlugin = {
      transformQuery: (args) => args.node,
      transformResult: async (args) => {
        rows += args.result.rows.length;
        contents += args.result.rows.filter((row) => typeof row === 'object' && row !== null && 'data' in row && row.data !== null).length;
        return args.result;
      },
    };
    const sync = createSyncService({ db: server.database.db.withPlugin(rowCounter), engine: server.database.engine, apiBase: 'http://test/api', cache: createSyncCache(64 * 1024 * 1024) });
    const first = itemsOf(await sync.load(user.userId, { withSshKeys: true })) as { id: string; type: number }[];
    expect(first).toHaveLength(200);
    expect(rows).toBeGreaterThan(200);
    const changed = first.find((item) => item.type !== 3)!;
    await req(user, 'PUT', `/ciphers/${changed.id}`, cipherBody('card', user.account.userKey));
    rows = 0;
    const after = itemsOf(await sync.load(user.userId, { withSshKeys: true })) as { id: string; type: number }[];
    // The user, the revision, memberships, policies, collections, Sends, folders, the changed item.
    expect(rows).toBeLessThanOrEqual(10);
    expect(after).toHaveLength(200);
    expect(after.find((item) => item.id === changed.id)?.type).toBe(3);
    expect(after.filter((item) => item.id !== changed.id)).toEqual(first.filter((item) => item.id !== changed.id));

    // An item deleted for good leaves no row: the vault's ids are read to find it, no item's contents.
    await req(user, 'DELETE', `/ciphers/${changed.id}`);
    contents = 0;
    const deleted = itemsOf(await sync.load(user.userId, { withSshKeys: true })) as { id: string; type: number }[];
    expect(contents).toBe(0);
    expect(deleted).toEqual(after.filter((item) => item.id !== changed.id));
  });

  it('answers every change at once through HTTP, however often it syncs', async () => {
    const user = await createUser(server);
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
});
