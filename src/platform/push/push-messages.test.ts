import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { seedAccount, TEST_DEVICE, type LoggedInUser } from '../../../test/support/accounts.js';
import { actor, ENC, seedCollection, seedGroup, type Actor } from '../../../test/support/admin.js';
import { generateSymmetricKey } from '../../../test/support/bw-crypto.js';
import { createOrganization, foundingKeys } from '../../../test/support/org-founding.js';
import { seedMembership, seedOrganization } from '../../../test/support/orgs.js';
import { recordingPushes } from '../../../test/support/pushes.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { cipherBody } from '../../../test/support/vault.js';
import { systemClock } from '../../shared/clock.js';
import { createLicenseIssuer, licenseTerms } from '../../features/organizations/licenses.js';
import { PlanType } from '../../features/organizations/plans.js';
import { OrganizationUserStatusType, OrganizationUserType } from '../access/roles.js';
import { PushType, type Push } from './pushes.js';

/**
 * Every push a change sends, as the hub receives it (push-messages.ts): type, payload,
 * target and ContextId, captured by a recording Pushes injected into the test server.
 */
const recorder = recordingPushes();
let server: TestServer;
let user: LoggedInUser;
const key = generateSymmetricKey();
const DEVICE = TEST_DEVICE.deviceIdentifier;
// The token's device claim wins over a header naming another device (as the official CurrentContext reads it).
const OTHER_DEVICE_HEADER = { 'device-identifier': 'not-the-token-device' };
const call = (token: string, method: string, path: string, json?: unknown) =>
  server.request(method, `/api${path}`, { token, headers: OTHER_DEVICE_HEADER, ...(json === undefined ? {} : { json }) });

async function createItem(token: string, overrides: Record<string, unknown> = {}): Promise<{ id: string; revisionDate: string }> {
  const res = await call(token, 'POST', '/ciphers', cipherBody('login', key, overrides));
  expect(res.status, res.text).toBe(200);
  return res.body as { id: string; revisionDate: string };
}

/** The pushes sent by `action`, and nothing from before. */
async function pushesOf(action: () => Promise<unknown>): Promise<Push[]> {
  recorder.clear();
  await action();
  return [...recorder.sent];
}

beforeAll(async () => {
  server = await startTestServer({ pushes: recorder });
  user = await seedAccount(server);
});
afterAll(async () => server?.close());
beforeEach(() => recorder.clear());

