import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fetch as undiciFetch, FormData } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actor, custom, ENC, seedCollection, type Actor } from '../../../test/support/admin.js';
import { seedAccount, loginAccount, type LoggedInUser } from '../../../test/support/accounts.js';
import { testClock } from '../../../test/support/clock.js';
import { seedOrgItem } from '../../../test/support/org-items.js';
import { seedMembership, seedOrganization } from '../../../test/support/orgs.js';
import { startLocalS3 } from '../../../test/support/s3.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { cipherBody, schemaErrors } from '../../../test/support/vault.js';
import { OrganizationUserType } from '../../platform/access/roles.js';
import { CipherMiniResponse, CipherResponse } from './ciphers.schemas.js';
import { AttachmentResponseSchema } from './attachments.schemas.js';
import { s3FileStore } from '../../platform/storage/file-store.js';
import { UPLOAD_WINDOW_MS } from './attachments.service.js';

const NAME = '2.BBBBBBBBBBBBBBBBBBBBBB==|BBBBBBBBBBBBBBBBBBBBBB==|BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB=';
const MB = 1024 * 1024;

let server: TestServer;
let filesDir: string;
const clock = testClock();
let alice: LoggedInUser;
let bob: LoggedInUser;

beforeAll(async () => {
  server = await startTestServer({ clock, env: { ATTACHMENT_USER_QUOTA_MB: '2', FILE_MAX_MB: '1' } });
  filesDir = server.filesDir;
  alice = await seedAccount(server, { email: 'alice@example.com' });
  bob = await seedAccount(server, { email: 'bob@example.com' });
});
afterAll(async () => {
  await server?.close();
});

type Who = { accessToken?: string; token?: string };
const tokenOf = (who: Who) => who.accessToken ?? who.token ?? '';
const req = (who: Who, method: string, path: string, json?: unknown) => server.request(method, `/api${path}`, { token: tokenOf(who), ...(json === undefined ? {} : { json }) });

async function newItem(user: LoggedInUser): Promise<string> {
  const res = await req(user, 'POST', '/ciphers', cipherBody('login', user.account.userKey));
  expect(res.status, res.text).toBe(200);
  return res.body.id as string;
}

async function begin(who: Who, cipherId: string, fileSize: number) {
  return req(who, 'POST', `/ciphers/${cipherId}/attachment/v2`, { key: ENC, fileName: NAME, fileSize, adminRequest: false, lastKnownRevisionDate: null });
}

/** A multipart upload as the official clients send it: the bytes in `data`, named by the encrypted file name. */
async function upload(who: Who, path: string, bytes: Buffer, fields: Record<string, string> = {}) {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  form.append('data', new Blob([bytes], { type: 'application/octet-stream' }), NAME);
  const res = await undiciFetch(`${server.baseUrl}/api${path}`, { method: 'POST', body: form, headers: { authorization: `Bearer ${tokenOf(who)}` } });
  const text = await res.text();
  return { status: res.status, text, body: text ? JSON.parse(text) : undefined };
}

async function attach(who: Who, cipherId: string, bytes: Buffer): Promise<string> {
  const started = await begin(who, cipherId, bytes.length);
  expect(started.status, started.text).toBe(200);
  const done = await upload(who, `/ciphers/${started.body.url as string}`, bytes);
  expect(done.status, done.text).toBe(200);
  return started.body.attachmentId as string;
}

