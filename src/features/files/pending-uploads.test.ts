import { randomBytes, randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { fetch as undiciFetch, FormData } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actor, ENC, seedCollection, type Actor } from '../../../test/support/admin.js';
import { createUser, loginAccount, type LoggedInUser } from '../../../test/support/accounts.js';
import { testClock } from '../../../test/support/clock.js';
import { seedOrgItem, seedPersonalItem } from '../../../test/support/org-items.js';
import { seedOrganization } from '../../../test/support/orgs.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { createLease } from '../../db/leases.js';
import { OrganizationUserType } from '../../platform/access/roles.js';
import { localFileStore } from '../../platform/storage/file-store.js';
import { createFileSweeper } from './file-sweeper.js';
import { itemsWithPendingUploads, PENDING_UPLOAD_TTL_MS } from './pending-uploads.js';

const NAME = '2.BBBBBBBBBBBBBBBBBBBBBB==|BBBBBBBBBBBBBBBBBBBBBB==|BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB=';
const MB = 1024 * 1024;
const GB = 1024 * MB;
const DAY = 24 * 60 * 60 * 1000;

let server: TestServer;
const clock = testClock();

beforeAll(async () => {
  // The official limits: 500 MB a file; a user's quota of 1 GB, as an organization's smallest plan storage.
  server = await startTestServer({ clock, env: { FILE_MAX_MB: '500', ATTACHMENT_USER_QUOTA_MB: '1024' } });
});
afterAll(async () => {
  await server?.close();
});

type Who = { token: string } | { accessToken: string };
const tokenOf = (who: Who) => ('token' in who ? who.token : who.accessToken);
const api = (who: Who, method: string, path: string, json?: unknown) => server.request(method, `/api${path}`, { token: tokenOf(who), ...(json === undefined ? {} : { json }) });
const announce = (who: Who, cipherId: string, fileSize: number) => api(who, 'POST', `/ciphers/${cipherId}/attachment/v2`, { key: ENC, fileName: NAME, fileSize });

async function upload(who: Who, path: string, bytes: Buffer) {
  const form = new FormData();
  form.append('data', new Blob([bytes]), NAME);
  const res = await undiciFetch(`${server.baseUrl}/api${path}`, { method: 'POST', body: form, headers: { authorization: `Bearer ${tokenOf(who)}` } });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as { message: string }) : undefined };
}

const fileSend = (fileLength: number) => ({
  type: 1,
  name: ENC,
  key: ENC,
  deletionDate: new Date(clock.now().getTime() + 7 * DAY).toISOString(),
  file: { fileName: ENC },
  fileLength,
  disabled: false,
  hideEmail: false,
});

const orgStorage = async (orgId: string) => Number((await server.database.db.selectFrom('organizations').select('storage_bytes').where('id', '=', orgId).executeTakeFirstOrThrow()).storage_bytes);
const userStorage = async (userId: string) => Number((await server.database.db.selectFrom('users').select('storage_bytes').where('id', '=', userId).executeTakeFirstOrThrow()).storage_bytes);

