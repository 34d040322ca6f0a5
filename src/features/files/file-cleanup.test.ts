import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { fetch as undiciFetch, FormData } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actor, ENC, seedCollection } from '../../../test/support/admin.js';
import { adminTokenHash, signIn } from '../../../test/support/admin-console.js';
import { createUser, type LoggedInUser } from '../../../test/support/accounts.js';
import { testClock } from '../../../test/support/clock.js';
import { seedOrgItem } from '../../../test/support/org-items.js';
import { seedOrganization } from '../../../test/support/orgs.js';
import { startLocalS3, type LocalS3 } from '../../../test/support/s3.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { cipherBody } from '../../../test/support/vault.js';
import { createLease } from '../../db/leases.js';
import { OrganizationUserType } from '../../platform/access/roles.js';
import { localFileStore, s3FileStore, type FileStore } from '../../platform/storage/file-store.js';
import { createFileSweeper, SWEEP_MIN_AGE_MS } from './file-sweeper.js';

const NAME = '2.BBBBBBBBBBBBBBBBBBBBBB==|BBBBBBBBBBBBBBBBBBBBBB==|BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB=';
const DAY = 24 * 60 * 60 * 1000;

let server: TestServer;
let filesDir: string;
const clock = testClock();

beforeAll(async () => {
  server = await startTestServer({ clock, env: { ADMIN_TOKEN: await adminTokenHash() } });
  filesDir = server.filesDir;
});
afterAll(async () => {
  await server?.close();
});

type Who = { accessToken: string };
const req = (who: Who, method: string, path: string, json?: unknown) => server.request(method, `/api${path}`, { token: who.accessToken, ...(json === undefined ? {} : { json }) });
const local = (url: string) => {
  const u = new URL(url);
  return `${server.baseUrl}${u.pathname}${u.search}`;
};

async function newItem(user: LoggedInUser): Promise<string> {
  const res = await req(user, 'POST', '/ciphers', cipherBody('login', user.account.userKey));
  expect(res.status, res.text).toBe(200);
  return res.body.id as string;
}

async function postFile(who: Who, path: string, bytes: Buffer): Promise<void> {
  const form = new FormData();
  form.append('data', new Blob([bytes]), NAME);
  const res = await undiciFetch(`${server.baseUrl}/api${path}`, { method: 'POST', body: form, headers: { authorization: `Bearer ${who.accessToken}` } });
  expect(res.status, await res.text()).toBe(200);
}

async function attach(who: Who, cipherId: string, bytes: Buffer): Promise<string> {
  const started = await req(who, 'POST', `/ciphers/${cipherId}/attachment/v2`, { key: ENC, fileName: NAME, fileSize: bytes.length });
  expect(started.status, started.text).toBe(200);
  await postFile(who, `/ciphers/${started.body.url as string}`, bytes);
  return started.body.attachmentId as string;
}

async function download(who: Who, cipherId: string, attachmentId: string): Promise<Buffer> {
  const data = await req(who, 'GET', `/ciphers/${cipherId}/attachment/${attachmentId}`);
  expect(data.status, data.text).toBe(200);
  return Buffer.from(await (await undiciFetch(local(data.body.url as string))).arrayBuffer());
}

async function fileSend(who: Who, bytes: Buffer): Promise<string> {
  const body = {
    type: 1,
    name: ENC,
    notes: null,
    key: ENC,
    maxAccessCount: null,
    expirationDate: null,
    deletionDate: new Date(clock.now().getTime() + 7 * DAY).toISOString(),
    text: null,
    file: { fileName: ENC },
    fileLength: bytes.length,
    password: null,
    disabled: false,
    hideEmail: false,
  };
  const created = await req(who, 'POST', '/sends/file/v2', body);
  expect(created.status, created.text).toBe(200);
  await postFile(who, created.body.url as string, bytes);
  return created.body.sendResponse.id as string;
}

const itemFiles = (cipherId: string) => existsSync(join(filesDir, 'attachments', cipherId));
const sendFiles = (sendId: string) => existsSync(join(filesDir, 'sends', sendId));
const storageOf = async (userId: string) => Number((await server.database.db.selectFrom('users').select('storage_bytes').where('id', '=', userId).executeTakeFirstOrThrow()).storage_bytes);

