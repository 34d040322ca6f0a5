import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fetch as undiciFetch, FormData } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actor, ENC } from '../../../test/support/admin.js';
import { createUser, loginAccount, type LoggedInUser } from '../../../test/support/accounts.js';
import { testClock } from '../../../test/support/clock.js';
import { seedPolicy } from '../../../test/support/members.js';
import { seedOrganization } from '../../../test/support/orgs.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { schemaErrors } from '../../../test/support/vault.js';
import { OrganizationUserType } from '../../platform/access/roles.js';
import { PolicyType } from '../policies/policy-type.js';
import { accessIdOf, idOfAccessId } from './send-id.js';
import { SendAccessResponse, SendResponse } from './sends.schemas.js';
import { DISABLE_SEND, HIDE_EMAIL_DISALLOWED } from './send-policies.js';
import { fileSendBody, SEND_TEXT as TEXT, textSendBody } from '../../../test/support/sends.js';

const HASH = 'c2VuZC1wYXNzd29yZC1oYXNoLWZyb20tdGhlLWNsaWVudA==';
const DAY = 24 * 60 * 60 * 1000;

let server: TestServer;
let filesDir: string;
const clock = testClock();
let alice: LoggedInUser;
let bob: LoggedInUser;

beforeAll(async () => {
  server = await startTestServer({ clock, env: { SEND_ACCESS_PER_MINUTE: '10000', FILE_MAX_MB: '1' } });
  filesDir = server.filesDir;
  alice = await createUser(server, { email: 'alice@example.com' });
  bob = await createUser(server, { email: 'bob@example.com' });
});
afterAll(async () => {
  await server?.close();
});

const soon = (days: number) => new Date(clock.now().getTime() + days * DAY).toISOString();
const textSend = (overrides: Record<string, unknown> = {}) => textSendBody(soon(7), overrides);
type Who = { accessToken: string };
const req = (who: Who | null, method: string, path: string, json?: unknown, headers: Record<string, string> = {}) =>
  server.request(method, `/api${path}`, { ...(who ? { token: who.accessToken } : {}), headers, ...(json === undefined ? {} : { json }) });
const token = (form: Record<string, string>) => server.request('POST', '/identity/connect/token', { form: { grant_type: 'send_access', client_id: 'send', scope: 'api.send.access', ...form } });
const local = (url: string) => {
  const u = new URL(url);
  return `${server.baseUrl}${u.pathname}${u.search}`;
};
const eventsOf = async (sendId: string) =>
  (await server.database.db.selectFrom('events').select('type').where('send_id', '=', sendId).orderBy('seq').execute()).map((r) => r.type);

async function create(who: Who, overrides: Record<string, unknown> = {}) {
  const res = await req(who, 'POST', '/sends', textSend(overrides));
  expect(res.status, res.text).toBe(200);
  return res.body as { id: string; accessId: string; [k: string]: unknown };
}

describe('access ids', () => {
  it('writes the GUID in .NET byte order and reads it back', () => {
    // Guid("00112233-4455-6677-8899-aabbccddeeff").ToByteArray() = 33 22 11 00 55 44 77 66 88 99 aa bb cc dd ee ff
    expect(Buffer.from(accessIdOf('00112233-4455-6677-8899-aabbccddeeff'), 'base64url').toString('hex')).toBe('33221100554477668899aabbccddeeff');
    const id = randomUUID();
    expect(idOfAccessId(accessIdOf(id))).toBe(id);
    expect(idOfAccessId('not an id')).toBeNull();
  });
});