describe('storage counts uploaded files, not announcements', () => {
  let org: string;
  let owner: Actor;
  let manager: Actor;
  let managed: string;
  beforeAll(async () => {
    org = await seedOrganization(server, { name: 'Quota Org', overrides: { max_storage_gb: 1 } });
    owner = await actor(server, org, 'quota-owner@example.com', { type: OrganizationUserType.Owner });
    manager = await actor(server, org, 'quota-manager@example.com');
    managed = await seedOrgItem(server, org, [await seedCollection(server, org, { users: [[manager.memberId, { manage: true }]] })]);
  });

  it("keeps a collection manager's announcements never sent from filling the organization's storage", async () => {
    // Announcements adding up to the whole 1 GB, none of them ever sent.
    for (const size of [500 * MB, 500 * MB, GB - 1000 * MB]) expect((await announce(manager, managed, size)).status).toBe(200);
    expect(await orgStorage(org)).toBe(0);

    const item = await seedOrgItem(server, org, [await seedCollection(server, org, { users: [[owner.memberId]] })]);
    const bytes = randomBytes(2048);
    const begun = await announce(owner, item, bytes.length);
    expect(begun.status, begun.text).toBe(200);
    expect((await upload(owner, `/ciphers/${begun.body.url as string}`, bytes)).status).toBe(200);
    expect(await orgStorage(org)).toBe(2048);
  });

  it('counts an upload once stored, refuses one the room left cannot take, and gives back only what was counted', async () => {
    const before = await orgStorage(org);
    const small = await announce(manager, managed, 1000);
    const big = await announce(manager, managed, 400 * MB);
    expect(await orgStorage(org)).toBe(before);
    expect((await upload(manager, `/ciphers/${small.body.url as string}`, randomBytes(1000))).status).toBe(200);
    expect(await orgStorage(org)).toBe(before + 1000);

    // Deleting counts back what counted: the uploaded file's bytes, nothing for an announcement.
    expect((await api(manager, 'DELETE', `/ciphers/${managed}/attachment/${big.body.attachmentId as string}`)).status).toBe(200);
    expect(await orgStorage(org)).toBe(before + 1000);
    expect((await api(manager, 'DELETE', `/ciphers/${managed}/attachment/${small.body.attachmentId as string}`)).status).toBe(200);
    expect(await orgStorage(org)).toBe(before);
  });

  it('refuses an upload when uploads made since its announcement took the room it needs, and drops it', async () => {
    const poor = await seedOrganization(server, { overrides: { max_storage_gb: 1, storage_bytes: GB - 3000 } });
    const boss = await actor(server, poor, `quota-boss-${poor}@example.com`, { type: OrganizationUserType.Owner });
    const item = await seedOrgItem(server, poor, [await seedCollection(server, poor, { users: [[boss.memberId]] })]);
    // An announcement still needs room for its file when it is made.
    expect((await announce(boss, item, 3001)).body.message).toBe('Not enough storage available for this organization.');
    const first = await announce(boss, item, 2000);
    const second = await announce(boss, item, 2000);
    expect((await upload(boss, `/ciphers/${first.body.url as string}`, randomBytes(2000))).status).toBe(200);
    const late = await upload(boss, `/ciphers/${second.body.url as string}`, randomBytes(2000));
    expect([late.status, late.body?.message]).toEqual([400, 'Not enough storage available for this organization.']);
    expect(await orgStorage(poor)).toBe(GB - 1000);
    const kept = await server.database.db.selectFrom('ciphers').select('attachments').where('id', '=', item).executeTakeFirstOrThrow();
    expect(Object.keys(JSON.parse(kept.attachments ?? '{}') as object)).toEqual([first.body.attachmentId]);
  });

  it("counts a Send's file once uploaded, against its owner", async () => {
    const user: LoggedInUser = await createUser(server, { email: 'quota-sender@example.com' });
    const created = await api(user, 'POST', '/sends/file/v2', fileSend(5000));
    expect(created.status, created.text).toBe(200);
    // Announced, not sent: nothing counted, and more announcements than the quota holds are taken.
    expect(await userStorage(user.userId)).toBe(0);
    for (let i = 0; i < 3; i++) expect((await api(user, 'POST', '/sends/file/v2', fileSend(500 * MB))).status).toBe(200);
    expect((await upload(user, created.body.url as string, randomBytes(5000))).status).toBe(200);
    expect(await userStorage(user.userId)).toBe(5000);
    expect((await api(user, 'DELETE', `/sends/${created.body.sendResponse.id as string}`)).status).toBe(200);
    expect(await userStorage(user.userId)).toBe(0);
    // A personal item's announcement likewise.
    const item = await seedPersonalItem(server, user.userId);
    expect((await announce(user, item, 500 * MB)).status).toBe(200);
    expect(await userStorage(user.userId)).toBe(0);
  });
});