describe('personal items', () => {
  it('create: SyncCipherCreate to the owner, with the new revision date and the acting device as ContextId', async () => {
    let created: { id: string; revisionDate: string } | undefined;
    const sent = await pushesOf(async () => (created = await createItem(user.accessToken)));
    expect(sent).toEqual([
      {
        type: PushType.SyncCipherCreate,
        payload: { Id: created?.id, UserId: user.userId, OrganizationId: null, RevisionDate: new Date(created?.revisionDate ?? ''), CollectionIds: [] },
        contextId: DEVICE,
        target: { user: user.userId },
      },
    ]);
  });

  it('edit: SyncCipherUpdate with the new revision date', async () => {
    const { id } = await createItem(user.accessToken);
    let revisionDate = '';
    const sent = await pushesOf(async () => {
      const res = await call(user.accessToken, 'PUT', `/ciphers/${id}`, cipherBody('login', key));
      expect(res.status, res.text).toBe(200);
      revisionDate = res.body.revisionDate as string;
    });
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ type: PushType.SyncCipherUpdate, payload: { Id: id, UserId: user.userId, RevisionDate: new Date(revisionDate) }, contextId: DEVICE });
  });

  it('trash and restore one item: SyncCipherUpdate; delete one for good: SyncLoginDelete', async () => {
    const { id } = await createItem(user.accessToken);
    const trashed = await pushesOf(() => call(user.accessToken, 'PUT', `/ciphers/${id}/delete`));
    expect(trashed.map((p) => [p.type, p.payload.Id, p.contextId])).toEqual([[PushType.SyncCipherUpdate, id, DEVICE]]);
    const restored = await pushesOf(() => call(user.accessToken, 'PUT', `/ciphers/${id}/restore`));
    expect(restored.map((p) => [p.type, p.payload.Id, p.contextId])).toEqual([[PushType.SyncCipherUpdate, id, DEVICE]]);
    const deleted = await pushesOf(() => call(user.accessToken, 'DELETE', `/ciphers/${id}`));
    expect(deleted.map((p) => [p.type, p.payload.Id, p.target, p.contextId])).toEqual([[PushType.SyncLoginDelete, id, { user: user.userId }, DEVICE]]);
  });

  it('bulk trash, restore, move and delete send one SyncCiphers each, with no ContextId', async () => {
    const ids = [(await createItem(user.accessToken)).id, (await createItem(user.accessToken)).id, (await createItem(user.accessToken)).id];
    for (const [method, path, body] of [
      ['PUT', '/ciphers/delete', { ids }],
      ['PUT', '/ciphers/restore', { ids }],
      ['PUT', '/ciphers/move', { ids, folderId: null }],
      ['DELETE', '/ciphers', { ids }],
    ] as const) {
      const sent = await pushesOf(async () => expect((await call(user.accessToken, method, path, body)).status).toBe(200));
      expect(sent, `${method} ${path}`).toEqual([{ type: PushType.SyncCiphers, payload: { UserId: user.userId, Date: expect.any(Date) }, contextId: null, target: { user: user.userId } }]);
    }
  });

  it('archive and unarchive send SyncCiphers with the acting device as ContextId (as the official commands do)', async () => {
    const { id } = await createItem(user.accessToken);
    const archived = await pushesOf(() => call(user.accessToken, 'PUT', `/ciphers/${id}/archive`));
    expect(archived.map((p) => [p.type, p.contextId])).toEqual([[PushType.SyncCiphers, DEVICE]]);
    const unarchived = await pushesOf(() => call(user.accessToken, 'PUT', '/ciphers/unarchive', { ids: [id] }));
    expect(unarchived.map((p) => [p.type, p.contextId])).toEqual([[PushType.SyncCiphers, DEVICE]]);
  });

  it('a change that writes nothing pushes nothing', async () => {
    const { id } = await createItem(user.accessToken);
    // Restoring an item that is not in the trash is no change.
    expect(await pushesOf(() => call(user.accessToken, 'PUT', `/ciphers/${id}/restore`))).toEqual([]);
    expect(await pushesOf(() => call(user.accessToken, 'PUT', '/ciphers/delete', { ids: [randomUUID()] }))).toEqual([]);
  });

  it('no push when the transaction fails part-way', async () => {
    const { id } = await createItem(user.accessToken);
    // The folder is checked inside the writing transaction, after the item was read.
    const res = await pushesOf(async () => {
      const r = await call(user.accessToken, 'PUT', `/ciphers/${id}`, cipherBody('login', key, { folderId: randomUUID() }));
      expect(r.status).toBe(400);
    });
    expect(res).toEqual([]);
    const stale = await pushesOf(async () => {
      const r = await call(user.accessToken, 'PUT', `/ciphers/${id}`, cipherBody('login', key, { lastKnownRevisionDate: '2000-01-01T00:00:00.000Z' }));
      expect(r.status).toBe(400);
    });
    expect(stale).toEqual([]);
  });

  it('import: one SyncVault with no ContextId; a refused import pushes nothing', async () => {
    const body = { folders: [{ name: ENC, id: null }], ciphers: [cipherBody('login', key), cipherBody('secureNote', key)], folderRelationships: [{ key: 0, value: 0 }] };
    const sent = await pushesOf(async () => expect((await call(user.accessToken, 'POST', '/ciphers/import', body)).status).toBe(200));
    expect(sent).toEqual([{ type: PushType.SyncVault, payload: { UserId: user.userId, Date: expect.any(Date) }, contextId: null, target: { user: user.userId } }]);
    const refused = await pushesOf(async () =>
      expect((await call(user.accessToken, 'POST', '/ciphers/import', { ...body, folderRelationships: [{ key: 0, value: 5 }] })).status).toBe(400),
    );
    expect(refused).toEqual([]);
  });
});

describe('folders', () => {
  it('create, rename and delete push SyncFolderCreate, SyncFolderUpdate and SyncFolderDelete with the device as ContextId', async () => {
    let folder = { id: '', revisionDate: '' };
    const created = await pushesOf(async () => (folder = (await call(user.accessToken, 'POST', '/folders', { name: ENC })).body as typeof folder));
    expect(created).toEqual([
      { type: PushType.SyncFolderCreate, payload: { Id: folder.id, UserId: user.userId, RevisionDate: new Date(folder.revisionDate) }, contextId: DEVICE, target: { user: user.userId } },
    ]);
    let renamed = { revisionDate: '' };
    const updated = await pushesOf(async () => (renamed = (await call(user.accessToken, 'PUT', `/folders/${folder.id}`, { name: ENC })).body as typeof renamed));
    expect(updated.map((p) => [p.type, p.payload.Id, p.payload.RevisionDate, p.contextId])).toEqual([[PushType.SyncFolderUpdate, folder.id, new Date(renamed.revisionDate), DEVICE]]);
    const deleted = await pushesOf(() => call(user.accessToken, 'DELETE', `/folders/${folder.id}`));
    expect(deleted.map((p) => [p.type, p.payload.Id, p.contextId])).toEqual([[PushType.SyncFolderDelete, folder.id, DEVICE]]);
    // Another user's (or a missing) folder: 404 and nothing pushed.
    expect(await pushesOf(() => call(user.accessToken, 'DELETE', `/folders/${folder.id}`))).toEqual([]);
  });
});

