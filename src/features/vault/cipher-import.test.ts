import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, passwordGrantForm, type LoggedInUser } from '../../../test/support/accounts.js';
import { decryptText, encryptText } from '../../../test/support/bw-crypto.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { cipherBody, ciphersOf, dataOf } from '../../../test/support/vault.js';
import { IMPORT_TOO_LARGE } from './cipher-import.js';
import { failInserts } from '../../../test/support/failures.js';

let server: TestServer;
let alice: LoggedInUser;

beforeAll(async () => {
  server = await startTestServer();
  alice = await createUser(server, { email: 'alice@example.com' });
});
afterAll(async () => server?.close());

const req = (user: LoggedInUser, method: string, path: string, json?: unknown) =>
  server.request(method, `/api${path}`, { token: user.accessToken, ...(json === undefined ? {} : { json }) });
const enc = (text: string) => encryptText(text, alice.account.userKey);
const count = async (table: 'ciphers' | 'folders') =>
  (await server.database.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n;

describe('POST /ciphers/import', () => {
  it('creates folders and items and files each item in its folder', async () => {
    const res = await req(alice, 'POST', '/ciphers/import', {
      folders: [{ name: enc('Imported A') }, { name: enc('Imported B'), id: '6f1c2a3b-0000-4000-8000-00000000000a' }],
      ciphers: [cipherBody('login', alice.account.userKey), cipherBody('card', alice.account.userKey), cipherBody('secureNote', alice.account.userKey)],
      folderRelationships: [
        { key: 0, value: 1 },
        { key: 1, value: 0 },
      ],
    });
    expect(res.status, res.text).toBe(200);
    const folders = (await req(alice, 'GET', '/folders')).body.data as { id: string; name: string }[];
    expect(folders).toHaveLength(2);
    // An id that is not one of the user's folders is not taken over.
    expect(folders.map((f) => f.id)).not.toContain('6f1c2a3b-0000-4000-8000-00000000000a');
    const items = dataOf((await req(alice, 'GET', '/ciphers')).body);
    expect(items).toHaveLength(3);
    const folderOf = (type: number) => items.find((c) => c.type === type)?.folderId;
    const named = (text: string) => folders.find((f) => decryptText(f.name, alice.account.userKey) === text)?.id;
    expect(folderOf(1)).toBe(named('Imported B'));
    expect(folderOf(3)).toBe(named('Imported A'));
    expect(folderOf(2)).toBeNull();
    const events = await server.database.db.selectFrom('events').select('type').where('type', '=', 1100).execute();
    expect(events.length).toBeGreaterThanOrEqual(3);
  });

  it('reuses the caller’s existing folder when the import names its id', async () => {
    const existing = (await req(alice, 'POST', '/folders', { name: enc('Existing') })).body;
    const before = await count('folders');
    const res = await req(alice, 'POST', '/ciphers/import', {
      folders: [{ name: enc('Existing'), id: existing.id }],
      ciphers: [cipherBody('identity', alice.account.userKey)],
      folderRelationships: [{ key: 0, value: 0 }],
    });
    expect(res.status).toBe(200);
    expect(await count('folders')).toBe(before);
    const item = dataOf((await req(alice, 'GET', '/ciphers')).body).find((c) => c.type === 4);
    expect(item?.folderId).toBe(existing.id);
  });

  it('writes nothing when one item is bad, naming it by its place', async () => {
    const [ciphers, folders] = [await count('ciphers'), await count('folders')];
    const res = await req(alice, 'POST', '/ciphers/import', {
      folders: [{ name: enc('Never') }],
      ciphers: [cipherBody('login', alice.account.userKey), cipherBody('card', alice.account.userKey, { card: null })],
      folderRelationships: [],
    });
    expect(res.status).toBe(400);
    expect(res.body.validationErrors).toEqual({ 'ciphers[1].card': ['The card field is required for a Card item.'] });
    const malformed = await req(alice, 'POST', '/ciphers/import', {
      folders: [],
      ciphers: [cipherBody('login', alice.account.userKey, { notes: 'clear text' })],
      folderRelationships: [],
    });
    expect(Object.keys(malformed.body.validationErrors)).toEqual(['ciphers[0].notes']);
    const badIndex = await req(alice, 'POST', '/ciphers/import', {
      folders: [],
      ciphers: [cipherBody('login', alice.account.userKey)],
      folderRelationships: [{ key: 0, value: 3 }],
    });
    expect(badIndex.body.validationErrors).toEqual({ 'folderRelationships[0].value': ['No folder has this index.'] });
    expect([await count('ciphers'), await count('folders')]).toEqual([ciphers, folders]);
  });

  it('undoes the slices already written when a later one fails, leaving no item or folder behind', async () => {
    // A database failure on the 220th item, in the third slice of 100 (a full disk would do the same).
    const restore = await failInserts(server.database.db, 'ciphers', 'reprompt', 1);
    try {
      const [ciphers, folders] = [await count('ciphers'), await count('folders')];
      const note = { type: 2, name: enc('n'), secureNote: { type: 0 } };
      const items = Array.from({ length: 250 }, (_, i) => ({ ...note, reprompt: i === 219 ? 1 : 0 }));
      const res = await req(alice, 'POST', '/ciphers/import', { folders: [{ name: enc('Undone') }], ciphers: items, folderRelationships: [{ key: 0, value: 0 }] });
      expect(res.status).toBe(500);
      expect([await count('ciphers'), await count('folders')]).toEqual([ciphers, folders]);
    } finally {
      await restore();
    }
  });

  it('runs one user’s imports one after another, each whole', async () => {
    const before = await count('ciphers');
    const note = { type: 2, name: enc('n'), secureNote: { type: 0 } };
    const body = { folders: [], ciphers: Array(300).fill(note), folderRelationships: [] };
    const answers = await Promise.all([req(alice, 'POST', '/ciphers/import', body), req(alice, 'POST', '/ciphers/import', body)]);
    expect(answers.map((res) => res.status)).toEqual([200, 200]);
    expect(Number(await count('ciphers'))).toBe(Number(before) + 600);
  });

  it('refuses more than 7000 items at once', async () => {
    const note = { type: 2, name: enc('n'), secureNote: { type: 0 } };
    const res = await req(alice, 'POST', '/ciphers/import', { folders: [], ciphers: Array(7001).fill(note), folderRelationships: [] });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe(IMPORT_TOO_LARGE);
  });
});

describe('changes made by another session', () => {
  it('move the account revision date, and the next sync carries them', async () => {
    const before = (await req(alice, 'GET', '/accounts/revision-date')).body as number;
    const second = await server.request('POST', '/identity/connect/token', {
      form: { ...passwordGrantForm(alice.account, { deviceType: '9', deviceIdentifier: '0b6e3c1a-1111-4222-8333-944455566677', deviceName: 'firefox' }), client_id: 'web' },
    });
    expect(second.status, second.text).toBe(200);
    await new Promise((r) => setTimeout(r, 5));
    const created = await server.request('POST', '/api/ciphers', { token: second.body.access_token, json: cipherBody('login', alice.account.userKey) });
    expect(created.status).toBe(200);
    expect((await req(alice, 'GET', '/accounts/revision-date')).body).toBeGreaterThan(before);
    const synced = ciphersOf((await req(alice, 'GET', '/sync')).body).map((c) => c.id);
    expect(synced).toContain(created.body.id);
  });
});