describe('cloning an item with attachments', () => {
  it('creates the copy as the official server does (without the files) and leaves the original and its files whole', async () => {
    const alice = await createUser(server, { email: 'clone-alice@example.com' });
    const original = await newItem(alice);
    const bytes = randomBytes(300);
    const attachmentId = await attach(alice, original, bytes);
    const storage = await storageOf(alice.userId);
    // The clients clone by creating a new item from the original's fields, attachments2 included.
    const clone = await req(alice, 'POST', '/ciphers', { ...cipherBody('login', alice.account.userKey), attachments2: { [attachmentId]: { fileName: NAME, key: ENC } } });
    expect(clone.status, clone.text).toBe(200);
    expect(clone.body.id).not.toBe(original);
    expect(clone.body.attachments).toBeNull();
    expect(await storageOf(alice.userId)).toBe(storage);
    // The copy takes files of its own through the upload routes; the original keeps its file.
    const copied = await attach(alice, clone.body.id as string, bytes);
    expect((await download(alice, clone.body.id as string, copied)).equals(bytes)).toBe(true);
    expect(await storageOf(alice.userId)).toBe(storage + 300);
    expect((await req(alice, 'DELETE', `/ciphers/${clone.body.id as string}`)).status).toBe(200);
    expect(itemFiles(clone.body.id as string)).toBe(false);
    expect((await download(alice, original, attachmentId)).equals(bytes)).toBe(true);
    expect(await storageOf(alice.userId)).toBe(storage);
  });
});

describe('files go with what holds them', () => {
  it('removes the files of items deleted for good in bulk, with their storage', async () => {
    const alice = await createUser(server, { email: 'bulk-alice@example.com' });
    const a = await newItem(alice);
    const b = await newItem(alice);
    await attach(alice, a, randomBytes(100));
    await attach(alice, b, randomBytes(200));
    expect(await storageOf(alice.userId)).toBe(300);
    expect((await req(alice, 'DELETE', '/ciphers', { ids: [a, b] })).status).toBe(200);
    expect([itemFiles(a), itemFiles(b)]).toEqual([false, false]);
    expect(await storageOf(alice.userId)).toBe(0);
  });

  it("removes an account's attachments and Send files when the account deletes itself", async () => {
    const dora = await createUser(server, { email: 'dora@example.com' });
    const item = await newItem(dora);
    await attach(dora, item, randomBytes(64));
    const send = await fileSend(dora, randomBytes(32));
    expect([itemFiles(item), sendFiles(send)]).toEqual([true, true]);
    const res = await req(dora, 'DELETE', '/accounts', { masterPasswordHash: dora.account.masterPasswordHash });
    expect(res.status, res.text).toBe(200);
    expect([itemFiles(item), sendFiles(send)]).toEqual([false, false]);
  });

  it("removes an account's files when the admin console deletes it, and leaves other accounts' files", async () => {
    const erin = await createUser(server, { email: 'erin@example.com' });
    const frank = await createUser(server, { email: 'frank@example.com' });
    const erinItem = await newItem(erin);
    const frankItem = await newItem(frank);
    await attach(erin, erinItem, randomBytes(64));
    const kept = randomBytes(64);
    const frankAttachment = await attach(frank, frankItem, kept);
    const erinSend = await fileSend(erin, randomBytes(16));
    const browser = await signIn(server.app);
    const done = await browser.post(`/admin/users/${erin.userId}/delete`, { confirm: 'erin@example.com' });
    expect(done.statusCode, done.body).toBe(303);
    expect([itemFiles(erinItem), sendFiles(erinSend)]).toEqual([false, false]);
    expect((await download(frank, frankItem, frankAttachment)).equals(kept)).toBe(true);
    expect(await storageOf(frank.userId)).toBe(64);
  });

  it("removes an organization's item files when its owner deletes it, and when the admin console does", async () => {
    for (const how of ['owner', 'console'] as const) {
      const name = `Cleanup ${how}`;
      const org = await seedOrganization(server, { name });
      const owner = await actor(server, org, `cleanup-${how}@example.com`, { type: OrganizationUserType.Owner });
      const item = await seedOrgItem(server, org, [await seedCollection(server, org, { users: [[owner.memberId]] })]);
      await attach({ accessToken: owner.token }, item, randomBytes(128));
      // The owner's personal item is not the organization's: it stays.
      const personal = await req({ accessToken: owner.token }, 'POST', '/ciphers', cipherBody('login', owner.account.userKey));
      await attach({ accessToken: owner.token }, personal.body.id as string, randomBytes(8));
      expect(itemFiles(item)).toBe(true);
      if (how === 'owner') {
        const res = await server.request('DELETE', `/api/organizations/${org}`, { token: owner.token, json: { secret: owner.account.masterPasswordHash } });
        expect(res.status, res.text).toBe(200);
      } else {
        const browser = await signIn(server.app);
        const res = await browser.post(`/admin/organizations/${org}/delete`, { confirm: name });
        expect(res.statusCode, res.body).toBe(303);
      }
      expect(await server.database.db.selectFrom('organizations').select('id').where('id', '=', org).executeTakeFirst()).toBeUndefined();
      expect(itemFiles(item)).toBe(false);
      expect(itemFiles(personal.body.id as string)).toBe(true);
    }
  });
});

