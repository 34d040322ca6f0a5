import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createUser, type LoggedInUser } from '../../../test/support/accounts.js';
import { decryptText, encryptText } from '../../../test/support/bw-crypto.js';
import { startTestServer, type TestResponse, type TestServer } from '../../../test/support/test-server.js';
import { cipherBody, ciphersOf, dataOf, KINDS, schemaErrors, TYPE_OF } from '../../../test/support/vault.js';
import { CipherDetailsResponse, CipherListResponse, CipherResponse, CipherResponseList } from './ciphers.schemas.js';
import { OUT_OF_DATE } from './ciphers.service.js';

let server: TestServer;
let alice: LoggedInUser;
let bob: LoggedInUser;

beforeAll(async () => {
  server = await startTestServer();
  alice = await createUser(server, { email: 'alice@example.com' });
  bob = await createUser(server, { email: 'bob@example.com' });
});
afterAll(async () => server?.close());

const CLIENT = { 'bitwarden-client-version': '2026.9.0', 'device-type': '25' };
const as = (user: LoggedInUser) => ({ token: user.accessToken, headers: CLIENT });
const req = (user: LoggedInUser, method: string, path: string, json?: unknown) =>
  server.request(method, `/api${path}`, { ...as(user), ...(json === undefined ? {} : { json }) });

async function create(user: LoggedInUser, kind: (typeof KINDS)[number] = 'login', overrides: Record<string, unknown> = {}): Promise<TestResponse['body']> {
  const res = await req(user, 'POST', '/ciphers', cipherBody(kind, user.account.userKey, overrides));
  expect(res.status, res.text).toBe(200);
  return res.body;
}

async function revisionDate(user: LoggedInUser): Promise<number> {
  return (await req(user, 'GET', '/accounts/revision-date')).body as number;
}

