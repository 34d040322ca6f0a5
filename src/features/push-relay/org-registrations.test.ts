import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { seedAccount } from '../../../test/support/accounts.js';
import { actor, ENC } from '../../../test/support/admin.js';
import { recordingOutbox } from '../../../test/support/outbox.js';
import { orgApiToken } from '../../../test/support/public-api.js';
import { seedMembership, seedOrganization } from '../../../test/support/orgs.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { OrganizationUserStatusType, OrganizationUserType } from '../../platform/access/roles.js';

/*
 * When a membership starts or stops granting access, the member's phones join or leave the
 * organization's pushes at the relay (add-organization / delete-organization), queued after the
 * change committed by the one writer of each change.
 */

const outbox = recordingOutbox();
let server: TestServer;
const RELAY_ENV = { INSTALLATION_ID: randomUUID(), INSTALLATION_KEY: 'relay-key', PUSH_RELAY_URI: 'http://127.0.0.1:1', PUSH_IDENTITY_URI: 'http://127.0.0.1:1' };

beforeAll(async () => {
  server = await startTestServer({ env: RELAY_ENV, outbox });
});
afterAll(async () => server?.close());
beforeEach(() => outbox.clear());

const call = (token: string, method: string, path: string, json?: unknown) => server.request(method, `/api${path}`, { token, ...(json === undefined ? {} : { json }) });

async function orgWithOwner() {
  const org = await seedOrganization(server, { name: 'Relay' });
  const owner = await actor(server, org, `owner-${randomUUID().slice(0, 8)}@example.com`, { type: OrganizationUserType.Owner });
  return { org, owner };
}

describe('membership changes', () => {
  it('confirm and restore add the organization; revoke and remove delete it', async () => {
    const { org, owner } = await orgWithOwner();
    const joiner = await seedAccount(server);
    const memberId = await seedMembership(server, { organizationId: org, userId: joiner.userId, status: OrganizationUserStatusType.Accepted });
    const base = `/organizations/${org}/users/${memberId}`;
    const steps = [
      ['POST', `${base}/confirm`, { key: '4.aGVsbG8=' }, 'add-organization'],
      ['PUT', `${base}/revoke`, undefined, 'delete-organization'],
      ['PUT', `${base}/restore`, undefined, 'add-organization'],
      ['DELETE', base, undefined, 'delete-organization'],
    ] as const;
    for (const [method, path, body, kind] of steps) {
      outbox.clear();
      const res = await call(owner.token, method, path, body);
      expect(res.status, `${method} ${path} ${res.text}`).toBe(200);
      expect(outbox.queued, `${method} ${path}`).toEqual([{ channel: 'relay', message: { kind, organizationId: org, userIds: [joiner.userId] } }]);
    }
    // A refused command (the member is gone) queues nothing.
    outbox.clear();
    expect((await call(owner.token, 'PUT', `${base}/revoke`)).status).toBe(404);
    expect(outbox.queued).toEqual([]);
  });

  it('a bulk revoke queues one message naming every revoked user', async () => {
    const { org, owner } = await orgWithOwner();
    const [a, b] = [await seedAccount(server), await seedAccount(server)];
    const ids = [await seedMembership(server, { organizationId: org, userId: a.userId }), await seedMembership(server, { organizationId: org, userId: b.userId })];
    expect((await call(owner.token, 'PUT', `/organizations/${org}/users/revoke`, { ids })).status).toBe(200);
    expect(outbox.of('relay')).toEqual([{ kind: 'delete-organization', organizationId: org, userIds: [a.userId, b.userId] }]);
  });

  it('leaving deletes the organization for the leaver', async () => {
    const { org } = await orgWithOwner();
    const leaver = await actor(server, org, `leaver-${randomUUID().slice(0, 8)}@example.com`);
    outbox.clear();
    expect((await call(leaver.token, 'POST', `/organizations/${org}/leave`)).status).toBe(200);
    expect(outbox.of('relay')).toEqual([{ kind: 'delete-organization', organizationId: org, userIds: [leaver.userId] }]);
  });

  it('the two-step login policy revoking a member deletes the organization for them', async () => {
    const { org, owner } = await orgWithOwner();
    const member = await actor(server, org, `member-${randomUUID().slice(0, 8)}@example.com`);
    outbox.clear();
    const res = await call(owner.token, 'PUT', `/organizations/${org}/policies/0`, { type: 0, enabled: true, data: null });
    expect(res.status, res.text).toBe(200);
    expect(outbox.of('relay')).toEqual([{ kind: 'delete-organization', organizationId: org, userIds: [member.userId] }]);
  });

  it("deleting the organization deletes it for every member's devices", async () => {
    const { org, owner } = await orgWithOwner();
    const member = await actor(server, org, `member-${randomUUID().slice(0, 8)}@example.com`);
    outbox.clear();
    const res = await call(owner.token, 'DELETE', `/organizations/${org}`, { masterPasswordHash: owner.account.masterPasswordHash });
    expect(res.status, res.text).toBe(200);
    const queued = outbox.of('relay') as { kind: string; organizationId: string; userIds: string[] }[];
    expect(queued.map((m) => [m.kind, m.organizationId])).toEqual([['delete-organization', org]]);
    expect([...(queued[0]?.userIds ?? [])].sort()).toEqual([owner.userId, member.userId].sort());
  });
});