describe('settings and sessions', () => {
  it('equivalent domains and the avatar colour push SyncSettings with no ContextId', async () => {
    const domains = await pushesOf(async () =>
      expect((await call(user.accessToken, 'PUT', '/settings/domains', { equivalentDomains: [['a.test', 'b.test']], excludedGlobalEquivalentDomains: [] })).status).toBe(200),
    );
    expect(domains).toEqual([{ type: PushType.SyncSettings, payload: { UserId: user.userId, Date: expect.any(Date) }, contextId: null, target: { user: user.userId } }]);
    let profile: { avatarColor?: string } = {};
    const avatar = await pushesOf(async () => (profile = (await call(user.accessToken, 'PUT', '/accounts/avatar', { avatarColor: '#aabbcc' })).body as typeof profile));
    expect(profile.avatarColor).toBe('#aabbcc');
    expect(avatar.map((p) => [p.type, p.target, p.contextId])).toEqual([[PushType.SyncSettings, { user: user.userId }, null]]);
    expect(await pushesOf(async () => expect((await call(user.accessToken, 'PUT', '/accounts/avatar', { avatarColor: '#aabbccdd' })).status).toBe(400))).toEqual([]);
  });

  it('a password change logs the other devices out (LogOut with the acting device as ContextId); a wrong password pushes nothing', async () => {
    const someone = await seedAccount(server);
    const body = { masterPasswordHash: someone.account.masterPasswordHash, newMasterPasswordHash: someone.account.masterPasswordHash, key: someone.account.encryptedUserKey };
    const wrong = await pushesOf(async () => expect((await call(someone.accessToken, 'POST', '/accounts/password', { ...body, masterPasswordHash: 'wrong' })).status).toBe(400));
    expect(wrong).toEqual([]);
    const sent = await pushesOf(async () => expect((await call(someone.accessToken, 'POST', '/accounts/password', body)).status).toBe(200));
    expect(sent).toEqual([{ type: PushType.LogOut, payload: { UserId: someone.userId, Reason: null }, contextId: DEVICE, target: { user: someone.userId } }]);
  });

  it('logging out everywhere and deleting the account push LogOut to every device, the acting one included', async () => {
    const someone = await seedAccount(server);
    const secret = { masterPasswordHash: someone.account.masterPasswordHash };
    const stamp = await pushesOf(async () => expect((await call(someone.accessToken, 'POST', '/accounts/security-stamp', secret)).status).toBe(200));
    expect(stamp).toEqual([{ type: PushType.LogOut, payload: { UserId: someone.userId, Reason: null }, contextId: null, target: { user: someone.userId } }]);
    const again = await seedAccount(server);
    const deleted = await pushesOf(async () =>
      expect((await call(again.accessToken, 'DELETE', '/accounts', { masterPasswordHash: again.account.masterPasswordHash })).status).toBe(200),
    );
    expect(deleted.map((p) => [p.type, p.target, p.contextId])).toEqual([[PushType.LogOut, { user: again.userId }, null]]);
  });
});

