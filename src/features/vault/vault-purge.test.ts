import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fetch as undiciFetch, FormData } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { actor, ENC, seedCollection, type Actor } from '../../../test/support/admin.js';
import { seedOrgItem } from '../../../test/support/org-items.js';
import { seedOrganization } from '../../../test/support/orgs.js';
import { recordingPushes } from '../../../test/support/pushes.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { cipherBody } from '../../../test/support/vault.js';
import { PushType } from '../../platform/push/pushes.js';
import { OrganizationUserType } from '../../platform/access/roles.js';

const pushes = recordingPushes();
let server: TestServer;
let org: string;
let owner: Actor;
let member: Actor;
let shared: string;

beforeAll(async () => {
  server = await startTestServer({ pushes });
  org = await seedOrganization(server, { name: 'Purge Org' });
  owner = await actor(server, org, 'purge-owner@example.com', { type: OrganizationUserType.Owner });
  member = await actor(server, org, 'purge-member@example.com');
  shared = await seedCollection(server, org, { users: [[owner.memberId], [member.memberId]] });
});
afterAll(async () => server?.close());
beforeEach(() => pushes.clear());

const db = () => server.database.db;
const req = (who: Actor, method: string, path: string, json?: unknown) => server.request(method, `/api${path}`, { token: who.token, ...(json === undefined ? {} : { json }) });
const purge = (who: Actor, secret: string, organizationId?: string) =>
  req(who, 'POST', `/ciphers/purge${organizationId ? `?organizationId=${organizationId}` : ''}`, { masterPasswordHash: secret });
const filesOf = async (cipherId: string) => (existsSync(join(server.filesDir, 'attachments', cipherId)) ? readdir(join(server.filesDir, 'attachments', cipherId)) : []);
const exists = async (id: string) => Boolean(await db().selectFrom('ciphers').select('id').where('id', '=', id).executeTakeFirst());
const userRow = (id: string) => db().selectFrom('users').select(['storage_bytes', 'account_revision_date']).where('id', '=', id).executeTakeFirstOrThrow();
const orgStorage = async () => Number((await db().selectFrom('organizations').select('storage_bytes').where('id', '=', org).executeTakeFirstOrThrow()).storage_bytes);
const eventTypes = async () => (await db().selectFrom('events').select('type').where('organization_id', '=', org).orderBy('seq').execute()).map((r) => r.type);

/** An attachment through the official two steps; answers its id. */
async function attach(who: Actor, cipherId: string, bytes: Buffer): Promise<string> {
  const started = await req(who, 'POST', `/ciphers/${cipherId}/attachment/v2`, { key: ENC, fileName: ENC, fileSize: bytes.length });
  expect(started.status, started.text).toBe(200);
  const form = new FormData();
  form.append('data', new Blob([bytes]), ENC);
  const done = await undiciFetch(`${server.baseUrl}/api/ciphers/${started.body.url as string}`, { method: 'POST', body: form, headers: { authorization: `Bearer ${who.token}` } });
  expect(done.status, await done.text()).toBe(200);
  return started.body.attachmentId as string;
}

async function personalItem(who: Actor, folderId: string | null = null): Promise<string> {
  const res = await req(who, 'POST', '/ciphers', { ...cipherBody('login', who.account.userKey), folderId });
  expect(res.status, res.text).toBe(200);
  return res.body.id as string;
}