async function download(who: Who, cipherId: string, attachmentId: string): Promise<Buffer> {
  const data = await req(who, 'GET', `/ciphers/${cipherId}/attachment/${attachmentId}`);
  expect(data.status, data.text).toBe(200);
  const res = await undiciFetch(local(data.body.url));
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

/** The server's PUBLIC_URL names port 0 in tests: the same path on the port it listens on. */
const local = (url: string) => {
  const u = new URL(url);
  return `${server.baseUrl}${u.pathname}${u.search}`;
};

const storageOf = async (userId: string) => Number((await server.database.db.selectFrom('users').select('storage_bytes').where('id', '=', userId).executeTakeFirstOrThrow()).storage_bytes);
const orgStorage = async (orgId: string) => Number((await server.database.db.selectFrom('organizations').select('storage_bytes').where('id', '=', orgId).executeTakeFirstOrThrow()).storage_bytes);
const filesOf = async (cipherId: string) => (existsSync(join(filesDir, 'attachments', cipherId)) ? readdir(join(filesDir, 'attachments', cipherId)) : []);
const eventTypes = async (cipherId: string) =>
  (await server.database.db.selectFrom('events').select('type').where('cipher_id', '=', cipherId).orderBy('seq').execute()).map((r) => r.type);

describe('attachments of personal items', () => {
  it('reserves, uploads, lists, downloads byte for byte and deletes an attachment', async () => {
    const id = await newItem(alice);
    const bytes = randomBytes(70_000);
    const started = await begin(alice, id, bytes.length);
    expect(started.status, started.text).toBe(200);
    expect(started.body).toMatchObject({ object: 'attachment-fileUpload', fileUploadType: 0, url: `${id}/attachment/${started.body.attachmentId}` });
    expect(started.body.attachmentId).toMatch(/^[a-z0-9]{32}$/);
    expect(started.body.cipherResponse.id).toBe(id);
    // Reserved, not uploaded: listed (the client keeps this item), not downloadable, counted once uploaded.
    expect(started.body.cipherResponse.attachments).toEqual([expect.objectContaining({ id: started.body.attachmentId, size: String(bytes.length) })]);
    expect((await req(alice, 'GET', `/ciphers/${id}/attachment/${started.body.attachmentId}`)).status).toBe(404);
    expect(await storageOf(alice.userId)).toBe(0);
    const done = await upload(alice, `/ciphers/${id}/attachment/${started.body.attachmentId}`, bytes);
    expect(done.status, done.text).toBe(200);
    expect(await storageOf(alice.userId)).toBe(bytes.length);

    const item = await req(alice, 'GET', `/ciphers/${id}`);
    expect(schemaErrors(CipherResponse, item.body)).toEqual([]);
    expect(item.body.attachments).toEqual([
      {
        object: 'attachment',
        id: started.body.attachmentId,
        fileName: NAME,
        key: ENC,
        size: String(bytes.length),
        sizeName: '68.4 KB',
        url: `${server.config.publicUrl}/api/ciphers/${id}/attachment/${started.body.attachmentId}`,
      },
    ]);
    const sync = await req(alice, 'GET', '/sync');
    const synced = (sync.body.ciphers as { id: string; attachments: unknown }[]).find((c) => c.id === id);
    expect(synced?.attachments).toEqual(item.body.attachments);

    const data = await req(alice, 'GET', `/ciphers/${id}/attachment/${started.body.attachmentId}`);
    expect(schemaErrors(AttachmentResponseSchema, data.body)).toEqual([]);
    expect(data.body.url).toContain('/api/ciphers/attachment/download?token=');
    expect((await download(alice, id, started.body.attachmentId)).equals(bytes)).toBe(true);

    const deleted = await req(alice, 'DELETE', `/ciphers/${id}/attachment/${started.body.attachmentId}`);
    expect(deleted.status, deleted.text).toBe(200);
    expect(deleted.body).toMatchObject({ object: 'deleteAttachment', cipher: { object: 'cipherMini', id, attachments: null } });
    expect(deleted.body.cipher).not.toHaveProperty('folderId');
    expect(await filesOf(id)).toEqual([]);
    expect(await storageOf(alice.userId)).toBe(0);
    expect((await undiciFetch(local(data.body.url))).status).toBe(404);
    expect(await eventTypes(id)).toEqual([1100, 1103, 1104]);
  });

  it('refuses bytes that do not match the declared size and leaves nothing behind', async () => {
    const id = await newItem(alice);
    for (const sent of [999, 1001]) {
      const started = await begin(alice, id, 1000);
      const done = await upload(alice, `/ciphers/${id}/attachment/${started.body.attachmentId}`, randomBytes(sent));
      expect(done.status).toBe(400);
      expect(done.body.message).toBe('File received does not match expected file length.');
    }
    expect(await filesOf(id)).toEqual([]);
    expect((await server.database.db.selectFrom('ciphers').select('attachments').where('id', '=', id).executeTakeFirstOrThrow()).attachments).toBeNull();
    expect(await storageOf(alice.userId)).toBe(0);
  });

  it('refuses files over the size limit and past the quota before anything is written', async () => {
    const id = await newItem(alice);
    const big = await begin(alice, id, MB + 1);
    expect(big.status).toBe(400);
    expect(big.body.message).toBe('Max file size is 1 MB.');
    expect((await begin(alice, id, 0)).body.message).toBe('No data to attach.');
    const [first, second] = [await begin(alice, id, MB), await begin(alice, id, MB)];
    // Files uploaded fill the quota, not announced ones.
    for (const r of [first, second]) expect((await upload(alice, `/ciphers/${r.body.url as string}`, randomBytes(MB))).status).toBe(200);
    const third = await begin(alice, id, 10);
    expect(third.status).toBe(400);
    expect(third.body.message).toBe('Not enough storage available.');
    for (const r of [first, second]) expect((await req(alice, 'DELETE', `/ciphers/${id}/attachment/${r.body.attachmentId}`)).status).toBe(200);
    expect(await storageOf(alice.userId)).toBe(0);
  });

  it("answers 404 for another user's item and attachment", async () => {
    const id = await newItem(alice);
    const attachmentId = await attach(alice, id, randomBytes(100));
    expect((await begin(bob, id, 10)).status).toBe(404);
    expect((await req(bob, 'GET', `/ciphers/${id}/attachment/${attachmentId}`)).status).toBe(404);
    expect((await req(bob, 'DELETE', `/ciphers/${id}/attachment/${attachmentId}`)).status).toBe(404);
    expect((await upload(bob, `/ciphers/${id}/attachment/${attachmentId}`, randomBytes(100))).status).toBe(404);
    expect((await req(alice, 'GET', `/ciphers/${id}/attachment/nosuchattachment`)).status).toBe(404);
  });

  it('refuses an upload after its window, until the URL is renewed', async () => {
    const id = await newItem(alice);
    const started = await begin(alice, id, 10);
    clock.advance(UPLOAD_WINDOW_MS + 1000);
    // Access tokens live an hour too.
    alice = await loginAccount(server, alice.account);
    const late = await upload(alice, `/ciphers/${id}/attachment/${started.body.attachmentId}`, randomBytes(10));
    expect(late.status).toBe(400);
    expect(late.body.message).toMatch(/upload URL has expired/);
    const renewed = await req(alice, 'GET', `/ciphers/${id}/attachment/${started.body.attachmentId}/renew`);
    expect(renewed.status, renewed.text).toBe(200);
    expect(renewed.body).toMatchObject({ url: `${id}/attachment/${started.body.attachmentId}`, fileUploadType: 0 });
    expect((await upload(alice, `/ciphers/${id}/attachment/${started.body.attachmentId}`, randomBytes(10))).status).toBe(200);
    expect((await req(alice, 'GET', `/ciphers/${id}/attachment/${started.body.attachmentId}/renew`)).status).toBe(404);
  });

  it('refuses expired and tampered download links', async () => {
    const id = await newItem(alice);
    const attachmentId = await attach(alice, id, randomBytes(50));
    const { url } = (await req(alice, 'GET', `/ciphers/${id}/attachment/${attachmentId}`)).body as { url: string };
    const token = new URL(url).searchParams.get('token') ?? '';
    const tampered = local(`${url.split('token=')[0]}token=${token.slice(0, -3)}${token.endsWith('AAA') ? 'BBB' : 'AAA'}`);
    expect((await undiciFetch(tampered)).status).toBe(404);
    expect((await undiciFetch(`${server.baseUrl}/api/ciphers/attachment/download`)).status).toBe(400);
    clock.advance(2 * 60 * 1000);
    const expired = await undiciFetch(local(url));
    expect(expired.status).toBe(404);
    expect(((await expired.json()) as { message: string }).message).toBe('The download link is invalid or has expired.');
  });

  it('takes the legacy one-step upload with its key', async () => {
    const id = await newItem(alice);
    const bytes = randomBytes(3000);
    const before = await storageOf(alice.userId);
    const res = await upload(alice, `/ciphers/${id}/attachment`, bytes, { key: ENC });
    expect(res.status, res.text).toBe(200);
    expect(schemaErrors(CipherResponse, res.body)).toEqual([]);
    const [attachment] = res.body.attachments;
    expect(attachment).toMatchObject({ fileName: NAME, key: ENC, size: '3000' });
    expect((await download(alice, id, attachment.id)).equals(bytes)).toBe(true);
    // Counted at the request's length first, then at the file's.
    expect(await storageOf(alice.userId)).toBe(before + 3000);
    await req(alice, 'DELETE', `/ciphers/${id}/attachment/${attachment.id}`);
  });

  it('removes the files of an item deleted for good and gives its storage back', async () => {
    const id = await newItem(alice);
    const before = await storageOf(alice.userId);
    await attach(alice, id, randomBytes(500));
    expect(await filesOf(id)).toHaveLength(1);
    expect((await req(alice, 'DELETE', `/ciphers/${id}`)).status).toBe(200);
    expect(await filesOf(id)).toEqual([]);
    expect(await storageOf(alice.userId)).toBe(before);
  });
});

describe('attachments of organization items', () => {
  let org: string;
  let owner: Actor;
  let reader: Actor;
  let readOnlyItem: string;
  let editableItem: string;
  beforeAll(async () => {
    org = await seedOrganization(server, { name: 'Files Org' });
    owner = await actor(server, org, 'files-owner@example.com', { type: OrganizationUserType.Owner });
    reader = await actor(server, org, 'files-reader@example.com');
    const readOnly = await seedCollection(server, org, { users: [[reader.memberId, { readOnly: true }], [owner.memberId]] });
    readOnlyItem = await seedOrgItem(server, org, [readOnly]);
    editableItem = await seedOrgItem(server, org, [await seedCollection(server, org, { users: [[reader.memberId]] })]);
  });

  it('lets a read-only member download but not add or delete', async () => {
    const bytes = randomBytes(2048);
    const attachmentId = await attach(owner, readOnlyItem, bytes);
    expect(await orgStorage(org)).toBe(2048);
    expect((await download(reader, readOnlyItem, attachmentId)).equals(bytes)).toBe(true);
    const add = await begin(reader, readOnlyItem, 10);
    expect(add.status).toBe(400);
    expect(add.body.message).toBe('You do not have permissions to edit this.');
    expect((await req(reader, 'DELETE', `/ciphers/${readOnlyItem}/attachment/${attachmentId}`)).status).toBe(400);
    // A member who can edit adds one, counted against the organization.
    await attach(reader, editableItem, randomBytes(10));
    expect(await orgStorage(org)).toBe(2058);
    expect(await storageOf(reader.userId)).toBe(0);
  });

  it('refuses attachments in an organization without storage', async () => {
    const poor = await seedOrganization(server, { overrides: { max_storage_gb: null } });
    const boss = await actor(server, poor, 'poor-owner@example.com', { type: OrganizationUserType.Owner });
    const item = await seedOrgItem(server, poor, [await seedCollection(server, poor, { users: [[boss.memberId]] })]);
    const res = await begin(boss, item, 10);
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('This organization cannot use attachments.');
  });

  it('carries the attachments of a shared item, with their new keys, to the organization', async () => {
    const sharer = await actor(server, org, 'files-sharer@example.com');
    const collection = await seedCollection(server, org, { users: [[sharer.memberId]] });
    const me = { accessToken: sharer.token, account: sharer.account, userId: sharer.userId } as unknown as LoggedInUser;
    const id = await newItem(me);
    const bytes = randomBytes(777);
    const attachmentId = await attach(me, id, bytes);
    const before = await orgStorage(org);
    const body = { cipher: { ...cipherBody('login', sharer.account.userKey), organizationId: org, attachments2: { [attachmentId]: { fileName: NAME, key: NAME } } }, collectionIds: [collection] };
    const shared = await req(me, 'PUT', `/ciphers/${id}/share`, body);
    expect(shared.status, shared.text).toBe(200);
    expect(shared.body.attachments).toEqual([expect.objectContaining({ id: attachmentId, key: NAME, size: '777' })]);
    expect(await storageOf(sharer.userId)).toBe(0);
    expect(await orgStorage(org)).toBe(before + 777);
    expect((await download(sharer, id, attachmentId)).equals(bytes)).toBe(true);
  });
});

describe('the admin console\'s attachment routes (organization admins)', () => {
  let org: string;
  let owner: Actor;
  let editor: Actor;
  let editAny: Actor;
  let deleteAny: Actor;
  /** An item in a collection nobody is assigned to: only the admin rule reaches it. */
  let item: string;
  beforeAll(async () => {
    org = await seedOrganization(server, { name: 'Admin Files' });
    owner = await actor(server, org, 'admin-files-owner@example.com', { type: OrganizationUserType.Owner });
    editor = await actor(server, org, 'admin-files-editor@example.com');
    editAny = await actor(server, org, 'admin-files-edit-any@example.com', custom('editAnyCollection'));
    deleteAny = await actor(server, org, 'admin-files-delete-any@example.com', custom('deleteAnyCollection'));
    item = await seedOrgItem(server, org, [await seedCollection(server, org)]);
  });
  const setAdminAccess = (on: boolean) => server.database.db.updateTable('organizations').set({ allow_admin_access_to_all_collection_items: on }).where('id', '=', org).execute();

  it('reserves with adminRequest, takes the upload, downloads and deletes through the admin routes', async () => {
    const bytes = randomBytes(4321);
    const before = await orgStorage(org);
    const started = await req(owner, 'POST', `/ciphers/${item}/attachment/v2`, { key: ENC, fileName: NAME, fileSize: bytes.length, adminRequest: true });
    expect(started.status, started.text).toBe(200);
    expect(started.body.cipherResponse).toBeNull();
    expect(schemaErrors(CipherMiniResponse, started.body.cipherMiniResponse)).toEqual([]);
    expect(started.body.cipherMiniResponse).toMatchObject({ object: 'cipherMini', id: item, organizationId: org });
    const attachmentId = started.body.attachmentId as string;
    // The upload itself goes to the common route, as the clients send it; the admin rule opens it.
    const done = await upload(owner, `/ciphers/${started.body.url as string}`, bytes);
    expect(done.status, done.text).toBe(200);
    expect(await orgStorage(org)).toBe(before + bytes.length);
    // The member routes do not reach the item for the owner, who is in none of its collections.
    expect((await req(owner, 'GET', `/ciphers/${item}/attachment/${attachmentId}`)).status).toBe(404);
    const data = await req(owner, 'GET', `/ciphers/${item}/attachment/${attachmentId}/admin`);
    expect(data.status, data.text).toBe(200);
    expect(schemaErrors(AttachmentResponseSchema, data.body)).toEqual([]);
    const got = await undiciFetch(local(data.body.url as string));
    expect(Buffer.from(await got.arrayBuffer()).equals(bytes)).toBe(true);
    const deleted = await req(owner, 'DELETE', `/ciphers/${item}/attachment/${attachmentId}/admin`);
    expect(deleted.status, deleted.text).toBe(200);
    expect(deleted.body).toMatchObject({ object: 'deleteAttachment', cipher: { object: 'cipherMini', id: item, attachments: null } });
    expect(schemaErrors(CipherMiniResponse, deleted.body.cipher)).toEqual([]);
    expect(await filesOf(item)).toEqual([]);
    expect(await orgStorage(org)).toBe(before);
    const events = await server.database.db.selectFrom('events').select(['type', 'acting_user_id']).where('cipher_id', '=', item).orderBy('seq').execute();
    expect(events).toEqual([
      { type: 1103, acting_user_id: owner.userId },
      { type: 1104, acting_user_id: owner.userId },
    ]);
  });

  it('takes the older one-step admin upload and the older delete form', async () => {
    const bytes = randomBytes(900);
    const res = await upload(owner, `/ciphers/${item}/attachment-admin`, bytes, { key: ENC });
    expect(res.status, res.text).toBe(200);
    expect(schemaErrors(CipherMiniResponse, res.body)).toEqual([]);
    const [attachment] = res.body.attachments as { id: string; size: string }[];
    expect(attachment).toMatchObject({ size: '900' });
    expect((await upload(editor, `/ciphers/${item}/attachment-admin`, bytes, { key: ENC })).status).toBe(404);
    const deleted = await req(owner, 'POST', `/ciphers/${item}/attachment/${attachment!.id}/delete-admin`);
    expect(deleted.status, deleted.text).toBe(200);
    expect(await filesOf(item)).toEqual([]);
  });

  it('answers 404 to members without the admin rule, even those who may edit the item', async () => {
    const reachable = await seedOrgItem(server, org, [await seedCollection(server, org, { users: [[editor.memberId, { manage: true }]] })]);
    const attachmentId = await attach(editor, reachable, randomBytes(10));
    for (const who of [editor, deleteAny]) {
      expect((await req(who, 'GET', `/ciphers/${reachable}/attachment/${attachmentId}/admin`)).status).toBe(404);
      expect((await req(who, 'DELETE', `/ciphers/${reachable}/attachment/${attachmentId}/admin`)).status).toBe(404);
      expect((await req(who, 'POST', `/ciphers/${reachable}/attachment/v2`, { key: ENC, fileName: NAME, fileSize: 10, adminRequest: true })).status).toBe(404);
    }
    // A personal item is no organization item: 404 on the admin routes even for its owner.
    const mine = await newItem(alice);
    const own = await attach(alice, mine, randomBytes(10));
    expect((await req(alice, 'GET', `/ciphers/${mine}/attachment/${own}/admin`)).status).toBe(404);
    expect((await req(owner, 'GET', `/ciphers/${mine}/attachment/${own}/admin`)).status).toBe(404);
    expect(await attachmentsOfItem(reachable)).toContain(attachmentId);
  });

  it('keeps owners and admins from items they are not assigned when the organization does not let admins at all items', async () => {
    const started = await req(editAny, 'POST', `/ciphers/${item}/attachment/v2`, { key: ENC, fileName: NAME, fileSize: 10, adminRequest: true });
    expect(started.status, started.text).toBe(200);
    const attachmentId = started.body.attachmentId as string;
    expect((await upload(editAny, `/ciphers/${started.body.url as string}`, randomBytes(10))).status).toBe(200);
    // Without adminRequest the item is reached as a member, which this custom member is not.
    expect((await begin(editAny, item, 10)).status).toBe(404);
    const unassigned = await seedOrgItem(server, org);
    await setAdminAccess(false);
    try {
      expect((await req(owner, 'GET', `/ciphers/${item}/attachment/${attachmentId}/admin`)).status).toBe(404);
      // A custom member who may edit any collection keeps the right; an item in no collection stays open to admins.
      expect((await req(editAny, 'GET', `/ciphers/${item}/attachment/${attachmentId}/admin`)).status).toBe(200);
      expect((await req(owner, 'POST', `/ciphers/${unassigned}/attachment/v2`, { key: ENC, fileName: NAME, fileSize: 10, adminRequest: true })).status).toBe(200);
    } finally {
      await setAdminAccess(true);
    }
    expect((await req(owner, 'DELETE', `/ciphers/${item}/attachment/${attachmentId}/admin`)).status).toBe(200);
  });
});

describe('re-uploading an attachment for a share (older clients)', () => {
  let org: string;
  let sharer: Actor;
  let me: LoggedInUser;
  let collection: string;
  beforeAll(async () => {
    org = await seedOrganization(server, { name: 'Share Files' });
    sharer = await actor(server, org, 'share-files@example.com');
    collection = await seedCollection(server, org, { users: [[sharer.memberId]] });
    me = { accessToken: sharer.token, account: sharer.account, userId: sharer.userId } as unknown as LoggedInUser;
  });
  const OTHER_NAME = NAME.replace(/B/g, 'C');
  const OTHER_KEY = ENC.replace(/A/g, 'D');

  /** A personal item with an attachment that has no key of its own (the legacy upload without `key`). */
  async function keylessAttachment(bytes: Buffer): Promise<{ id: string; attachmentId: string }> {
    const id = await newItem(me);
    const res = await upload(me, `/ciphers/${id}`.concat('/attachment'), bytes);
    expect(res.status, res.text).toBe(200);
    const attachmentId = (res.body.attachments as { id: string; key: string | null }[])[0]!.id;
    return { id, attachmentId };
  }
  const shareUpload = (who: Who, id: string, attachmentId: string, bytes: Buffer, organizationId = org, fields: Record<string, string> = { key: OTHER_KEY }) =>
    upload(who, `/ciphers/${id}/attachment/${attachmentId}/share?organizationId=${organizationId}`, bytes, fields);

  it('keeps the copy beside the original until the share, which swaps it in and removes the original', async () => {
    const original = randomBytes(1000);
    const { id, attachmentId } = await keylessAttachment(original);
    const copy = randomBytes(1000);
    const res = await upload(me, `/ciphers/${id}/attachment/${attachmentId}/share?organizationId=${org}`, copy, { key: OTHER_KEY });
    expect(res.status, res.text).toBe(200);
    expect(res.text).toBe('');
    // Until the share, the item is as it was and the original downloads.
    expect((await download(me, id, attachmentId)).equals(original)).toBe(true);
    expect(await filesOf(id)).toHaveLength(2);
    // A second copy replaces the first.
    const copy2 = randomBytes(1032);
    expect((await shareUpload(me, id, attachmentId, copy2)).status).toBe(200);
    expect(await filesOf(id)).toHaveLength(2);
    const orgBefore = await orgStorage(org);
    const body = { cipher: { ...cipherBody('login', sharer.account.userKey), organizationId: org, attachments2: { [attachmentId]: { fileName: OTHER_NAME, key: null } } }, collectionIds: [collection] };
    const shared = await req(me, 'PUT', `/ciphers/${id}/share`, body);
    expect(shared.status, shared.text).toBe(200);
    expect(shared.body.attachments).toEqual([expect.objectContaining({ id: attachmentId, fileName: NAME, key: OTHER_KEY, size: '1032' })]);
    expect((await download(me, id, attachmentId)).equals(copy2)).toBe(true);
    expect(await filesOf(id)).toHaveLength(1);
    expect(await orgStorage(org)).toBe(orgBefore + 1032);
    expect(await storageOf(sharer.userId)).toBe(0);
  });

  it('refuses bad input, foreign items and other organizations', async () => {
    const { id, attachmentId } = await keylessAttachment(randomBytes(100));
    const missingOrg = await upload(me, `/ciphers/${id}/attachment/${attachmentId}/share`, randomBytes(100), { key: OTHER_KEY });
    expect(missingOrg.status).toBe(400);
    expect(missingOrg.text).toContain('organizationId');
    const json = await req(me, 'POST', `/ciphers/${id}/attachment/${attachmentId}/share?organizationId=${org}`, { data: 'x' });
    expect(json.status).toBe(400);
    expect(json.body.message).toBe('Invalid content.');
    const unknown = await shareUpload(me, id, 'nosuchattachment', randomBytes(100));
    expect(unknown.status).toBe(400);
    expect(unknown.body.message).toBe('Cipher does not own specified attachment');
    // Another user's item, an organization the caller is not a member of, an organization item: 404.
    const stranger = await seedAccount(server, { email: 'share-stranger@example.com' });
    expect((await shareUpload(stranger, id, attachmentId, randomBytes(100))).status).toBe(404);
    const elsewhere = await seedOrganization(server, { name: 'Not Mine' });
    expect((await shareUpload(me, id, attachmentId, randomBytes(100), elsewhere)).status).toBe(404);
    const orgItem = await seedOrgItem(server, org, [collection]);
    expect((await shareUpload(me, orgItem, attachmentId, randomBytes(100))).status).toBe(404);
    expect(await filesOf(id)).toHaveLength(1);
    expect(shareEntry(await attachmentsOfItem(id))).toBeUndefined();
  });

  it('refuses a copy whose length is not the original\'s and leaves nothing behind', async () => {
    const { id, attachmentId } = await keylessAttachment(randomBytes(500));
    for (const size of [499, 501, 533]) {
      const res = await shareUpload(me, id, attachmentId, randomBytes(size));
      expect(res.status, `${size}: ${res.text}`).toBe(400);
      expect(res.body.message).toBe('File received does not match expected file length.');
    }
    expect(await filesOf(id)).toHaveLength(1);
    expect(shareEntry(await attachmentsOfItem(id))).toBeUndefined();
    // The same length, or a MAC longer (an original encrypted without one), is taken.
    expect((await shareUpload(me, id, attachmentId, randomBytes(532))).status).toBe(200);
  });

  it("refuses when the organization has no storage or not enough left, with the official messages", async () => {
    const { id, attachmentId } = await keylessAttachment(randomBytes(100));
    await server.database.db.updateTable('organizations').set({ storage_bytes: 1024 * 1024 * 1024 * 1000 }).where('id', '=', org).execute();
    try {
      const full = await shareUpload(me, id, attachmentId, randomBytes(100));
      expect(full.status).toBe(400);
      expect(full.body.message).toBe('Not enough storage available for this organization.');
    } finally {
      await server.database.db.updateTable('organizations').set({ storage_bytes: 0 }).where('id', '=', org).execute();
    }
    const poor = await seedOrganization(server, { overrides: { max_storage_gb: null } });
    await seedMembershipFor(poor, sharer.userId);
    const none = await shareUpload(me, id, attachmentId, randomBytes(100), poor);
    expect(none.status).toBe(400);
    expect(none.body.message).toBe('This organization cannot use attachments.');
    expect(await filesOf(id)).toHaveLength(1);
  });
});

const attachmentsOfItem = async (id: string) => (await server.database.db.selectFrom('ciphers').select('attachments').where('id', '=', id).executeTakeFirstOrThrow()).attachments ?? '';
const shareEntry = (text: string) => (text ? Object.values(JSON.parse(text) as Record<string, { share?: unknown }>).find((a) => a.share)?.share : undefined);
const seedMembershipFor = (organizationId: string, userId: string) => seedMembership(server, { organizationId, userId, type: OrganizationUserType.User, key: '4.aGVsbG8=' });

describe('attachments in an S3-compatible bucket', () => {
  it('uploads, downloads byte for byte and deletes through the bucket', async () => {
    const s3 = await startLocalS3();
    const other = await startTestServer({ env: s3.env });
    const bucket = s3FileStore({ bucket: s3.bucket, region: 'us-east-1', endpoint: s3.endpoint, forcePathStyle: true, accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER', prefix: '' });
    const keys = async () => {
      const found: string[] = [];
      for await (const file of bucket.list()) found.push(file.key);
      return found;
    };
    try {
      const carol = await seedAccount(other, { email: 'carol@example.com' });
      const item = await other.request('POST', '/api/ciphers', { token: carol.accessToken, json: cipherBody('login', carol.account.userKey) });
      const id = item.body.id as string;
      const bytes = randomBytes(200_000);
      const started = await other.request('POST', `/api/ciphers/${id}/attachment/v2`, { token: carol.accessToken, json: { key: ENC, fileName: NAME, fileSize: bytes.length } });
      const form = new FormData();
      form.append('data', new Blob([bytes]), NAME);
      const done = await undiciFetch(`${other.baseUrl}/api/ciphers/${started.body.url as string}`, { method: 'POST', body: form, headers: { authorization: `Bearer ${carol.accessToken}` } });
      expect(done.status, await done.text()).toBe(200);
      const data = await other.request('GET', `/api/ciphers/${id}/attachment/${started.body.attachmentId as string}`, { token: carol.accessToken });
      const u = new URL(data.body.url as string);
      const got = await undiciFetch(`${other.baseUrl}${u.pathname}${u.search}`);
      expect(Buffer.from(await got.arrayBuffer()).equals(bytes)).toBe(true);
      expect(await keys()).toEqual([`attachments/${id}/${started.body.attachmentId as string}`]);
      expect((await other.request('DELETE', `/api/ciphers/${id}/attachment/${started.body.attachmentId as string}`, { token: carol.accessToken })).status).toBe(200);
      // The object is gone from the bucket, not only from the item.
      expect(await keys()).toEqual([]);
      expect((await undiciFetch(`${other.baseUrl}${u.pathname}${u.search}`)).status).toBe(404);
    } finally {
      await other.close();
      await s3.close();
    }
  });
});