describe('organization items', () => {
  let org: string;
  let owner: Actor;
  let direct: Actor;
  let viaGroup: LoggedInUser;
  let allAccess: LoggedInUser;
  let outsider: LoggedInUser;
  let collection: string;

  beforeAll(async () => {
    org = await seedOrganization(server, { name: 'Pushes' });
    owner = await actor(server, org, `owner-${randomUUID().slice(0, 8)}@example.com`, { type: OrganizationUserType.Owner });
    direct = await actor(server, org, `direct-${randomUUID().slice(0, 8)}@example.com`);
    viaGroup = await seedAccount(server);
    allAccess = await seedAccount(server);
    outsider = await seedAccount(server);
    const groupMember = await seedMembership(server, { organizationId: org, userId: viaGroup.userId });
    await seedMembership(server, { organizationId: org, userId: allAccess.userId, accessAll: true });
    await seedMembership(server, { organizationId: org, userId: outsider.userId });
    // An invited member never sees items, whatever its grants.
    const invited = await seedMembership(server, { organizationId: org, email: 'invited@example.com', status: OrganizationUserStatusType.Invited });
    const group = await seedGroup(server, org, [groupMember]);
    collection = await seedCollection(server, org, { users: [[direct.memberId], [invited]], groups: [[group]] });
  });

  const recipients = (sent: Push[]) => sent.map((p) => (p.target as { user: string }).user).sort();

  it('create reaches exactly the users who see the item, one push each naming that user, with its collections', async () => {
    let item = { id: '', revisionDate: '' };
    const sent = await pushesOf(async () => {
      const res = await call(direct.token, 'POST', '/ciphers/create', { cipher: cipherBody('login', key, { organizationId: org }), collectionIds: [collection] });
      expect(res.status, res.text).toBe(200);
      item = res.body as typeof item;
    });
    expect(recipients(sent)).toEqual([direct.userId, viaGroup.userId, allAccess.userId].sort());
    expect(recipients(sent)).not.toContain(outsider.userId);
    expect(recipients(sent)).not.toContain(owner.userId);
    for (const push of sent) {
      const to = (push.target as { user: string }).user;
      expect(push).toEqual({
        type: PushType.SyncCipherCreate,
        payload: { Id: item.id, UserId: to, OrganizationId: org, RevisionDate: new Date(item.revisionDate), CollectionIds: [collection] },
        contextId: DEVICE,
        target: { user: to },
      });
    }
  });

  it('edit, collection change and permanent delete reach the same users (delete with the collections it had)', async () => {
    const created = await call(direct.token, 'POST', '/ciphers/create', { cipher: cipherBody('login', key, { organizationId: org }), collectionIds: [collection] });
    const id = created.body.id as string;
    const edited = await pushesOf(async () => expect((await call(direct.token, 'PUT', `/ciphers/${id}`, cipherBody('login', key, { organizationId: org }))).status).toBe(200));
    expect(edited.every((p) => p.type === PushType.SyncCipherUpdate && p.payload.Id === id)).toBe(true);
    expect(recipients(edited)).toEqual([direct.userId, viaGroup.userId, allAccess.userId].sort());

    const moved = await pushesOf(async () => expect((await call(direct.token, 'PUT', `/ciphers/${id}/collections`, { collectionIds: [collection] })).status).toBe(200));
    expect(moved.map((p) => p.type)).toEqual([PushType.SyncCipherUpdate, PushType.SyncCipherUpdate, PushType.SyncCipherUpdate]);

    const deleted = await pushesOf(async () => expect((await call(direct.token, 'DELETE', `/ciphers/${id}`)).status).toBe(200));
    expect(recipients(deleted)).toEqual([direct.userId, viaGroup.userId, allAccess.userId].sort());
    expect(deleted.every((p) => p.type === PushType.SyncLoginDelete && (p.payload.CollectionIds as string[])[0] === collection)).toBe(true);
  });

  it('a personal item shared into a collection reaches its users', async () => {
    const { id } = await createItem(direct.token);
    const sent = await pushesOf(async () => {
      const res = await call(direct.token, 'PUT', `/ciphers/${id}/share`, { cipher: cipherBody('login', key, { organizationId: org }), collectionIds: [collection] });
      expect(res.status, res.text).toBe(200);
    });
    expect(sent.every((p) => p.type === PushType.SyncCipherUpdate)).toBe(true);
    expect(recipients(sent)).toEqual([direct.userId, viaGroup.userId, allAccess.userId].sort());
  });

  it('bulk collection assignment sends nothing, as the official server', async () => {
    const created = await call(direct.token, 'POST', '/ciphers/create', { cipher: cipherBody('login', key, { organizationId: org }), collectionIds: [collection] });
    const sent = await pushesOf(async () =>
      expect((await call(direct.token, 'POST', '/ciphers/bulk-collections', { organizationId: org, cipherIds: [created.body.id], collectionIds: [collection] })).status).toBe(200),
    );
    expect(sent).toEqual([]);
  });
});