async function countCiphers(): Promise<number> {
  return (await server.database.db.selectFrom('ciphers').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n;
}

async function eventsOf(cipherId: string): Promise<number[]> {
  const rows = await server.database.db.selectFrom('events').select('type').where('cipher_id', '=', cipherId).orderBy('seq').execute();
  return rows.map((r) => r.type);
}

describe('creating and reading items', () => {
  it.each(KINDS)('stores a %s item with every field and returns it unchanged', async (kind) => {
    const body = cipherBody(kind, alice.account.userKey);
    const created = await req(alice, 'POST', '/ciphers', body);
    expect(created.status, created.text).toBe(200);
    expect(schemaErrors(CipherResponse, created.body)).toEqual([]);
    const { id } = created.body;
    const read = await req(alice, 'GET', `/ciphers/${id}`);
    expect(read.body).toEqual(created.body);
    expect(read.body).toMatchObject({ object: 'cipher', type: TYPE_OF[kind], name: body.name, notes: body.notes, fields: body.fields });
    const typeObject = { login: 'login', secureNote: 'secureNote', card: 'card', identity: 'identity', sshKey: 'sshKey' }[kind];
    const sent = body[typeObject] as Record<string, unknown>;
    const { response: _drop, ...expected } = { response: null, ...sent };
    if (kind === 'login') {
      expect(read.body.login.uris).toEqual((sent.uris as Record<string, unknown>[]).map(({ response: _r, ...u }) => u));
      expect(read.body.login.fido2Credentials).toEqual(sent.fido2Credentials);
      expect(read.body.login).toMatchObject({ username: sent.username, password: sent.password, totp: sent.totp });
      expect(read.body.passwordHistory).toEqual(body.passwordHistory);
      expect(decryptText(read.body.login.password, alice.account.userKey)).toBe('s3cret password');
    } else {
      expect(read.body[typeObject]).toEqual(expected);
    }
    for (const other of ['login', 'secureNote', 'card', 'identity', 'sshKey'].filter((k) => k !== typeObject)) {
      expect(read.body[other]).toBeNull();
    }
    expect(read.body).toMatchObject({ favorite: false, folderId: null, organizationId: null, deletedDate: null, archivedDate: null });
    expect(read.body.creationDate).toBe(read.body.revisionDate);
  });

  it('keeps the per-item key, reprompt and favorite', async () => {
    const key = encryptText('item key bytes', alice.account.userKey);
    const created = await create(alice, 'secureNote', { key, reprompt: 1, favorite: true });
    expect(created).toMatchObject({ key, reprompt: 1, favorite: true });
  });

  it('returns details with collection ids, and lists every item of the caller only', async () => {
    const mine = await create(alice);
    const theirs = await create(bob);
    const details = await req(alice, 'GET', `/ciphers/${mine.id}/details`);
    expect(details.body).toMatchObject({ object: 'cipherDetails', id: mine.id, collectionIds: [] });
    expect(schemaErrors(CipherDetailsResponse, details.body)).toEqual([]);
    const listed = await req(alice, 'GET', '/ciphers');
    expect(schemaErrors(CipherListResponse, listed.body)).toEqual([]);
    const ids = dataOf(listed.body).map((c) => c.id);
    expect(ids).toContain(mine.id);
    expect(ids).not.toContain(theirs.id);
  });

  it('answers 404 for another user’s item and for an unknown id, alike', async () => {
    const theirs = await create(bob);
    const foreign = await req(alice, 'GET', `/ciphers/${theirs.id}`);
    const unknown = await req(alice, 'GET', '/ciphers/6f1c2a3b-0000-4000-8000-000000000000');
    expect(foreign.status).toBe(404);
    expect(unknown.status).toBe(404);
    expect(foreign.body).toEqual(unknown.body);
    expect((await req(alice, 'GET', `/ciphers/${theirs.id}/details`)).status).toBe(404);
  });

  it('accepts upper-case ids and answers lower case', async () => {
    const created = await create(alice);
    const read = await req(alice, 'GET', `/ciphers/${String(created.id).toUpperCase()}`);
    expect(read.status).toBe(200);
    expect(read.body.id).toBe(created.id);
  });

  it('refuses callers without a token', async () => {
    expect((await server.request('GET', '/api/ciphers')).status).toBe(401);
    expect((await server.request('POST', '/api/ciphers', { json: cipherBody('login', alice.account.userKey) })).status).toBe(401);
  });

  it('records Cipher_Created and bumps the account revision date', async () => {
    const before = await revisionDate(alice);
    const created = await create(alice);
    expect(await revisionDate(alice)).toBeGreaterThanOrEqual(before);
    expect(await revisionDate(alice)).toBe(Date.parse(created.revisionDate));
    expect(await eventsOf(created.id)).toEqual([1100]);
  });
});

describe('bad input', () => {
  const bad = async (body: Record<string, unknown>): Promise<TestResponse['body']> => {
    const before = await countCiphers();
    const res = await req(alice, 'POST', '/ciphers', body);
    expect(res.status).toBe(400);
    expect(await countCiphers()).toBe(before);
    return res.body;
  };

  it('refuses an item without the sub-object of its type, naming it', async () => {
    const body = await bad(cipherBody('card', alice.account.userKey, { card: null }));
    expect(body.validationErrors).toEqual({ card: ['The card field is required for a Card item.'] });
    const login = await bad(cipherBody('card', alice.account.userKey, { type: 1 }));
    expect(login.validationErrors).toEqual({ login: ['The login field is required for a Login item.'] });
  });

  it('refuses malformed encrypted strings, naming the field', async () => {
    const key = alice.account.userKey;
    const good = encryptText('x', key);
    const cases: [Record<string, unknown>, string][] = [
      [{ name: 'plain text name' }, 'name'],
      [{ name: good.replace('2.', '9.') }, 'name'],
      [{ notes: good.split('|').slice(0, 2).join('|') }, 'notes'],
      [{ notes: `${good}|AAAA` }, 'notes'],
      [{ notes: good.replace('|', '|!!') }, 'notes'],
      [{ login: { username: 'alice', uris: [] } }, 'login.username'],
      [{ login: { uris: [{ uri: 'https://example.com' }] } }, 'login.uris[0].uri'],
      [{ fields: [{ type: 0, name: good, value: 'clear' }] }, 'fields[0].value'],
      [{ passwordHistory: [{ password: 'old', lastUsedDate: '2026-01-01T00:00:00Z' }] }, 'passwordHistory[0].password'],
      [{ key: 'not-a-key' }, 'key'],
    ];
    for (const [override, field] of cases) {
      const body = await bad(cipherBody('login', key, override));
      expect(Object.keys(body.validationErrors), JSON.stringify(override)).toEqual([field]);
      expect(body.validationErrors[field][0]).toMatch(/not a valid encrypted string/);
    }
  });

  it('accepts the other encryption types in their own shapes', async () => {
    const rsa = `4.${Buffer.alloc(256, 1).toString('base64')}`;
    const legacy = `0.${Buffer.alloc(16).toString('base64')}|${Buffer.alloc(32).toString('base64')}`;
    const cose = `7.${Buffer.alloc(80, 7).toString('base64')}`;
    const created = await create(alice, 'secureNote', { notes: rsa, name: cose, key: legacy });
    expect(created).toMatchObject({ notes: rsa, name: cose, key: legacy });
  });

  it('refuses unknown types, wrong value types and a missing name', async () => {
    expect((await bad(cipherBody('login', alice.account.userKey, { type: 9 }))).validationErrors).toHaveProperty('type');
    expect((await bad(cipherBody('login', alice.account.userKey, { favorite: 'yes' }))).validationErrors).toHaveProperty('favorite');
    expect((await bad(cipherBody('login', alice.account.userKey, { reprompt: 2 }))).validationErrors).toHaveProperty('reprompt');
    const { name: _n, ...nameless } = cipherBody('login', alice.account.userKey);
    expect((await bad(nameless)).validationErrors).toEqual({ name: ['The name field is required.'] });
    expect((await bad(cipherBody('login', alice.account.userKey, { folderId: 'nope' }))).validationErrors).toHaveProperty('folderId');
  });

  it('refuses a folder that is not the caller’s, and malformed JSON', async () => {
    const folder = await req(bob, 'POST', '/folders', { name: encryptText('bob folder', bob.account.userKey) });
    const body = await bad(cipherBody('login', alice.account.userKey, { folderId: folder.body.id }));
    expect(body.validationErrors).toEqual({ folderId: ['Folder not found.'] });
    const res = await server.request('POST', '/api/ciphers', { ...as(alice), body: '{"type":1,', headers: { ...CLIENT, 'content-type': 'application/json' } });
    expect(res.status).toBe(400);
  });

  it('refuses organization items on the personal route', async () => {
    const body = await bad(cipherBody('login', alice.account.userKey, { organizationId: '6f1c2a3b-0000-4000-8000-000000000001' }));
    expect(body.validationErrors).toHaveProperty('organizationId');
  });
});

describe('updating items', () => {
  it('replaces the whole item with PUT and with POST, returning the stored item', async () => {
    const created = await create(alice);
    const changed = cipherBody('login', alice.account.userKey, { lastKnownRevisionDate: created.revisionDate, favorite: true });
    for (const method of ['PUT', 'POST']) {
      const res = await req(alice, method, `/ciphers/${created.id}`, changed);
      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject({ id: created.id, name: changed.name, favorite: true, creationDate: created.creationDate });
      expect(Date.parse(res.body.revisionDate)).toBeGreaterThanOrEqual(Date.parse(created.revisionDate));
      expect((await req(alice, 'GET', `/ciphers/${created.id}`)).body).toEqual(res.body);
      changed.lastKnownRevisionDate = res.body.revisionDate;
    }
    expect(await eventsOf(created.id)).toEqual([1100, 1101, 1101]);
  });

  it('can change the type of an item', async () => {
    const created = await create(alice, 'login');
    const res = await req(alice, 'PUT', `/ciphers/${created.id}`, cipherBody('card', alice.account.userKey));
    expect(res.body).toMatchObject({ type: 3, login: null });
    expect(res.body.card).not.toBeNull();
  });

  it('refuses a stale lastKnownRevisionDate with the official message and writes nothing', async () => {
    const created = await create(alice);
    const stale = new Date(Date.parse(created.revisionDate) - 5000).toISOString();
    const res = await req(alice, 'PUT', `/ciphers/${created.id}`, cipherBody('login', alice.account.userKey, { lastKnownRevisionDate: stale }));
    expect(res.status).toBe(400);
    expect(res.body.message).toBe(OUT_OF_DATE);
    expect((await req(alice, 'GET', `/ciphers/${created.id}`)).body).toEqual(created);
    expect(await eventsOf(created.id)).toEqual([1100]);
  });

  it('accepts a revision date the client truncated to the second', async () => {
    const created = await create(alice);
    const truncated = `${String(created.revisionDate).slice(0, 19)}Z`;
    const res = await req(alice, 'PUT', `/ciphers/${created.id}`, cipherBody('login', alice.account.userKey, { lastKnownRevisionDate: truncated }));
    expect(res.status, res.text).toBe(200);
  });

  it('answers 404 for another user’s item and leaves it alone', async () => {
    const theirs = await create(bob);
    const res = await req(alice, 'PUT', `/ciphers/${theirs.id}`, cipherBody('login', alice.account.userKey));
    expect(res.status).toBe(404);
    expect((await req(bob, 'GET', `/ciphers/${theirs.id}`)).body).toEqual(theirs);
  });

  it('sets folder and favorite with partial, per user, in PUT and POST form', async () => {
    const created = await create(alice);
    const folder = (await req(alice, 'POST', '/folders', { name: encryptText('f', alice.account.userKey) })).body;
    const res = await req(alice, 'PUT', `/ciphers/${created.id}/partial`, { folderId: folder.id, favorite: true });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ folderId: folder.id, favorite: true, name: created.name });
    expect(schemaErrors(CipherResponse, res.body)).toEqual([]);
    const back = await req(alice, 'POST', `/ciphers/${created.id}/partial`, { folderId: null, favorite: false });
    expect(back.body).toMatchObject({ folderId: null, favorite: false });
    expect((await req(alice, 'PUT', `/ciphers/${created.id}/partial`, { folderId: '6f1c2a3b-0000-4000-8000-000000000002' })).status).toBe(400);
    const theirs = await create(bob);
    expect((await req(alice, 'PUT', `/ciphers/${theirs.id}/partial`, { favorite: true })).status).toBe(404);
  });
});

