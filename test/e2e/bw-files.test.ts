/**
 * The official `bw` CLI against a running server over HTTPS: item attachments and Send, end to
 * end. One server and one CLI session; the steps build on each other in order (each command
 * costs seconds). PUBLIC_URL names the real port, as the download and Send URLs carry it.
 */
import { createCipheriv, createHmac, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, loginAccount, registerAccount } from '../support/accounts.js';
import { seedCollection } from '../support/admin.js';
import { encryptText, encryptToEncString, generateSymmetricKey, rsaEncryptToEncString, type SymmetricKey } from '../support/bw-crypto.js';
import { seedMembership, seedOrganization } from '../support/orgs.js';
import { cipherBody } from '../support/vault.js';
import { OrganizationUserType } from '../../src/platform/access/roles.js';
import { Agent, fetch as undiciFetch, FormData } from 'undici';
import { createBwCli, type BwCli } from '../support/bw-cli.js';
import { freePort } from '../support/program.js';
import type { TestAccount } from '../support/bw-crypto.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { createTestTls, type TestTls } from '../support/tls.js';

const SLOW = 300_000;
let tls: TestTls;
let server: TestServer;
let bw: BwCli;
let memberBw: BwCli;
let account: TestAccount;
let dir: string;

const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64');

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'strongroom-bw-files-'));
  tls = await createTestTls();
  const port = await freePort();
  server = await startTestServer({ tls, port, env: { PUBLIC_URL: `https://127.0.0.1:${port}`, FILES_DIR: join(dir, 'store') } });
  account = await registerAccount(server, { email: 'files@example.com', name: 'Files', derivation: 'real' });
  bw = await createBwCli({ serverUrl: server.baseUrl, caPath: tls.caPath });
  // The second member's CLI (the organization attachment below) is configured alongside.
  memberBw = await createBwCli({ serverUrl: server.baseUrl, caPath: tls.caPath });
  await Promise.all([bw.configServer(), memberBw.configServer()]);
  const login = await bw.login(account.email, account.password);
  expect(login.code, login.stderr).toBe(0);
}, SLOW);