describe('other writers that end memberships', () => {
  it('a directory import that removes a member takes their phones off the organization', async () => {
    const org = await seedOrganization(server, { name: 'Directory' });
    const gone = await seedAccount(server);
    const memberId = await seedMembership(server, { organizationId: org, userId: gone.userId, status: OrganizationUserStatusType.Confirmed });
    await server.database.db.updateTable('organization_users').set({ external_id: 'ext-gone' }).where('id', '=', memberId).execute();
    const { token } = await orgApiToken(server, org);
    outbox.clear();
    const res = await server.request('POST', '/api/public/organization/import', { token, json: { overwriteExisting: false, members: [{ externalId: 'ext-gone', deleted: true }], groups: [] } });
    expect(res.status, res.text).toBe(200);
    expect(outbox.of('relay')).toEqual([{ kind: 'delete-organization', organizationId: org, userIds: [gone.userId] }]);
  });

  it("an emergency takeover takes the grantor's phones off the organizations it removes them from", async () => {
    const grantor = await seedAccount(server);
    const grantee = await seedAccount(server);
    const owned = await seedOrganization(server, { name: 'Owned' });
    const joined = await seedOrganization(server, { name: 'Joined' });
    await seedMembership(server, { organizationId: owned, userId: grantor.userId, type: OrganizationUserType.Owner });
    await seedMembership(server, { organizationId: joined, userId: grantor.userId });
    const id = randomUUID();
    const now = new Date().toISOString();
    // A takeover grant the grantor approved (the steps before are the emergency access tests').
    await server.database.db
      .insertInto('emergency_access')
      .values({ id, grantor_id: grantor.userId, grantee_id: grantee.userId, email: null, key_encrypted: ENC, type: 1, status: 4, wait_time_days: 1, recovery_initiated_date: now, last_notification_date: null, creation_date: now, revision_date: now })
      .execute();
    outbox.clear();
    const res = await call(grantee.accessToken, 'POST', `/emergency-access/${id}/password`, { newMasterPasswordHash: randomBytes(32).toString('base64'), key: ENC });
    expect(res.status, res.text).toBe(200);
    expect(outbox.of('relay')).toEqual([{ kind: 'delete-organization', organizationId: joined, userIds: [grantor.userId] }]);
  });
});

describe('with the relay off', () => {
  it('a confirmation queues nothing for a relay that is not configured', async () => {
    const offOutbox = recordingOutbox();
    const off = await startTestServer({ outbox: offOutbox });
    try {
      const org = await seedOrganization(off);
      const owner = await actor(off, org, `owner-${randomUUID().slice(0, 8)}@example.com`, { type: OrganizationUserType.Owner });
      const joiner = await seedAccount(off);
      const memberId = await seedMembership(off, { organizationId: org, userId: joiner.userId, status: OrganizationUserStatusType.Accepted });
      const res = await off.request('POST', `/api/organizations/${org}/users/${memberId}/confirm`, { token: owner.token, json: { key: '4.aGVsbG8=' } });
      expect(res.status, res.text).toBe(200);
      expect(offOutbox.queued).toEqual([]);
    } finally {
      await off.close();
    }
  });
});
