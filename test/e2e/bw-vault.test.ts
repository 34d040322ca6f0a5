/**
 * The official `bw` CLI against a running server over HTTPS: the personal vault, end to end.
 * One server and one CLI session for the whole file; each command costs seconds, so the
 * steps build on each other in order.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { passwordGrantForm, registerAccount, TEST_DEVICE } from '../support/accounts.js';
import { createBwCli, type BwCli } from '../support/bw-cli.js';
import { encryptText, type TestAccount } from '../support/bw-crypto.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { createTestTls, type TestTls } from '../support/tls.js';
import { cipherBody } from '../support/vault.js';

// Each CLI command takes seconds, many more on a busy machine.
const SLOW = 300_000;
let tls: TestTls;
let server: TestServer;
let bw: BwCli;
let account: TestAccount;

const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64');

interface Item {
  id: string;
  type: number;
  name: string;
  notes: string | null;
  folderId: string | null;
  favorite: boolean;
  reprompt: number;
  fields?: { name: string; value: string | null; type: number; linkedId: number | null }[];
  login?: Record<string, unknown> & { uris?: { uri: string; match: number | null }[]; password?: string };
  card?: Record<string, unknown>;
  identity?: Record<string, unknown>;
  secureNote?: Record<string, unknown>;
  sshKey?: Record<string, unknown>;
  deletedDate?: string | null;
}

const fields = [
  { name: 'text field', value: 'plain value', type: 0, linkedId: null },
  { name: 'hidden field', value: 'hidden value', type: 1, linkedId: null },
  { name: 'flag', value: 'true', type: 2, linkedId: null },
  { name: 'linked', value: null, type: 3, linkedId: 101 },
];

const TOTP_SECRET = 'JBSWY3DPEHPK3PXP';

const templates: Record<string, Record<string, unknown>> = {
  login: {
    type: 1,
    name: 'E2E Login',
    notes: 'login notes',
    favorite: true,
    fields,
    login: {
      uris: [
        { match: 0, uri: 'https://example.com/login' },
        { match: null, uri: 'https://two.example.com' },
      ],
      username: 'alice',
      password: 'first password',
      totp: TOTP_SECRET,
    },
    reprompt: 0,
  },
  secureNote: { type: 2, name: 'E2E Note', notes: 'a secret note', favorite: false, fields: [], secureNote: { type: 0 }, reprompt: 1 },
  card: {
    type: 3,
    name: 'E2E Card',
    notes: null,
    favorite: false,
    card: { cardholderName: 'Alice Doe', brand: 'Visa', number: '4111111111111111', expMonth: '12', expYear: '2030', code: '123' },
    reprompt: 0,
  },
  identity: {
    type: 4,
    name: 'E2E Identity',
    notes: null,
    favorite: false,
    identity: {
      title: 'Ms',
      firstName: 'Alice',
      middleName: 'M',
      lastName: 'Doe',
      address1: '1 Main St',
      address2: 'Apt 2',
      address3: null,
      city: 'Springfield',
      state: 'OR',
      postalCode: '97477',
      country: 'US',
      company: 'Acme',
      email: 'alice@example.com',
      phone: '555-0100',
      ssn: '123-45-6789',
      username: 'alice',
      passportNumber: 'P123',
      licenseNumber: 'L456',
    },
    reprompt: 0,
  },
  sshKey: {
    type: 5,
    name: 'E2E SSH key',
    notes: null,
    favorite: false,
    sshKey: {
      privateKey: '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n',
      publicKey: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIExample e2e@strongroom',
      keyFingerprint: 'SHA256:e2eFingerprintValue',
    },
    reprompt: 0,
  },
};

const created = new Map<string, Item>();

/** What `bw` prints for an item it was given: null properties are left out of its JSON. */
function printed(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(printed);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([, v]) => v !== null)
        .map(([k, v]) => [k, printed(v)]),
    );
  }
  return value;
}
const expected = (template: Record<string, unknown>) => printed({ fields: [], ...template }) as Record<string, unknown>;

async function createItem(template: Record<string, unknown>): Promise<Item> {
  return bw.json<Item>(['create', 'item', encode(template)]);
}

beforeAll(async () => {
  tls = await createTestTls();
  server = await startTestServer({ tls });
  account = await registerAccountOverTls();
  bw = await createBwCli({ serverUrl: server.baseUrl, caPath: tls.caPath });
  await bw.configServer();
  const login = await bw.login(account.email, account.password);
  expect(login.code, login.stderr).toBe(0);
}, SLOW);