describe('text Sends', () => {
  it('creates, lists, reads, edits and deletes a Send, with its events, and sync carries it', async () => {
    const created = await create(alice);
    expect(schemaErrors(SendResponse, created)).toEqual([]);
    expect(created).toMatchObject({ object: 'send', type: 0, authType: 2, name: ENC, text: { text: TEXT, hidden: false }, accessCount: 0, password: null, file: null });
    expect(idOfAccessId(created.accessId)).toBe(created.id);
    expect((await req(alice, 'GET', `/sends/${created.id}`)).body).toEqual(created);
    expect((await req(alice, 'GET', '/sends')).body.data).toContainEqual(created);
    expect((await req(alice, 'GET', '/sync')).body.sends).toContainEqual(created);
    expect((await req(bob, 'GET', `/sends/${created.id}`)).status).toBe(404);
    expect((await req(bob, 'PUT', `/sends/${created.id}`, textSend())).status).toBe(404);
    expect((await req(bob, 'DELETE', `/sends/${created.id}`)).status).toBe(404);

    const edited = await req(alice, 'PUT', `/sends/${created.id}`, textSend({ maxAccessCount: 3, text: { text: ENC, hidden: true } }));
    expect(edited.status, edited.text).toBe(200);
    expect(edited.body).toMatchObject({ maxAccessCount: 3, text: { text: ENC, hidden: true } });
    const changeType = await req(alice, 'PUT', `/sends/${created.id}`, textSend({ type: 1 }));
    expect(changeType.body.message).toBe("Cannot change a Send's type");

    expect((await req(alice, 'DELETE', `/sends/${created.id}`)).status).toBe(200);
    expect((await req(alice, 'GET', `/sends/${created.id}`)).status).toBe(404);
    expect(await eventsOf(created.id)).toEqual([2500, 2506, 2508]);
  });

  it('refuses dates the official server refuses', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ expirationDate: soon(0) }, 'You cannot create a Send that is already expired. Adjust the expiration date and try again.'],
      [{ deletionDate: soon(-1) }, 'You cannot have a Send with a deletion date in the past. Adjust the deletion date and try again.'],
      [{ deletionDate: soon(32) }, 'You cannot have a Send with a deletion date that far into the future. Adjust the Deletion Date to a value less than 31 days from now and try again.'],
      [{ expirationDate: soon(8) }, 'You cannot have a Send with an expiration date greater than the deletion date. Adjust the expiration date and try again.'],
    ];
    for (const [overrides, message] of cases) {
      const res = await req(alice, 'POST', '/sends', textSend(overrides));
      expect(res.status).toBe(400);
      expect(res.body.message).toBe(message);
    }
    expect((await req(alice, 'POST', '/sends', textSend({ text: null }))).status).toBe(400);
    expect((await req(alice, 'POST', '/sends', textSend({ key: 'not encrypted' }))).status).toBe(400);
  });

  it('counts anonymous accesses and refuses the Send after its maximum, when disabled and when expired', async () => {
    const send = await create(alice, { maxAccessCount: 2 });
    for (let i = 0; i < 2; i++) {
      const res = await req(null, 'POST', `/sends/access/${send.accessId}`, {});
      expect(res.status, res.text).toBe(200);
      expect(schemaErrors(SendAccessResponse, res.body)).toEqual([]);
      expect(res.body).toMatchObject({ object: 'send-access', id: send.accessId, type: 0, name: ENC, text: { text: TEXT }, creatorIdentifier: 'alice@example.com' });
    }
    expect((await req(null, 'POST', `/sends/access/${send.accessId}`, {})).status).toBe(404);
    expect((await req(alice, 'GET', `/sends/${send.id}`)).body.accessCount).toBe(2);
    expect(await eventsOf(send.id)).toEqual([2500, 2510, 2510]);

    const hidden = await create(alice, { hideEmail: true, disabled: true });
    expect((await req(null, 'POST', `/sends/access/${hidden.accessId}`, {})).status).toBe(404);
    await req(alice, 'PUT', `/sends/${hidden.id}`, textSend({ hideEmail: true }));
    expect((await req(null, 'POST', `/sends/access/${hidden.accessId}`, {})).body.creatorIdentifier).toBeNull();

    const expiring = await create(alice, { expirationDate: soon(1) });
    expect((await token({ send_id: expiring.accessId })).status).toBe(200);
    clock.advance(DAY + 1000);
    alice = await loginAccount(server, alice.account);
    bob = await loginAccount(server, bob.account);
    expect((await req(null, 'POST', `/sends/access/${expiring.accessId}`, {})).status).toBe(404);
    const refused = await token({ send_id: expiring.accessId });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ error: 'invalid_grant', send_access_error_type: 'send_id_invalid' });
    expect((await req(null, 'POST', `/sends/access/${accessIdOf(randomUUID())}`, {})).status).toBe(404);
  });

  it('protects a Send with the client-derived password hash, hashed at rest', async () => {
    const send = await create(alice, { authType: 1, password: HASH });
    expect(send.authType).toBe(1);
    const stored = await server.database.db.selectFrom('sends').select('password_hash').where('id', '=', send.id).executeTakeFirstOrThrow();
    expect(stored.password_hash).not.toContain(HASH);
    expect(await eventsOf(send.id)).toEqual([2502]);

    // Older clients: the hash in the body.
    expect((await req(null, 'POST', `/sends/access/${send.accessId}`, {})).status).toBe(401);
    const wrong = await req(null, 'POST', `/sends/access/${send.accessId}`, { password: 'd3Jvbmc=' });
    expect([wrong.status, wrong.body.message]).toEqual([400, 'Invalid password.']);
    expect((await req(null, 'POST', `/sends/access/${send.accessId}`, { password: HASH })).status).toBe(200);

    // Current clients: a send_access token from the identity service.
    const missing = await token({ send_id: send.accessId });
    expect(missing.body).toMatchObject({ error: 'invalid_request', send_access_error_type: 'password_hash_b64_required' });
    const bad = await token({ send_id: send.accessId, password_hash_b64: 'd3Jvbmc=' });
    expect(bad.body).toMatchObject({ error: 'invalid_grant', send_access_error_type: 'password_hash_b64_invalid' });
    const good = await token({ send_id: send.accessId, password_hash_b64: HASH });
    expect(good.status, good.text).toBe(200);
    expect(good.body).toMatchObject({ token_type: 'Bearer', scope: 'api.send.access' });
    const opened = await server.request('POST', '/api/sends/access', { token: good.body.access_token });
    expect(opened.status, opened.text).toBe(200);
    expect(opened.body.id).toBe(send.accessId);
    expect((await server.request('POST', '/api/sends/access', { token: alice.accessToken })).status).toBe(401);
    expect((await server.request('POST', '/api/sends/access')).status).toBe(401);

    // An edit with a new password replaces the old one; an edit without one keeps it.
    const NEW_HASH = 'bmV3LXNlbmQtcGFzc3dvcmQtaGFzaA==';
    expect((await req(alice, 'PUT', `/sends/${send.id}`, textSend({ authType: 1, password: NEW_HASH }))).status).toBe(200);
    expect((await req(null, 'POST', `/sends/access/${send.accessId}`, { password: HASH })).status).toBe(400);
    expect((await req(null, 'POST', `/sends/access/${send.accessId}`, { password: NEW_HASH })).status).toBe(200);
    expect((await req(alice, 'PUT', `/sends/${send.id}`, textSend({ authType: 1, password: null }))).status).toBe(200);
    expect((await req(null, 'POST', `/sends/access/${send.accessId}`, { password: NEW_HASH })).status).toBe(200);
    // Still protected: a Send without a password would open for the wrong one too.
    expect((await req(null, 'POST', `/sends/access/${send.accessId}`, { password: HASH })).status).toBe(400);

    const removed = await req(alice, 'PUT', `/sends/${send.id}/remove-password`);
    expect(removed.body).toMatchObject({ authType: 2, password: null });
    expect((await token({ send_id: send.accessId })).status).toBe(200);
  });
});

