/**
 * The official `bw` CLI against a running server over HTTPS: organizations, end to end.
 *
 * An owner founds an organization (through the API, as the web vault would: `bw` cannot found
 * one), then drives its collections, members and items with `bw`. A second person is invited by
 * email, accepts with the mailed token, is confirmed with `bw confirm org-member`, and sees the
 * shared item in their own `bw` after a sync. One server for the file; the steps build on each
 * other in order, since each CLI command costs seconds.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, type LoggedInUser } from '../support/accounts.js';
import { createBwCli, type BwCli } from '../support/bw-cli.js';
import { createOrganization } from '../support/org-founding.js';
import { invitationFrom, startSmtpSink, type SmtpSink } from '../support/smtp-sink.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { createTestTls, type TestTls } from '../support/tls.js';

const SLOW = 300_000;
const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64');

interface Organization {
  object: string;
  id: string;
  name: string;
  status: number;
  type: number;
  enabled: boolean;
}
interface Collection {
  object: string;
  id: string;
  organizationId: string;
  name: string;
  externalId: string | null;
  groups?: { id: string }[];
  users?: { id: string; readOnly: boolean; hidePasswords: boolean; manage: boolean }[];
}
interface Member {
  object: string;
  id: string;
  email: string;
  name: string;
  status: number;
  type: number;
}
interface Item {
  id: string;
  organizationId?: string;
  collectionIds: string[];
  name: string;
  login?: { username?: string; password?: string };
}

let tls: TestTls;
let sink: SmtpSink;
let server: TestServer;
let owner: LoggedInUser;
let ownerBw: BwCli;
let memberBw: BwCli;
let orgId: string;
let ownerMemberId: string;
let defaultCollectionId: string;
let engineeringId: string;
let inviteeMemberId: string;
let itemId: string;

const MEMBER_EMAIL = 'e2e-member@example.com';

beforeAll(async () => {
  tls = await createTestTls();
  sink = await startSmtpSink();
  server = await startTestServer({ tls, env: { DEPLOYMENT: 'cloud', ...sink.env } });
  owner = await createUser(server, { email: 'e2e-owner@example.com', name: 'Owner', derivation: 'real' });
  orgId = (await createOrganization(server, owner, { name: 'E2E Org' })).id;
  const members = await server.request('GET', `/api/organizations/${orgId}/users`, { token: owner.accessToken });
  ownerMemberId = (members.body as { data: { id: string }[] }).data[0]?.id ?? '';

  ownerBw = await createBwCli({ serverUrl: server.baseUrl, caPath: tls.caPath });
  await ownerBw.configServer();
  const login = await ownerBw.login(owner.account.email, owner.account.password);
  expect(login.code, login.stderr).toBe(0);
}, SLOW);

afterAll(async () => {
  await ownerBw?.dispose();
  await memberBw?.dispose();
  await server?.close();
  await sink?.close();
});

describe('bw against an organization', () => {
  it('lists the organization and its founding collection', async () => {
    const orgs = await ownerBw.json<Organization[]>(['list', 'organizations']);
    expect(orgs).toEqual([{ object: 'organization', id: orgId, name: 'E2E Org', status: 2, type: 0, enabled: true }]);

    // Decrypted locally with the org key from the profile: the key wrapping is right.
    const mine = await ownerBw.json<Collection[]>(['list', 'collections']);
    expect(mine.map((c) => [c.organizationId, c.name])).toEqual([[orgId, 'Default collection']]);
    defaultCollectionId = mine[0]?.id ?? '';

    const orgCollections = await ownerBw.json<Collection[]>(['list', 'org-collections', '--organizationid', orgId]);
    expect(orgCollections.map((c) => [c.id, c.name])).toEqual([[defaultCollectionId, 'Default collection']]);
  }, SLOW);

  it('creates, reads, edits and deletes an org collection', async () => {
    const template = { organizationId: orgId, name: 'Engineering', externalId: 'eng-1', groups: [], users: [{ id: ownerMemberId, readOnly: false, hidePasswords: false, manage: true }] };
    const created = await ownerBw.json<Collection>(['create', 'org-collection', encode(template), '--organizationid', orgId]);
    expect(created).toMatchObject({ object: 'org-collection', organizationId: orgId, name: 'Engineering', externalId: 'eng-1' });
    engineeringId = created.id;

    const read = await ownerBw.json<Collection>(['get', 'org-collection', engineeringId, '--organizationid', orgId]);
    expect(read).toMatchObject({ id: engineeringId, name: 'Engineering', externalId: 'eng-1' });
    expect(read.users).toEqual([{ id: ownerMemberId, readOnly: false, hidePasswords: false, manage: true }]);

    const edited = await ownerBw.json<Collection>([
      'edit',
      'org-collection',
      engineeringId,
      encode({ ...template, name: 'Engineering (renamed)' }),
      '--organizationid',
      orgId,
    ]);
    expect(edited).toMatchObject({ id: engineeringId, name: 'Engineering (renamed)' });

    const scratch = await ownerBw.json<Collection>(['create', 'org-collection', encode({ ...template, name: 'Scratch', externalId: null }), '--organizationid', orgId]);
    const deleted = await ownerBw.run(['delete', 'org-collection', scratch.id, '--organizationid', orgId]);
    expect(deleted.code, deleted.stderr).toBe(0);

    const listed = await ownerBw.json<Collection[]>(['list', 'org-collections', '--organizationid', orgId]);
    expect(listed.map((c) => c.name).sort()).toEqual(['Default collection', 'Engineering (renamed)']);
  }, SLOW);

  it('confirms a member who accepted a mailed invitation', async () => {
    const invite = await server.request('POST', `/api/organizations/${orgId}/users/invite`, {
      token: owner.accessToken,
      json: { emails: [MEMBER_EMAIL], type: 2, collections: [{ id: engineeringId, readOnly: true, hidePasswords: false, manage: false }], groups: [] },
    });
    expect(invite.status, invite.text).toBe(200);
    const invitation = invitationFrom(await sink.waitFor(MEMBER_EMAIL));
    inviteeMemberId = invitation.organizationUserId;

    // Invited: bw refuses to confirm before the invitation is accepted.
    const early = await ownerBw.run(['confirm', 'org-member', inviteeMemberId, '--organizationid', orgId]);
    expect(early.code).not.toBe(0);

    const member = await createUser(server, { email: MEMBER_EMAIL, name: 'Member', derivation: 'real' });
    const accept = await server.request('POST', `/api/organizations/${orgId}/users/${inviteeMemberId}/accept`, {
      token: member.accessToken,
      json: { token: invitation.token },
    });
    expect(accept.status, accept.text).toBe(200);

    const before = await ownerBw.json<Member[]>(['list', 'org-members', '--organizationid', orgId]);
    expect(before.find((m) => m.id === inviteeMemberId)).toMatchObject({ object: 'org-member', email: MEMBER_EMAIL, name: 'Member', status: 1, type: 2 });

    const confirm = await ownerBw.run(['confirm', 'org-member', inviteeMemberId, '--organizationid', orgId]);
    expect(confirm.code, confirm.stderr).toBe(0);

    const after = await ownerBw.json<Member[]>(['list', 'org-members', '--organizationid', orgId]);
    expect(after.map((m) => [m.email, m.status, m.type]).sort()).toEqual([
      ['e2e-member@example.com', 2, 2],
      ['e2e-owner@example.com', 2, 0],
    ]);
    // Confirming twice is refused by the client, which reads the status from the server.
    const again = await ownerBw.run(['confirm', 'org-member', inviteeMemberId, '--organizationid', orgId]);
    expect(again.code).not.toBe(0);
  }, SLOW);

  it('moves a personal item into the organization and changes its collections', async () => {
    const personal = await ownerBw.json<Item>([
      'create',
      'item',
      encode({ type: 1, name: 'Shared login', notes: 'team notes', login: { username: 'deploy', password: 'hunter2', uris: [] }, fields: [], reprompt: 0, favorite: false }),
    ]);
    // bw leaves null properties out of what it prints.
    expect(personal.organizationId).toBeUndefined();
    itemId = personal.id;

    const moved = await ownerBw.run(['move', itemId, orgId, encode([defaultCollectionId])]);
    expect(moved.code, moved.stderr).toBe(0);
    const shared = await ownerBw.json<Item>(['get', 'item', itemId]);
    expect(shared).toMatchObject({ id: itemId, organizationId: orgId, collectionIds: [defaultCollectionId], name: 'Shared login', login: { username: 'deploy', password: 'hunter2' } });

    const recollected = await ownerBw.json<Item>(['edit', 'item-collections', itemId, encode([defaultCollectionId, engineeringId]), '--organizationid', orgId]);
    expect(recollected.collectionIds.sort()).toEqual([defaultCollectionId, engineeringId].sort());

    // The server holds the item under the organization, in both collections.
    const row = await server.database.db.selectFrom('ciphers').select(['organization_id', 'user_id']).where('id', '=', itemId).executeTakeFirstOrThrow();
    expect(row).toEqual({ organization_id: orgId, user_id: null });
    const links = await server.database.db.selectFrom('collection_ciphers').select('collection_id').where('cipher_id', '=', itemId).execute();
    expect(links.map((l) => l.collection_id).sort()).toEqual([defaultCollectionId, engineeringId].sort());
  }, SLOW);

  it('shows the shared item to the confirmed member after bw sync, read-only', async () => {
    memberBw = await createBwCli({ serverUrl: server.baseUrl, caPath: tls.caPath });
    await memberBw.configServer();
    const login = await memberBw.login(MEMBER_EMAIL, owner.account.password);
    expect(login.code, login.stderr).toBe(0);
    const sync = await memberBw.run(['sync', '-f']);
    expect(sync.code, sync.stderr).toBe(0);

    expect(await memberBw.json<Organization[]>(['list', 'organizations'])).toEqual([
      { object: 'organization', id: orgId, name: 'E2E Org', status: 2, type: 2, enabled: true },
    ]);
    // Only the collection the member was given, decrypted with the org key bw confirm wrapped.
    const collections = await memberBw.json<Collection[]>(['list', 'collections']);
    expect(collections.map((c) => [c.id, c.name])).toEqual([[engineeringId, 'Engineering (renamed)']]);

    const items = await memberBw.json<Item[]>(['list', 'items']);
    expect(items.map((i) => [i.id, i.name, i.organizationId])).toEqual([[itemId, 'Shared login', orgId]]);
    expect(items[0]?.login).toMatchObject({ username: 'deploy', password: 'hunter2' });

    // Read-only access: sync marked the item `edit: false`, so bw refuses to edit it.
    const edit = await memberBw.run(['edit', 'item', itemId, encode({ ...items[0], name: 'Hijacked' })]);
    expect(edit.code).not.toBe(0);
    expect(edit.stderr).toContain('You do not have permission to edit this item');
    expect((await ownerBw.json<Item>(['get', 'item', itemId])).name).toBe('Shared login');
  }, SLOW);

  it('takes the item away from the member when it leaves their collection', async () => {
    const recollected = await ownerBw.json<Item>(['edit', 'item-collections', itemId, encode([defaultCollectionId]), '--organizationid', orgId]);
    expect(recollected.collectionIds).toEqual([defaultCollectionId]);
    const sync = await memberBw.run(['sync', '-f']);
    expect(sync.code, sync.stderr).toBe(0);
    expect(await memberBw.json<Item[]>(['list', 'items'])).toEqual([]);
  }, SLOW);

  it('exports the organization vault and imports the file back into the organization', async () => {
    const file = join(ownerBw.appDataDir, 'org-export.json');
    // bw reads GET /organizations/{id}/export here, and imports through POST /ciphers/import-organization.
    const exported = await ownerBw.run(['export', '--organizationid', orgId, '--format', 'json', '--output', file]);
    expect(exported.code, exported.stderr).toBe(0);
    const data = JSON.parse(await readFile(file, 'utf8')) as { collections: { id: string; name: string }[]; items: Item[] };
    expect(data.collections.map((c) => c.id).sort()).toEqual([defaultCollectionId, engineeringId].sort());
    expect(data.items.map((i) => [i.name, i.collectionIds])).toEqual([['Shared login', [defaultCollectionId]]]);

    const imported = await ownerBw.run(['import', '--organizationid', orgId, 'bitwardenjson', file]);
    expect(imported.code, imported.stderr).toBe(0);
    await ownerBw.run(['sync', '-f']);
    const items = (await ownerBw.json<Item[]>(['list', 'items', '--organizationid', orgId])).filter((i) => i.name === 'Shared login');
    expect(items).toHaveLength(2);
    for (const item of items) expect(item).toMatchObject({ organizationId: orgId, collectionIds: [defaultCollectionId], login: { username: 'deploy', password: 'hunter2' } });
    // The collections the file names exist already: the import reuses them rather than making copies.
    const collections = await server.database.db.selectFrom('collections').select('id').where('organization_id', '=', orgId).execute();
    expect(collections).toHaveLength(2);
  }, SLOW);
});