afterAll(async () => {
  await bw?.dispose();
  await memberBw?.dispose();
  await server?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('bw attachments', () => {
  it('attaches a file, downloads it byte for byte and deletes it', async () => {
    const item = await bw.json<{ id: string }>(['create', 'item', encode({ type: 2, name: 'With a file', notes: null, secureNote: { type: 0 }, reprompt: 0 })]);
    const source = join(dir, 'report.bin');
    const bytes = randomBytes(300_000);
    await writeFile(source, bytes);
    const attached = await bw.json<{ attachments: { id: string; fileName: string; size: string }[] }>(['create', 'attachment', '--file', source, '--itemid', item.id]);
    expect(attached.attachments).toEqual([expect.objectContaining({ fileName: 'report.bin' })]);
    // The server stores what the client encrypted: the bytes plus an IV and a MAC.
    expect(Number(attached.attachments[0]?.size)).toBeGreaterThan(bytes.length);
    const attachmentId = attached.attachments[0]?.id ?? '';

    const target = join(dir, 'downloaded.bin');
    const got = await bw.run(['get', 'attachment', 'report.bin', '--itemid', item.id, '--output', target]);
    expect(got.code, got.stderr).toBe(0);
    expect((await readFile(target)).equals(bytes)).toBe(true);

    const deleted = await bw.run(['delete', 'attachment', attachmentId, '--itemid', item.id]);
    expect(deleted.code, deleted.stderr).toBe(0);
    const after = await bw.json<{ attachments?: unknown[] }>(['get', 'item', item.id]);
    expect(after.attachments ?? []).toEqual([]);
  }, SLOW);
});

interface SendJson {
  id: string;
  accessId: string;
  accessUrl: string;
  name: string;
  type: number;
  maxAccessCount?: number;
  accessCount: number;
  text?: { text: string };
  passwordSet?: boolean;
}

describe('bw send', () => {
  let text: SendJson;

  it('sends a text, lists, gets and edits it, and a recipient receives it until its access count runs out', async () => {
    text = await bw.json<SendJson>(['send', '-n', 'A note', '--maxAccessCount', '2', '--fullObject', 'hello from strongroom']);
    expect(text).toMatchObject({ name: 'A note', type: 0, maxAccessCount: 2, text: { text: 'hello from strongroom' } });
    expect(text.accessUrl).toContain(`/#/send/${text.accessId}/`);
    expect((await bw.json<SendJson[]>(['send', 'list'])).map((s) => s.id)).toContain(text.id);
    expect((await bw.json<SendJson>(['send', 'get', text.id])).name).toBe('A note');
    const edited = await bw.json<SendJson>(['send', 'edit', encode({ ...text, name: 'Renamed note' })]);
    expect(edited.name).toBe('Renamed note');

    for (let i = 0; i < 2; i++) {
      const received = await bw.run(['send', 'receive', text.accessUrl]);
      expect(received.code, received.stderr).toBe(0);
      expect(received.stdout).toBe('hello from strongroom');
    }
    const refused = await bw.run(['send', 'receive', text.accessUrl]);
    expect(refused.code).not.toBe(0);
  }, SLOW);

  it('sends a file with a password and the recipient gets the same bytes with that password only', async () => {
    const source = join(dir, 'shared.bin');
    const bytes = randomBytes(50_000);
    await writeFile(source, bytes);
    const file = await bw.json<SendJson>(['send', '--file', '--password', 'open sesame', '--fullObject', source]);
    expect(file.type).toBe(1);
    const wrong = await bw.run(['send', 'receive', '--password', 'not it', file.accessUrl, '--output', join(dir, 'nope.bin')]);
    expect(wrong.code).not.toBe(0);
    const target = join(dir, 'received.bin');
    const received = await bw.run(['send', 'receive', '--password', 'open sesame', file.accessUrl, '--output', target]);
    expect(received.code, received.stderr).toBe(0);
    expect((await readFile(target)).equals(bytes)).toBe(true);
  }, SLOW);
});

/** A file as the clients encrypt attachments (EncArrayBuffer, AesCbc256_HmacSha256): type, IV, MAC, ciphertext. */
function encryptFile(data: Buffer, key: SymmetricKey): Buffer {
  const iv = randomBytes(16);
  const cipher = createCipheriv('aes-256-cbc', key.encKey, iv);
  const body = Buffer.concat([cipher.update(data), cipher.final()]);
  const mac = createHmac('sha256', key.macKey).update(iv).update(body).digest();
  return Buffer.concat([Buffer.from([2]), iv, mac, body]);
}

describe('bw attachments of an organization item', () => {
  it("downloads an organization item's attachment, uploaded by the owner, as another member byte for byte", async () => {
    // The organization, its keys and the item are made through the API as a client makes them
    // (the bw steps above already cover uploading); only the member's download goes through bw.
    const orgKey = generateSymmetricKey();
    const org = await seedOrganization(server, { name: 'Files Team' });
    const owner = await loginAccount(server, account);
    const member = await createUser(server, { email: 'files-member@example.com', name: 'Member', derivation: 'real' });
    const wrapped = (publicKey: string) => rsaEncryptToEncString(orgKey.raw, publicKey);
    const ownerMember = await seedMembership(server, { organizationId: org, userId: owner.userId, type: OrganizationUserType.Owner, key: wrapped(account.publicKeyB64) });
    const readerMember = await seedMembership(server, { organizationId: org, userId: member.userId, key: wrapped(member.account.publicKeyB64) });
    const collection = await seedCollection(server, org, { users: [[ownerMember], [readerMember, { readOnly: true }]] });
    await server.database.db.updateTable('collections').set({ name: encryptText('Team', orgKey) }).where('id', '=', collection).execute();

    const item = await server.request('POST', '/api/ciphers/create', {
      token: owner.accessToken,
      json: { cipher: cipherBody('login', orgKey, { organizationId: org, name: encryptText('Team login', orgKey) }), collectionIds: [collection] },
    });
    expect(item.status, item.text).toBe(200);
    const itemId = item.body.id as string;
    const bytes = randomBytes(120_000);
    const attachmentKey = generateSymmetricKey();
    const encrypted = encryptFile(bytes, attachmentKey);
    const fileName = encryptText('team.bin', orgKey);
    const started = await server.request('POST', `/api/ciphers/${itemId}/attachment/v2`, {
      token: owner.accessToken,
      json: { key: encryptToEncString(attachmentKey.raw, orgKey), fileName, fileSize: encrypted.length },
    });
    expect(started.status, started.text).toBe(200);
    const form = new FormData();
    form.append('data', new Blob([encrypted]), fileName);
    const dispatcher = new Agent({ connect: { ca: tls.caPem } });
    const uploaded = await undiciFetch(`${server.baseUrl}/api/ciphers/${started.body.url as string}`, { method: 'POST', body: form, headers: { authorization: `Bearer ${owner.accessToken}` }, dispatcher });
    expect(uploaded.status, await uploaded.text()).toBe(200);
    await dispatcher.close();

    const login = await memberBw.login(member.account.email, member.account.password);
    expect(login.code, login.stderr).toBe(0);
    const target = join(dir, 'team-downloaded.bin');
    const got = await memberBw.run(['get', 'attachment', 'team.bin', '--itemid', itemId, '--output', target]);
    expect(got.code, got.stderr).toBe(0);
    expect((await readFile(target)).equals(bytes)).toBe(true);
  }, SLOW);
});