async function upload(who: Who, path: string, bytes: Buffer) {
  const form = new FormData();
  form.append('data', new Blob([bytes]), ENC);
  const res = await undiciFetch(`${server.baseUrl}/api${path}`, { method: 'POST', body: form, headers: { authorization: `Bearer ${who.accessToken}` } });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as { message: string }) : undefined };
}

const fileSend = (size: number, overrides: Record<string, unknown> = {}) => fileSendBody(soon(7), size, overrides);
const storageOf = async (userId: string) => Number((await server.database.db.selectFrom('users').select('storage_bytes').where('id', '=', userId).executeTakeFirstOrThrow()).storage_bytes);

describe('file Sends', () => {
  it('uploads the file, serves it byte for byte through a one-minute URL and counts the download', async () => {
    const bytes = randomBytes(5000);
    const before = await storageOf(alice.userId);
    const created = await req(alice, 'POST', '/sends/file/v2', fileSend(bytes.length, { maxAccessCount: 1 }));
    expect(created.status, created.text).toBe(200);
    const send = created.body.sendResponse;
    expect(created.body).toMatchObject({ object: 'send-fileUpload', fileUploadType: 0, url: `/sends/${send.id}/file/${send.file.id}` });
    expect(send.file).toMatchObject({ fileName: ENC, size: '5000', sizeName: '4.9 KB' });
    // Counted once uploaded, not when announced.
    expect(await storageOf(alice.userId)).toBe(before);
    expect((await upload(alice, created.body.url, bytes)).status).toBe(200);
    expect(await storageOf(alice.userId)).toBe(before + 5000);

    const granted = await token({ send_id: send.accessId });
    const opened = await server.request('POST', '/api/sends/access', { token: granted.body.access_token });
    expect(opened.body).toMatchObject({ type: 1, file: { id: send.file.id, fileName: ENC } });
    const link = await server.request('POST', `/api/sends/access/file/${send.file.id}`, { token: granted.body.access_token });
    expect(link.status, link.text).toBe(200);
    expect(link.body).toMatchObject({ object: 'send-fileDownload', id: send.file.id });
    const got = await undiciFetch(local(link.body.url as string));
    expect(Buffer.from(await got.arrayBuffer()).equals(bytes)).toBe(true);
    // Opening a file Send does not count; fetching its file does.
    expect((await server.request('POST', `/api/sends/access/file/${send.file.id}`, { token: granted.body.access_token })).status).toBe(404);
    expect(await eventsOf(send.id)).toEqual([2503, 2511]);

    expect((await req(alice, 'DELETE', `/sends/${send.id}`)).status).toBe(200);
    expect(existsSync(join(filesDir, 'sends', send.id))).toBe(false);
    expect(await storageOf(alice.userId)).toBe(before);
  });

  it('drops the Send when the bytes do not match, and refuses oversize files', async () => {
    const before = await storageOf(alice.userId);
    const created = await req(alice, 'POST', '/sends/file/v2', fileSend(100));
    const res = await upload(alice, created.body.url, randomBytes(99));
    expect([res.status, res.body?.message]).toEqual([400, 'File received does not match expected file length.']);
    expect((await req(alice, 'GET', `/sends/${created.body.sendResponse.id}`)).status).toBe(404);
    expect(await storageOf(alice.userId)).toBe(before);
    const big = await req(alice, 'POST', '/sends/file/v2', fileSend(1024 * 1024 + 1));
    expect([big.status, big.body.message]).toEqual([400, 'Max file size is 1 MB.']);
    const noHint = await req(alice, 'POST', '/sends/file/v2', fileSend(1, { fileLength: null }));
    expect(noHint.body.message).toBe('Invalid content. File size hint is required.');
    expect((await upload(bob, created.body.url, randomBytes(100))).status).toBe(404);
  });
});