afterAll(async () => {
  await bw?.dispose();
  await server?.close();
});

async function registerAccountOverTls(): Promise<TestAccount> {
  return registerAccount(server, { email: 'e2e@example.com', name: 'E2E', derivation: 'real' });
}

describe('bw against the personal vault', () => {
  it('syncs an empty vault', async () => {
    const sync = await bw.run(['sync', '-f']);
    expect(sync.code, sync.stderr).toBe(0);
    expect(sync.stdout).toContain('Syncing complete.');
    expect(await bw.json<Item[]>(['list', 'items'])).toEqual([]);
  }, SLOW);

  it.each(Object.keys(templates))('creates a %s item and reads every decrypted field back', async (kind) => {
    const template = templates[kind] as Record<string, unknown>;
    const item = await createItem(template);
    created.set(kind, item);
    const read = await bw.json<Item>(['get', 'item', item.id]);
    expect(read).toMatchObject(expected(template));
    expect(read).toEqual(item);
  }, SLOW);

  it('keeps every item after a fresh sync from the server', async () => {
    const sync = await bw.run(['sync', '-f']);
    expect(sync.code, sync.stderr).toBe(0);
    const items = await bw.json<Item[]>(['list', 'items']);
    expect(items.map((i) => i.name).sort()).toEqual(Object.values(templates).map((t) => t.name).sort());
    for (const item of items) {
      const kind = [...created.entries()].find(([, c]) => c.id === item.id)?.[0] ?? '';
      expect(item).toMatchObject(expected(templates[kind] as Record<string, unknown>));
    }
    const found = await bw.json<Item[]>(['list', 'items', '--search', 'Identity']);
    expect(found.map((i) => i.name)).toEqual(['E2E Identity']);
  }, SLOW);

  it('gets the password and a TOTP code', async () => {
    const id = created.get('login')?.id ?? '';
    expect((await bw.run(['get', 'password', id])).stdout).toBe('first password');
    const totp = await bw.run(['get', 'totp', id]);
    expect(totp.code, totp.stderr).toBe(0);
    expect(totp.stdout).toMatch(/^\d{6}$/);
  }, SLOW);

  it('edits an item, keeping the old password in its history', async () => {
    const item = await bw.json<Item>(['get', 'item', created.get('login')?.id ?? '']);
    const edited = await bw.json<Item & { passwordHistory: { password: string }[] }>([
      'edit',
      'item',
      item.id,
      encode({ ...item, notes: 'edited notes', login: { ...item.login, password: 'second password' } }),
    ]);
    expect(edited).toMatchObject({ notes: 'edited notes', login: { password: 'second password' } });
    await bw.run(['sync', '-f']);
    const read = await bw.json<Item & { passwordHistory: { password: string }[] }>(['get', 'item', item.id]);
    expect(read.login?.password).toBe('second password');
    expect(read.passwordHistory.map((h) => h.password)).toContain('first password');
  }, SLOW);

  let folder: { id: string; name: string };
  it('creates and renames a folder and moves an item into it', async () => {
    folder = await bw.json<{ id: string; name: string }>(['create', 'folder', encode({ name: 'E2E Folder' })]);
    expect(folder.name).toBe('E2E Folder');
    const renamed = await bw.json<{ id: string; name: string }>(['edit', 'folder', folder.id, encode({ name: 'Renamed Folder' })]);
    expect(renamed).toMatchObject({ id: folder.id, name: 'Renamed Folder' });
    const note = await bw.json<Item>(['get', 'item', created.get('secureNote')?.id ?? '']);
    await bw.json<Item>(['edit', 'item', note.id, encode({ ...note, folderId: folder.id })]);
    await bw.run(['sync', '-f']);
    expect((await bw.json<Item[]>(['list', 'items', '--folderid', folder.id])).map((i) => i.id)).toEqual([note.id]);
    expect((await bw.json<{ name: string }[]>(['list', 'folders'])).map((f) => f.name)).toContain('Renamed Folder');
  }, SLOW);

  it('deletes a folder: its item moves to no folder', async () => {
    const note = await bw.json<Item>(['get', 'item', created.get('secureNote')?.id ?? '']);
    expect(note.folderId).toBe(folder.id);
    const deleted = await bw.run(['delete', 'folder', folder.id]);
    expect(deleted.code, deleted.stderr).toBe(0);
    await bw.run(['sync', '-f']);
    expect((await bw.json<{ name: string }[]>(['list', 'folders'])).map((f) => f.name)).not.toContain('Renamed Folder');
    expect((await bw.json<Item>(['get', 'item', note.id])).folderId ?? null).toBeNull();
  }, SLOW);

  it('moves an item to the trash, lists the trash and restores it', async () => {
    const id = created.get('card')?.id ?? '';
    expect((await bw.run(['delete', 'item', id])).code).toBe(0);
    await bw.run(['sync', '-f']);
    expect((await bw.json<Item[]>(['list', 'items', '--trash'])).map((i) => i.id)).toEqual([id]);
    expect((await bw.json<Item[]>(['list', 'items'])).map((i) => i.id)).not.toContain(id);
    const restore = await bw.run(['restore', 'item', id]);
    expect(restore.code, restore.stderr).toBe(0);
    expect(await bw.json<Item[]>(['list', 'items', '--trash'])).toEqual([]);
    expect((await bw.json<Item>(['get', 'item', id])).card).toMatchObject({ number: '4111111111111111' });
  }, SLOW);

  it('deletes an item permanently: gone after a fresh sync', async () => {
    const id = created.get('identity')?.id ?? '';
    const res = await bw.run(['delete', 'item', id, '--permanent']);
    expect(res.code, res.stderr).toBe(0);
    await bw.run(['sync', '-f']);
    expect((await bw.json<Item[]>(['list', 'items'])).map((i) => i.id)).not.toContain(id);
    expect((await bw.json<Item[]>(['list', 'items', '--trash'])).map((i) => i.id)).not.toContain(id);
    expect((await bw.run(['get', 'item', id])).code).not.toBe(0);
  }, SLOW);

  it('exports the vault as Bitwarden JSON and imports it back', async () => {
    const file = join(bw.appDataDir, 'export.json');
    const exported = await bw.run(['export', '--format', 'json', '--output', file]);
    expect(exported.code, exported.stderr).toBe(0);
    const data = JSON.parse(await readFile(file, 'utf8')) as { items: Item[]; folders: unknown[] };
    const before = await bw.json<Item[]>(['list', 'items']);
    expect(data.items.map((i) => i.name).sort()).toEqual(before.map((i) => i.name).sort());
    // A new folder in the file, with one item in it, exercises folderRelationships.
    const withFolder = {
      ...data,
      folders: [{ id: 'c0ffee00-0000-4000-8000-000000000001', name: 'Imported Folder' }],
      items: data.items.map((i, n) => ({ ...i, folderId: n === 0 ? 'c0ffee00-0000-4000-8000-000000000001' : null })),
    };
    await writeFile(file, JSON.stringify(withFolder));
    const imported = await bw.run(['import', 'bitwardenjson', file]);
    expect(imported.code, imported.stderr).toBe(0);
    await bw.run(['sync', '-f']);
    const after = await bw.json<Item[]>(['list', 'items']);
    expect(after).toHaveLength(before.length * 2);
    const folders = await bw.json<{ id: string; name: string }[]>(['list', 'folders']);
    const importedFolder = folders.find((f) => f.name === 'Imported Folder');
    expect(importedFolder).toBeDefined();
    expect((await bw.json<Item[]>(['list', 'items', '--folderid', importedFolder?.id ?? ''])).map((i) => i.name)).toEqual([data.items[0]?.name]);
    const login = after.filter((i) => i.name === 'E2E Login');
    expect(login).toHaveLength(2);
    expect(login[1]).toMatchObject({ login: { username: 'alice', password: 'second password', totp: TOTP_SECRET } });
  }, SLOW);

  it('sees a change made through the API by a second session after bw sync', async () => {
    const token = await server.request('POST', '/identity/connect/token', {
      form: { ...passwordGrantForm(account, { ...TEST_DEVICE, deviceIdentifier: '5b0f7a1e-2222-4333-8444-955566677788' }), client_id: 'web' },
    });
    expect(token.status, token.text).toBe(200);
    const body = cipherBody('login', account.userKey, { name: encryptText('From the web', account.userKey) });
    const res = await server.request('POST', '/api/ciphers', { token: token.body.access_token, json: body });
    expect(res.status, res.text).toBe(200);
    // Without -f the CLI asks for the account revision date first and syncs only when it moved.
    const sync = await bw.run(['sync']);
    expect(sync.code, sync.stderr).toBe(0);
    const item = await bw.json<Item>(['get', 'item', res.body.id]);
    expect(item).toMatchObject({ name: 'From the web', login: { username: 'alice', password: 's3cret password' } });
  }, SLOW);
});