describe('announcements never uploaded', () => {
  it('are dropped by the file sweeper two hours after their upload URL was given or renewed; uploads stay', async () => {
    const user = await createUser(server, { email: 'stale-announcer@example.com' });
    const item = await seedPersonalItem(server, user.userId);
    const [stale, renewed, uploaded] = [await announce(user, item, 1000), await announce(user, item, 1000), await announce(user, item, 1000)];
    expect((await upload(user, `/ciphers/${uploaded.body.url as string}`, randomBytes(1000))).status).toBe(200);
    const staleSend = await api(user, 'POST', '/sends/file/v2', fileSend(2000));
    const sentSend = await api(user, 'POST', '/sends/file/v2', fileSend(3000));
    expect((await upload(user, sentSend.body.url as string, randomBytes(3000))).status).toBe(200);
    const attachmentIds = async () => Object.keys(JSON.parse((await server.database.db.selectFrom('ciphers').select('attachments').where('id', '=', item).executeTakeFirstOrThrow()).attachments ?? '{}') as object).sort();
    // Signed in again after the clock moved past the access token's life.
    const sendStatus = async (created: typeof staleSend) => (await api(await loginAccount(server, user.account), 'GET', `/sends/${created.body.sendResponse.id as string}`)).status;

    const db = server.database.db;
    const sweeper = createFileSweeper({ db, clock, store: localFileStore(server.filesDir), lease: createLease(db, clock, `file-sweep-test-${randomUUID()}`) });
    clock.advance(PENDING_UPLOAD_TTL_MS - 10 * 60_000);
    expect((await api(await loginAccount(server, user.account), 'GET', `/ciphers/${item}/attachment/${renewed.body.attachmentId as string}/renew`)).status).toBe(200);
    await sweeper.sweepOnce();
    expect(await attachmentIds()).toEqual([stale, renewed, uploaded].map((r) => r.body.attachmentId as string).sort());
    expect(await sendStatus(staleSend)).toBe(200);

    clock.advance(20 * 60_000);
    await sweeper.sweepOnce();
    expect(await attachmentIds()).toEqual([renewed, uploaded].map((r) => r.body.attachmentId as string).sort());
    expect([await sendStatus(staleSend), await sendStatus(sentSend)]).toEqual([404, 200]);
    // The uploaded files are what counted, and still do.
    expect(await userStorage(user.userId)).toBe(4000);
    await sweeper.stop();
  });
});

describe('the search for announcements never uploaded', () => {
  it('reads the index of items with attachments, not every item', async () => {
    const { sql: text, parameters } = itemsWithPendingUploads(server.database.db, '').compile();
    const db = server.database.db;
    let plan: string;
    if (server.database.engine === 'sqlite') {
      const rows = await sql<{ detail: string }>`explain query plan ${sql.raw(inline(text, parameters))}`.execute(db);
      plan = rows.rows.map((r) => r.detail).join('\n');
    } else {
      // On a test-sized table PostgreSQL's planner rightly prefers a scan, so its plan proves
      // nothing here; on 5.9 million items (bench/capacity.ts's population) it picks this index.
      const index = await sql<{ indexdef: string }>`select indexdef from pg_indexes where indexname = 'ciphers_with_attachments'`.execute(db);
      plan = `${index.rows[0]?.indexdef ?? ''}`;
      expect(plan).toMatch(/WHERE \(attachments IS NOT NULL\)/);
      expect(text).toMatch(/"attachments" is not null/);
    }
    expect(plan).toContain('ciphers_with_attachments');
  });
});

/** The compiled query with its parameters written in, for EXPLAIN (the values are ours: a pattern, an id, a number). */
function inline(text: string, parameters: readonly unknown[]): string {
  const literal = (value: unknown) => (typeof value === 'number' ? String(value) : `'${String(value).replaceAll("'", "''")}'`);
  let i = 0;
  return text.replace(/\?|\$\d+/g, (marker) => literal(marker === '?' ? parameters[i++] : parameters[Number(marker.slice(1)) - 1]));
}