describe('Send policies and purge', () => {
  it('enforces Disable Send and Send options for members, not owners', async () => {
    const org = await seedOrganization(server, { name: 'No Sends' });
    const owner = await actor(server, org, 'send-owner@example.com', { type: OrganizationUserType.Owner });
    const member = await actor(server, org, 'send-member@example.com');
    await seedPolicy(server, org, PolicyType.SendOptions);
    await server.database.db.updateTable('policies').set({ data: JSON.stringify({ disableHideEmail: true }) }).where('organization_id', '=', org).execute();
    const asMember = { accessToken: member.token };
    const hide = await req(asMember, 'POST', '/sends', textSend({ hideEmail: true }));
    expect([hide.status, hide.body.message]).toEqual([400, HIDE_EMAIL_DISALLOWED]);
    const mine = await create(asMember);
    await seedPolicy(server, org, PolicyType.DisableSend);
    const refused = await req(asMember, 'POST', '/sends', textSend());
    expect([refused.status, refused.body.message]).toEqual([400, DISABLE_SEND]);
    expect((await req(asMember, 'PUT', `/sends/${mine.id}`, textSend())).body.message).toBe(DISABLE_SEND);
    expect((await req(asMember, 'DELETE', `/sends/${mine.id}`)).status).toBe(200);
    await create({ accessToken: owner.token }, { hideEmail: true });
  });

  it('purges Sends past their deletion date with their files, once per fleet', async () => {
    const bytes = randomBytes(10);
    const created = await req(alice, 'POST', '/sends/file/v2', fileSend(bytes.length, { deletionDate: soon(1) }));
    await upload(alice, created.body.url, bytes);
    const id = created.body.sendResponse.id as string;
    expect(existsSync(join(filesDir, 'sends', id))).toBe(true);
    clock.advance(DAY + 1000);
    const features = (server.app as unknown as { features: { sendPurge: { purgeOnce(): Promise<number | null> } } }).features;
    // The running server's own purge holds the lease: a second instance would not purge.
    await server.database.db.updateTable('leases').set({ expires_at: new Date(0).toISOString() }).where('name', '=', 'send-purge').execute();
    expect(await features.sendPurge.purgeOnce()).toBeGreaterThanOrEqual(1);
    expect(await server.database.db.selectFrom('sends').select('id').where('id', '=', id).executeTakeFirst()).toBeUndefined();
    expect(existsSync(join(filesDir, 'sends', id))).toBe(false);
  });
});

describe('the per-address limit', () => {
  it('answers 429 past SEND_ACCESS_PER_MINUTE accesses from one address', async () => {
    const small = await startTestServer({ env: { SEND_ACCESS_PER_MINUTE: '2', FILES_DIR: filesDir } });
    try {
      const carol = await createUser(small, { email: 'carol@example.com' });
      const res = await small.request('POST', '/api/sends', { token: carol.accessToken, json: textSend({ deletionDate: new Date(Date.now() + DAY).toISOString() }) });
      const path = `/api/sends/access/${res.body.accessId as string}`;
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await small.request('POST', path, { json: {} })).status);
      expect(statuses).toEqual([200, 200, 429]);
    } finally {
      await small.close();
    }
  });
});