describe('organization membership and policies', () => {
  it('founding an organization tells the founder (SyncOrgKeys): cloud sign-up and self-hosted license', async () => {
    const expected = (userId: string) => [{ type: PushType.SyncOrgKeys, payload: { UserId: userId, Date: expect.any(Date) }, contextId: null, target: { user: userId } }];
    const cloudPushes = recordingPushes();
    const cloud = await startTestServer({ env: { DEPLOYMENT: 'cloud' }, pushes: cloudPushes });
    try {
      const founder = await seedAccount(cloud);
      await createOrganization(cloud, founder);
      expect(cloudPushes.sent).toEqual(expected(founder.userId));
    } finally {
      await cloud.close();
    }

    const founder = await seedAccount(server);
    const license = await createLicenseIssuer({ db: server.database.db, clock: systemClock }).issue(
      licenseTerms({ id: randomUUID(), licenseKey: randomUUID(), name: 'Licensed', billingEmail: 'billing@example.com', planType: PlanType.EnterpriseAnnually, expires: new Date(Date.now() + 86_400_000).toISOString() }),
    );
    const sent = await pushesOf(async () => {
      const res = await server.request('POST', '/api/organizations/license', { token: founder.accessToken, json: { license: JSON.stringify(license), ...foundingKeys(founder).fields } });
      expect(res.status, res.text).toBe(200);
    });
    expect(sent).toEqual(expected(founder.userId));
  });

  it('confirm, revoke, restore and remove tell the member (SyncOrgKeys); leaving tells the leaver', async () => {
    const org = await seedOrganization(server, { name: 'Members' });
    const owner = await actor(server, org, `owner-${randomUUID().slice(0, 8)}@example.com`, { type: OrganizationUserType.Owner });
    const joiner = await seedAccount(server);
    const memberId = await seedMembership(server, { organizationId: org, userId: joiner.userId, status: OrganizationUserStatusType.Accepted });
    const base = `/organizations/${org}/users/${memberId}`;
    const expected = [{ type: PushType.SyncOrgKeys, payload: { UserId: joiner.userId, Date: expect.any(Date) }, contextId: null, target: { user: joiner.userId } }];
    for (const [method, path, body] of [
      ['POST', `${base}/confirm`, { key: '4.aGVsbG8=' }],
      ['PUT', `${base}/revoke`, undefined],
      ['PUT', `${base}/restore`, undefined],
      ['DELETE', base, undefined],
    ] as const) {
      const sent = await pushesOf(async () => expect((await call(owner.token, method, path, body)).status, `${method} ${path}`).toBe(200));
      expect(sent, `${method} ${path}`).toEqual(expected);
    }
    // A refused command (the member is gone now) pushes nothing.
    expect(await pushesOf(async () => expect((await call(owner.token, 'PUT', `${base}/revoke`)).status).toBe(404))).toEqual([]);

    const leaver = await actor(server, org, `leaver-${randomUUID().slice(0, 8)}@example.com`);
    const left = await pushesOf(async () => expect((await call(leaver.token, 'POST', `/organizations/${org}/leave`)).status).toBe(200));
    expect(left.map((p) => [p.type, p.target])).toEqual([[PushType.SyncOrgKeys, { user: leaver.userId }]]);
  });

  it('bulk revoke tells each member once', async () => {
    const org = await seedOrganization(server, { name: 'Bulk' });
    const owner = await actor(server, org, `owner-${randomUUID().slice(0, 8)}@example.com`, { type: OrganizationUserType.Owner });
    const a = await seedAccount(server);
    const b = await seedAccount(server);
    const ids = [await seedMembership(server, { organizationId: org, userId: a.userId }), await seedMembership(server, { organizationId: org, userId: b.userId })];
    const sent = await pushesOf(async () => expect((await call(owner.token, 'PUT', `/organizations/${org}/users/revoke`, { ids })).status).toBe(200));
    expect(sent.map((p) => [p.type, p.target])).toEqual([
      [PushType.SyncOrgKeys, { user: a.userId }],
      [PushType.SyncOrgKeys, { user: b.userId }],
    ]);
  });

  it('saving a policy pushes PolicyChanged with the policy to the organization; a refused save pushes nothing', async () => {
    const org = await seedOrganization(server, { name: 'Policies' });
    const owner = await actor(server, org, `owner-${randomUUID().slice(0, 8)}@example.com`, { type: OrganizationUserType.Owner });
    let saved = { id: '', revisionDate: '' };
    const sent = await pushesOf(async () => {
      const res = await call(owner.token, 'PUT', `/organizations/${org}/policies/0`, { type: 0, enabled: true, data: null });
      expect(res.status, res.text).toBe(200);
      saved = res.body as typeof saved;
    });
    expect(sent).toEqual([
      {
        type: PushType.PolicyChanged,
        payload: {
          OrganizationId: org,
          Policy: { Id: saved.id, OrganizationId: org, Type: 0, Data: null, Enabled: true, CreationDate: expect.any(Date), RevisionDate: new Date(saved.revisionDate) },
        },
        contextId: null,
        target: { organization: org },
      },
    ]);
    // Requires the single organization policy first: refused inside the transaction.
    const refused = await pushesOf(async () => expect((await call(owner.token, 'PUT', `/organizations/${org}/policies/4`, { type: 4, enabled: true, data: null })).status).toBe(400));
    expect(refused).toEqual([]);
  });
});