/** Puts `bytes` under `key` directly in a store, as a crash between a delete's commit and its file removal would leave them. */
const putRaw = (store: FileStore, key: string, bytes: Buffer) => store.put(key, Readable.from([bytes]), bytes.length);

async function sweepCase(store: FileStore, keys: (key: string) => Promise<boolean>, separate = false) {
  const gina = await createUser(server, { email: `gina-${randomUUID()}@example.com` });
  const item = await newItem(gina);
  const attachmentId = await attach(gina, item, randomBytes(50));
  const send = await fileSend(gina, randomBytes(20));
  const sendFile = (await server.database.db.selectFrom('sends').select('data').where('id', '=', send).executeTakeFirstOrThrow()).data;
  const sendFileId = (JSON.parse(sendFile) as { file: { id: string } }).file.id;
  const named = [`attachments/${item}/${attachmentId}`, `sends/${send}/${sendFileId}`];
  // A store other than the server's gets copies of the files the rows name.
  if (separate) for (const key of named) await putRaw(store, key, randomBytes(5));
  // A copy re-encrypted for a share (older clients) waits beside its attachment: named too.
  const document = JSON.parse((await server.database.db.selectFrom('ciphers').select('attachments').where('id', '=', item).executeTakeFirstOrThrow()).attachments ?? '{}') as Record<string, Record<string, unknown>>;
  document[attachmentId] = { ...document[attachmentId], share: { organizationId: randomUUID(), fileName: 'x', key: null, size: 5, file: 'sharecopy' } };
  await server.database.db.updateTable('ciphers').set({ attachments: JSON.stringify(document) }).where('id', '=', item).execute();
  await putRaw(store, `attachments/${item}/sharecopy`, randomBytes(5));
  named.push(`attachments/${item}/sharecopy`);
  const storage = await storageOf(gina.userId);
  const orphans = [`attachments/${randomUUID()}/abc123`, `attachments/${item}/notanattachment`, `sends/${randomUUID()}/f1`, `sends/${send}/notthefile`];
  for (const key of orphans) await putRaw(store, key, randomBytes(10));
  // The sweeper's own clock starts at the real time the files were written (the server's has moved on in other tests).
  const sweepClock = testClock();
  const sweeper = createFileSweeper({ db: server.database.db, clock: sweepClock, store, lease: createLease(server.database.db, sweepClock, `file-sweep-test-${randomUUID()}`) });
  // Less than an hour old: an upload may still be in flight, nothing goes.
  expect(await sweeper.sweepOnce()).toBe(0);
  for (const key of orphans) expect(await keys(key)).toBe(true);
  sweepClock.advance(SWEEP_MIN_AGE_MS + 60_000);
  expect(await sweeper.sweepOnce()).toBeGreaterThanOrEqual(orphans.length);
  for (const key of orphans) expect(await keys(key), key).toBe(false);
  // Files rows name stay, and so does every count.
  for (const key of named) expect(await keys(key), key).toBe(true);
  if (!separate) expect((await download(gina, item, attachmentId)).length).toBe(50);
  expect(await storageOf(gina.userId)).toBe(storage);
  await sweeper.stop();
}

describe('the file sweeper', () => {
  it('removes files no row names from the local store, once they are an hour old', async () => {
    const store = localFileStore(filesDir);
    await sweepCase(store, async (key) => existsSync(join(filesDir, key)));
  });

  it('sweeps once per fleet: a second instance waits for the lease', async () => {
    const name = `file-sweep-lease-${randomUUID()}`;
    const store = localFileStore(filesDir);
    const one = createFileSweeper({ db: server.database.db, clock, store, lease: createLease(server.database.db, clock, name) });
    const two = createFileSweeper({ db: server.database.db, clock, store, lease: createLease(server.database.db, clock, name) });
    expect(await one.sweepOnce()).not.toBeNull();
    expect(await two.sweepOnce()).toBeNull();
    await one.stop();
    expect(await two.sweepOnce()).not.toBeNull();
    await two.stop();
  });

  describe('in an S3-compatible bucket', () => {
    let s3: LocalS3;
    beforeAll(async () => {
      s3 = await startLocalS3();
    });
    afterAll(async () => {
      await s3?.close();
    });

    it('removes files no row names from the bucket, once they are an hour old', async () => {
      const store = s3FileStore({ bucket: s3.bucket, region: 'us-east-1', endpoint: s3.endpoint, forcePathStyle: true, accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER', prefix: 'sweep/' });
      const keys = async (key: string) => {
        for await (const file of store.list()) if (file.key === key) return true;
        return false;
      };
      await sweepCase(store, keys, true);
    });
  });
});