describe('POST /ciphers/purge (the caller\'s own vault)', () => {
  it('refuses a wrong or missing master password and deletes nothing', async () => {
    const item = await personalItem(member);
    const wrong = await purge(member, 'bm90IHRoZSBwYXNzd29yZA==');
    expect(wrong.status).toBe(400);
    expect(wrong.body.message).toBe('User verification failed.');
    expect((await req(member, 'POST', '/ciphers/purge', {})).status).toBe(400);
    expect(await exists(item)).toBe(true);
  });

  it('deletes every item and folder the caller owns, with their files and storage, and leaves organization items', async () => {
    const folder = await req(member, 'POST', '/folders', { name: ENC });
    expect(folder.status, folder.text).toBe(200);
    const filed = await personalItem(member, folder.body.id as string);
    const trashed = await personalItem(member);
    expect((await req(member, 'PUT', `/ciphers/${trashed}/delete`)).status).toBe(200);
    await attach(member, filed, randomBytes(3000));
    const orgItem = await seedOrgItem(server, org, [shared]);
    const others = await personalItem(owner);
    const before = await userRow(member.userId);
    expect(Number(before.storage_bytes)).toBe(3000);
    const events = (await db().selectFrom('events').select('seq').execute()).length;

    const res = await purge(member, member.account.masterPasswordHash);
    expect(res.status, res.text).toBe(200);
    expect(res.text).toBe('');
    for (const id of [filed, trashed]) expect(await exists(id)).toBe(false);
    expect(await db().selectFrom('folders').select('id').where('user_id', '=', member.userId).execute()).toEqual([]);
    expect(await filesOf(filed)).toEqual([]);
    const after = await userRow(member.userId);
    expect(Number(after.storage_bytes)).toBe(0);
    expect(after.account_revision_date > before.account_revision_date).toBe(true);
    // Organization items and other users' items stay; sync shows what is left.
    expect(await exists(orgItem)).toBe(true);
    expect(await exists(others)).toBe(true);
    const sync = await req(member, 'GET', '/sync');
    expect((sync.body.ciphers as { id: string }[]).map((c) => c.id)).toContain(orgItem);
    expect((sync.body.ciphers as { organizationId: string | null }[]).every((c) => c.organizationId === org)).toBe(true);
    expect(sync.body.folders).toEqual([]);
    // No event, as the official server records none; a SyncVault push to the caller.
    expect((await db().selectFrom('events').select('seq').execute()).length).toBe(events);
    expect(pushes.of(PushType.SyncVault).map((p) => p.target)).toEqual([{ user: member.userId }]);
  });
});

describe('POST /ciphers/purge?organizationId= (an organization\'s vault)', () => {
  it('refuses members who may not edit any collection (404, as for an unknown organization) and a wrong password', async () => {
    const item = await seedOrgItem(server, org, [shared]);
    expect((await purge(member, member.account.masterPasswordHash, org)).status).toBe(404);
    const stranger = await actor(server, await seedOrganization(server), 'purge-stranger@example.com', { type: OrganizationUserType.Owner });
    expect((await purge(stranger, stranger.account.masterPasswordHash, org)).status).toBe(404);
    const wrong = await purge(owner, member.account.masterPasswordHash, org);
    expect(wrong.status).toBe(400);
    expect(wrong.body.message).toBe('User verification failed.');
    expect(await exists(item)).toBe(true);
    expect(await eventTypes()).not.toContain(1601);
  });

  it("deletes the organization's items with their files and storage, keeps items in a member's default collection, and records Organization_PurgedVault", async () => {
    const withFile = await seedOrgItem(server, org, [shared]);
    await attach(owner, withFile, randomBytes(2048));
    const unassigned = await seedOrgItem(server, org);
    const myItems = await seedCollection(server, org, { users: [[member.memberId, { manage: true }]] });
    await db().updateTable('collections').set({ type: 1 }).where('id', '=', myItems).execute();
    const kept = await seedOrgItem(server, org, [myItems, shared]);
    const personal = await personalItem(owner);
    expect(await orgStorage()).toBe(2048);
    const before = await userRow(member.userId);

    const res = await purge(owner, owner.account.masterPasswordHash, org);
    expect(res.status, res.text).toBe(200);
    expect(await exists(withFile)).toBe(false);
    expect(await exists(unassigned)).toBe(false);
    expect(await filesOf(withFile)).toEqual([]);
    expect(await orgStorage()).toBe(0);
    // The default collection's item stays, out of the shared collection.
    expect(await exists(kept)).toBe(true);
    expect((await db().selectFrom('collection_ciphers').select('collection_id').where('cipher_id', '=', kept).execute()).map((r) => r.collection_id)).toEqual([myItems]);
    expect(await exists(personal)).toBe(true);
    const event = await db().selectFrom('events').select(['type', 'acting_user_id', 'cipher_id']).where('organization_id', '=', org).where('type', '=', 1601).executeTakeFirst();
    expect(event).toEqual({ type: 1601, acting_user_id: owner.userId, cipher_id: null });
    expect((await userRow(member.userId)).account_revision_date > before.account_revision_date).toBe(true);
    expect(pushes.of(PushType.SyncVault).map((p) => p.target)).toEqual(expect.arrayContaining([{ user: owner.userId }, { user: member.userId }]));
  });
});
