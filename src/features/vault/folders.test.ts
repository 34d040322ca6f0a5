import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, type LoggedInUser } from '../../../test/support/accounts.js';
import { decryptText, encryptText } from '../../../test/support/bw-crypto.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { cipherBody, dataOf, schemaErrors } from '../../../test/support/vault.js';
import { ListOf } from '../../http/schemas.js';
import { FolderResponse } from './folders.schemas.js';

let server: TestServer;
let alice: LoggedInUser;
let bob: LoggedInUser;

beforeAll(async () => {
  server = await startTestServer();
  alice = await createUser(server, { email: 'alice@example.com' });
  bob = await createUser(server, { email: 'bob@example.com' });
});
afterAll(async () => server?.close());

const req = (user: LoggedInUser, method: string, path: string, json?: unknown) =>
  server.request(method, `/api${path}`, { token: user.accessToken, ...(json === undefined ? {} : { json }) });
const name = (user: LoggedInUser, text: string) => encryptText(text, user.account.userKey);
const revisionDate = async (user: LoggedInUser) => (await req(user, 'GET', '/accounts/revision-date')).body as number;

describe('folders', () => {
  it('creates, reads, lists and renames a folder, keeping the encrypted name as given', async () => {
    const created = await req(alice, 'POST', '/folders', { name: name(alice, 'Work') });
    expect(created.status, created.text).toBe(200);
    expect(created.body).toEqual({ object: 'folder', id: expect.any(String), name: created.body.name, revisionDate: expect.any(String) });
    expect(decryptText(created.body.name, alice.account.userKey)).toBe('Work');
    expect((await req(alice, 'GET', `/folders/${created.body.id}`)).body).toEqual(created.body);
    const listed = await req(alice, 'GET', '/folders');
    expect(schemaErrors(ListOf(FolderResponse), listed.body)).toEqual([]);
    expect(listed.body.data).toContainEqual(created.body);
    for (const method of ['PUT', 'POST']) {
      const renamed = await req(alice, method, `/folders/${created.body.id}`, { name: name(alice, `Renamed ${method}`) });
      expect(renamed.status).toBe(200);
      expect(decryptText(renamed.body.name, alice.account.userKey)).toBe(`Renamed ${method}`);
      expect(Date.parse(renamed.body.revisionDate)).toBe(await revisionDate(alice));
    }
  });

  it('hides folders owned by other users', async () => {
    const theirs = (await req(bob, 'POST', '/folders', { name: name(bob, 'Bob') })).body;
    expect((await req(alice, 'GET', `/folders/${theirs.id}`)).status).toBe(404);
    expect((await req(alice, 'PUT', `/folders/${theirs.id}`, { name: name(alice, 'x') })).status).toBe(404);
    expect((await req(alice, 'DELETE', `/folders/${theirs.id}`)).status).toBe(404);
    expect(dataOf((await req(alice, 'GET', '/folders')).body).map((f) => f.id)).not.toContain(theirs.id);
    expect((await req(bob, 'GET', `/folders/${theirs.id}`)).body).toEqual(theirs);
  });

  it('refuses a missing or malformed name, naming the field', async () => {
    expect((await req(alice, 'POST', '/folders', {})).body.validationErrors).toEqual({ name: ['The name field is required.'] });
    const bad = await req(alice, 'POST', '/folders', { name: 'Work' });
    expect(bad.status).toBe(400);
    expect(bad.body.validationErrors.name[0]).toMatch(/not a valid encrypted string/);
  });

  it('moves the items of a deleted folder to no folder and bumps their revision dates', async () => {
    const folder = (await req(alice, 'POST', '/folders', { name: name(alice, 'Doomed') })).body;
    const item = (await req(alice, 'POST', '/ciphers', cipherBody('login', alice.account.userKey, { folderId: folder.id }))).body;
    expect(item.folderId).toBe(folder.id);
    await new Promise((r) => setTimeout(r, 5));
    for (const [method, path] of [['DELETE', `/folders/${folder.id}`]] as const) {
      const res = await req(alice, method, path);
      expect(res.status).toBe(200);
      expect(res.text).toBe('');
    }
    expect((await req(alice, 'GET', `/folders/${folder.id}`)).status).toBe(404);
    const after = (await req(alice, 'GET', `/ciphers/${item.id}`)).body;
    expect(after.folderId).toBeNull();
    expect(Date.parse(after.revisionDate)).toBeGreaterThan(Date.parse(item.revisionDate));
    expect(await revisionDate(alice)).toBe(Date.parse(after.revisionDate));
  });

  it('deletes with the older POST form too', async () => {
    const folder = (await req(alice, 'POST', '/folders', { name: name(alice, 'Old client') })).body;
    expect((await req(alice, 'POST', `/folders/${folder.id}/delete`)).status).toBe(200);
    expect((await req(alice, 'GET', `/folders/${folder.id}`)).status).toBe(404);
  });

  it('deletes several folders at once, passing over ids that are not the caller\'s, and refuses an empty list', async () => {
    const mine = [];
    for (const n of [1, 2, 3]) mine.push((await req(bob, 'POST', '/folders', { name: name(bob, `Bulk ${n}`) })).body.id as string);
    const alices = (await req(alice, 'POST', '/folders', { name: name(alice, 'Not Bob\'s') })).body.id as string;
    const item = (await req(bob, 'POST', '/ciphers', cipherBody('login', bob.account.userKey, { folderId: mine[0] }))).body;
    await new Promise((r) => setTimeout(r, 5));
    const res = await req(bob, 'DELETE', '/folders', { ids: [mine[0], mine[1], alices] });
    expect(res.status, res.text).toBe(200);
    const left = ((await req(bob, 'GET', '/folders')).body.data as { id: string }[]).map((f) => f.id);
    expect(left).toContain(mine[2]);
    expect(left).not.toContain(mine[0]);
    expect(left).not.toContain(mine[1]);
    expect((await req(alice, 'GET', `/folders/${alices}`)).status).toBe(200);
    const after = (await req(bob, 'GET', `/ciphers/${item.id}`)).body;
    expect(after.folderId).toBeNull();
    expect(Date.parse(after.revisionDate)).toBeGreaterThan(Date.parse(item.revisionDate));

    const empty = await req(bob, 'DELETE', '/folders', { ids: [] });
    expect(empty.status).toBe(400);
    expect(empty.text).toContain('No folder ids provided.');
    expect((await req(bob, 'DELETE', '/folders', { ids: ['not-a-guid'] })).status).toBe(400);
  });

  it('deletes every folder of the caller at once, and only theirs', async () => {
    for (const n of [1, 2]) await req(bob, 'POST', '/folders', { name: name(bob, `All ${n}`) });
    const aliceBefore = ((await req(alice, 'GET', '/folders')).body.data as unknown[]).length;
    expect((await req(bob, 'DELETE', '/folders/all')).status).toBe(200);
    expect((await req(bob, 'GET', '/folders')).body.data).toEqual([]);
    expect(((await req(alice, 'GET', '/folders')).body.data as unknown[]).length).toBe(aliceBefore);
  });
});