describe('lifecycle', () => {
  it('moves an item to the trash and back, with events and revision dates', async () => {
    const created = await create(alice);
    const deleted = await req(alice, 'PUT', `/ciphers/${created.id}/delete`);
    expect(deleted.status).toBe(200);
    expect(deleted.text).toBe('');
    const trashed = (await req(alice, 'GET', `/ciphers/${created.id}`)).body;
    expect(trashed.deletedDate).toEqual(expect.any(String));
    expect(Date.parse(trashed.revisionDate)).toBeGreaterThanOrEqual(Date.parse(created.revisionDate));
    expect(await revisionDate(alice)).toBe(Date.parse(trashed.revisionDate));
    // A second delete changes nothing and keeps the first date.
    await req(alice, 'PUT', `/ciphers/${created.id}/delete`);
    expect((await req(alice, 'GET', `/ciphers/${created.id}`)).body.deletedDate).toBe(trashed.deletedDate);
    const restored = await req(alice, 'PUT', `/ciphers/${created.id}/restore`);
    expect(restored.status).toBe(200);
    expect(restored.body).toMatchObject({ id: created.id, deletedDate: null });
    expect(schemaErrors(CipherResponse, restored.body)).toEqual([]);
    expect(await eventsOf(created.id)).toEqual([1100, 1115, 1116]);
  });

  it('refuses to edit an item in the trash until it is restored', async () => {
    const created = await create(alice);
    await req(alice, 'PUT', `/ciphers/${created.id}/delete`);
    const res = await req(alice, 'PUT', `/ciphers/${created.id}`, cipherBody('login', alice.account.userKey));
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/trash/);
  });

  it('archives and unarchives; a trashed archived item returns to the archive when restored', async () => {
    const created = await create(alice);
    const archived = await req(alice, 'PUT', `/ciphers/${created.id}/archive`);
    expect(archived.status).toBe(200);
    expect(archived.body.archivedDate).toEqual(expect.any(String));
    // Archiving twice changes nothing.
    expect((await req(alice, 'PUT', `/ciphers/${created.id}/archive`)).body).toEqual(archived.body);
    await req(alice, 'PUT', `/ciphers/${created.id}/delete`);
    const both = (await req(alice, 'GET', `/ciphers/${created.id}`)).body;
    expect(both).toMatchObject({ archivedDate: archived.body.archivedDate, deletedDate: expect.any(String) });
    const restored = (await req(alice, 'PUT', `/ciphers/${created.id}/restore`)).body;
    expect(restored).toMatchObject({ archivedDate: archived.body.archivedDate, deletedDate: null });
    const unarchived = await req(alice, 'PUT', `/ciphers/${created.id}/unarchive`);
    expect(unarchived.body.archivedDate).toBeNull();
    expect(schemaErrors(CipherResponse, unarchived.body)).toEqual([]);
  });

  it('refuses to archive an item in the trash', async () => {
    const created = await create(alice);
    await req(alice, 'PUT', `/ciphers/${created.id}/delete`);
    const res = await req(alice, 'PUT', `/ciphers/${created.id}/archive`);
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('Item is in the trash, the item must be restored before archiving.');
  });

  it('deletes permanently from any state: gone from every read', async () => {
    const active = await create(alice);
    const trashed = await create(alice);
    await req(alice, 'PUT', `/ciphers/${trashed.id}/delete`);
    expect((await req(alice, 'DELETE', `/ciphers/${active.id}`)).status).toBe(200);
    expect((await req(alice, 'POST', `/ciphers/${trashed.id}/delete`)).status).toBe(200);
    for (const id of [active.id, trashed.id]) {
      expect((await req(alice, 'GET', `/ciphers/${id}`)).status).toBe(404);
      expect((await req(alice, 'PUT', `/ciphers/${id}/restore`)).status).toBe(404);
      expect(await eventsOf(id)).toContain(1102);
    }
    const ids = dataOf((await req(alice, 'GET', '/ciphers')).body).map((c) => c.id);
    expect(ids).not.toContain(active.id);
    const synced = ciphersOf((await req(alice, 'GET', '/sync')).body).map((c) => c.id);
    expect(synced).not.toContain(active.id);
    expect(synced).not.toContain(trashed.id);
  });

  it('answers 404 on every single-item operation for another user’s item and changes nothing', async () => {
    const theirs = await create(bob);
    for (const [method, path] of [
      ['PUT', 'delete'],
      ['PUT', 'restore'],
      ['PUT', 'archive'],
      ['PUT', 'unarchive'],
      ['DELETE', ''],
      ['POST', 'delete'],
    ] as const) {
      const res = await req(alice, method, `/ciphers/${theirs.id}${path ? `/${path}` : ''}`);
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    expect((await req(bob, 'GET', `/ciphers/${theirs.id}`)).body).toEqual(theirs);
    expect(await eventsOf(theirs.id)).toEqual([1100]);
  });
});

