import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fetch as undiciFetch, FormData } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENC } from '../../../test/support/admin.js';
import { createUser, type LoggedInUser } from '../../../test/support/accounts.js';
import { testClock } from '../../../test/support/clock.js';
import { sharedDatabaseUrl } from '../../../test/support/shared-database.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { fileSendBody } from '../../../test/support/sends.js';

/**
 * Send file download URLs (issue #36, defect 7): each downloads once, on any instance of a fleet,
 * and none after its Send was disabled, deleted, expired or lowered below its access count; a
 * URL that downloaded any number of times within its minute got around a one-access limit.
 */

const MINUTE = 60 * 1000;
const DAY = 24 * 60 * MINUTE;

const clock = testClock();
let filesDir: string;
let server: TestServer;
let twin: TestServer;
let alice: LoggedInUser;

beforeAll(async () => {
  // Two instances of a fleet over one database and one file store, as behind a load balancer.
  filesDir = await mkdtemp(join(tmpdir(), 'strongroom-send-downloads-'));
  const databaseUrl = await sharedDatabaseUrl();
  const env = { SEND_ACCESS_PER_MINUTE: '10000', FILES_DIR: filesDir };
  server = await startTestServer({ clock, databaseUrl, env });
  twin = await startTestServer({ clock, databaseUrl, env });
  alice = await createUser(server, { email: 'send-downloads@example.com' });
}, 60_000);
afterAll(async () => {
  await twin?.close();
  await server?.close();
  await rm(filesDir, { recursive: true, force: true });
});

const soon = (ms: number) => new Date(clock.now().getTime() + ms).toISOString();
const fileSend = (size: number, overrides: Record<string, unknown> = {}) => fileSendBody(soon(7 * DAY), size, overrides);

const owner = (method: string, path: string, json?: unknown) => server.request(method, `/api${path}`, { token: alice.accessToken, ...(json === undefined ? {} : { json }) });
const grant = async (accessId: string) => {
  const res = await server.request('POST', '/identity/connect/token', { form: { grant_type: 'send_access', client_id: 'send', scope: 'api.send.access', send_id: accessId } });
  expect(res.status, res.text).toBe(200);
  return res.body.access_token as string;
};

/** A file Send with its file uploaded: the Send as its owner sees it, and the bytes. */
async function createFile(overrides: Record<string, unknown> = {}) {
  const bytes = randomBytes(300);
  const created = await owner('POST', '/sends/file/v2', fileSend(bytes.length, overrides));
  expect(created.status, created.text).toBe(200);
  const form = new FormData();
  form.append('data', new Blob([bytes]), ENC);
  const uploaded = await undiciFetch(`${server.baseUrl}/api${created.body.url as string}`, { method: 'POST', body: form, headers: { authorization: `Bearer ${alice.accessToken}` } });
  expect(uploaded.status).toBe(200);
  const send = created.body.sendResponse as { id: string; accessId: string; file: { id: string } };
  return { send, bytes };
}

/** A download URL for the file of `send`, through the current clients' flow (which counts an access). */
async function downloadUrl(send: { accessId: string; file: { id: string } }): Promise<string> {
  const link = await server.request('POST', `/api/sends/access/file/${send.file.id}`, { token: await grant(send.accessId) });
  expect(link.status, link.text).toBe(200);
  return link.body.url as string;
}

/** Fetches a download URL from one instance of the fleet. */
async function download(url: string, from: TestServer = server) {
  const u = new URL(url);
  const res = await undiciFetch(`${from.baseUrl}${u.pathname}${u.search}`);
  return { status: res.status, bytes: Buffer.from(await res.arrayBuffer()) };
}

describe('Send file download URLs', () => {
  it('download once, on whichever instance of the fleet', async () => {
    const { send, bytes } = await createFile();
    const url = await downloadUrl(send);
    const first = await download(url, twin);
    expect(first.status).toBe(200);
    expect(first.bytes.equals(bytes)).toBe(true);
    expect((await download(url, twin)).status).toBe(404);
    expect((await download(url, server)).status).toBe(404);

    // Each URL asked for (each counted an access) downloads once.
    const [a, b] = [await downloadUrl(send), await downloadUrl(send)];
    expect((await download(b, server)).status).toBe(200);
    expect((await download(a, twin)).status).toBe(200);
    expect((await owner('GET', `/sends/${send.id}`)).body.accessCount).toBe(3);
  });

  it('let the last access of a one-access Send download once, even fetched at once from several instances', async () => {
    const { send, bytes } = await createFile({ maxAccessCount: 1 });
    const url = await downloadUrl(send);
    const results = await Promise.all([download(url), download(url, twin), download(url)]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 404, 404]);
    expect(results.find((r) => r.status === 200)?.bytes.equals(bytes)).toBe(true);
    // And no one gets another URL: the Send is out of accesses.
    const more = await server.request('POST', '/identity/connect/token', { form: { grant_type: 'send_access', client_id: 'send', scope: 'api.send.access', send_id: send.accessId } });
    expect(more.body.send_access_error_type).toBe('send_id_invalid');
  });

  it('are refused once the Send is disabled, deleted, expired or past its maximum', async () => {
    const { send } = await createFile();
    const disabledUrl = await downloadUrl(send);
    expect((await owner('PUT', `/sends/${send.id}`, fileSend(300, { disabled: true }))).status).toBe(200);
    expect((await download(disabledUrl)).status).toBe(404);

    const lowered = (await createFile()).send;
    const [first, second] = [await downloadUrl(lowered), await downloadUrl(lowered)];
    expect((await owner('PUT', `/sends/${lowered.id}`, fileSend(300, { maxAccessCount: 1 }))).status).toBe(200);
    expect((await download(first)).status).toBe(404);
    expect((await download(second)).status).toBe(404);

    const expiring = (await createFile({ expirationDate: soon(2 * MINUTE) })).send;
    clock.advance(2 * MINUTE - 20_000);
    const expiringUrl = await downloadUrl(expiring);
    clock.advance(30_000);
    expect((await download(expiringUrl)).status).toBe(404);

    const deleted = (await createFile()).send;
    const deletedUrl = await downloadUrl(deleted);
    expect((await owner('DELETE', `/sends/${deleted.id}`)).status).toBe(200);
    expect((await download(deletedUrl)).status).toBe(404);
  });

  it('expire after a minute, and leave no row behind once the Send hands out the next', async () => {
    const { send } = await createFile();
    const url = await downloadUrl(send);
    clock.advance(MINUTE + 1000);
    expect((await download(url)).status).toBe(404);
    await downloadUrl(send);
    const rows = await server.database.db.selectFrom('send_downloads').select('id').where('send_id', '=', send.id).execute();
    expect(rows).toHaveLength(1);
  });
});