describe('bulk operations', () => {
  let mine: string[];
  let theirs: string;
  beforeEach(async () => {
    mine = [(await create(alice)).id, (await create(alice)).id];
    theirs = (await create(bob)).id;
  });

  const tooMany = Array.from({ length: 501 }, (_, i) => `6f1c2a3b-0000-4000-8000-${String(i).padStart(12, '0')}`);

  it.each([
    ['PUT', '/ciphers/delete', 'You can only delete up to 500 items at a time.'],
    ['PUT', '/ciphers/restore', 'You can only restore up to 500 items at a time.'],
    ['PUT', '/ciphers/archive', 'You can only archive up to 500 items at a time.'],
    ['PUT', '/ciphers/unarchive', 'You can only unarchive up to 500 items at a time.'],
    ['PUT', '/ciphers/move', 'You can only move up to 500 items at a time.'],
    ['POST', '/ciphers/move', 'You can only move up to 500 items at a time.'],
    ['DELETE', '/ciphers', 'You can only delete up to 500 items at a time. Consider using the "Purge Vault" option instead.'],
    ['POST', '/ciphers/delete', 'You can only delete up to 500 items at a time. Consider using the "Purge Vault" option instead.'],
  ])('%s %s refuses 501 ids, naming the limit', async (method, path, message) => {
    const res = await req(alice, method, path, { ids: [...mine, ...tooMany.slice(2)], folderId: null });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe(message);
    for (const id of mine) expect((await req(alice, 'GET', `/ciphers/${id}`)).body).toMatchObject({ deletedDate: null, archivedDate: null });
  });

  it('accepts exactly 500 ids', async () => {
    const res = await req(alice, 'PUT', '/ciphers/delete', { ids: [...mine, ...tooMany.slice(0, 498)] });
    expect(res.status).toBe(200);
  });

  it('soft-deletes and restores the caller’s items, ignoring foreign ids', async () => {
    expect((await req(alice, 'PUT', '/ciphers/delete', { ids: [...mine, theirs] })).status).toBe(200);
    for (const id of mine) expect((await req(alice, 'GET', `/ciphers/${id}`)).body.deletedDate).not.toBeNull();
    expect((await req(bob, 'GET', `/ciphers/${theirs}`)).body.deletedDate).toBeNull();
    const restored = await req(alice, 'PUT', '/ciphers/restore', { ids: [...mine, theirs] });
    expect(restored.status).toBe(200);
    expect(schemaErrors(CipherResponseList, restored.body)).toEqual([]);
    expect(dataOf(restored.body).map((c) => c.id).sort()).toEqual([...mine].sort());
    expect(await eventsOf(theirs)).toEqual([1100]);
  });

  it('archives and unarchives in bulk, returning the changed items', async () => {
    const archived = await req(alice, 'PUT', '/ciphers/archive', { ids: [...mine, theirs] });
    expect(dataOf(archived.body).map((c) => c.id).sort()).toEqual([...mine].sort());
    expect(dataOf(archived.body).every((c) => c.archivedDate)).toBe(true);
    expect((await req(alice, 'PUT', '/ciphers/archive', { ids: mine })).body.data).toEqual([]);
    expect((await req(bob, 'GET', `/ciphers/${theirs}`)).body.archivedDate).toBeNull();
    const unarchived = await req(alice, 'PUT', '/ciphers/unarchive', { ids: mine });
    expect(unarchived.body.data).toHaveLength(2);
    expect(dataOf(unarchived.body).every((c) => c.archivedDate === null)).toBe(true);
  });

  it('skips trashed items when archiving in bulk', async () => {
    await req(alice, 'PUT', `/ciphers/${mine[0]}/delete`);
    const archived = await req(alice, 'PUT', '/ciphers/archive', { ids: mine });
    expect(dataOf(archived.body).map((c) => c.id)).toEqual([mine[1]]);
  });

  it('moves items into a folder and out of it, ignoring foreign ids', async () => {
    const folder = (await req(alice, 'POST', '/folders', { name: encryptText('f', alice.account.userKey) })).body;
    expect((await req(alice, 'PUT', '/ciphers/move', { ids: [...mine, theirs], folderId: folder.id })).status).toBe(200);
    for (const id of mine) expect((await req(alice, 'GET', `/ciphers/${id}`)).body.folderId).toBe(folder.id);
    expect((await req(bob, 'GET', `/ciphers/${theirs}`)).body.folderId).toBeNull();
    expect((await req(alice, 'POST', '/ciphers/move', { ids: mine, folderId: null })).status).toBe(200);
    for (const id of mine) expect((await req(alice, 'GET', `/ciphers/${id}`)).body.folderId).toBeNull();
  });

  it('refuses to move into a folder that is not the caller’s', async () => {
    const folder = (await req(bob, 'POST', '/folders', { name: encryptText('f', bob.account.userKey) })).body;
    const res = await req(alice, 'PUT', '/ciphers/move', { ids: mine, folderId: folder.id });
    expect(res.status).toBe(400);
    expect(res.body.validationErrors).toEqual({ folderId: ['Folder not found.'] });
  });

  it('deletes permanently in bulk with DELETE and POST, ignoring foreign ids', async () => {
    expect((await req(alice, 'DELETE', '/ciphers', { ids: [mine[0], theirs] })).status).toBe(200);
    expect((await req(alice, 'POST', '/ciphers/delete', { ids: [mine[1]] })).status).toBe(200);
    for (const id of mine) expect((await req(alice, 'GET', `/ciphers/${id}`)).status).toBe(404);
    expect((await req(bob, 'GET', `/ciphers/${theirs}`)).status).toBe(200);
  });

  it('refuses invalid GUIDs in bulk bodies, naming the entry', async () => {
    const res = await req(alice, 'PUT', '/ciphers/delete', { ids: [mine[0], 'nope'] });
    expect(res.status).toBe(400);
    expect(res.body.validationErrors).toEqual({ 'ids[1]': ['The ids[1] field must be a GUID.'] });
  });

  it('bumps the account revision date on every bulk change', async () => {
    for (const [method, path] of [
      ['PUT', '/ciphers/archive'],
      ['PUT', '/ciphers/unarchive'],
      ['PUT', '/ciphers/delete'],
      ['PUT', '/ciphers/restore'],
      ['PUT', '/ciphers/move'],
      ['DELETE', '/ciphers'],
    ] as const) {
      const before = await revisionDate(alice);
      await new Promise((r) => setTimeout(r, 5));
      await req(alice, method, path, { ids: mine, folderId: null });
      expect(await revisionDate(alice), path).toBeGreaterThan(before);
    }
  });
});
