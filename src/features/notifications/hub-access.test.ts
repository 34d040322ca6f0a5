import { afterEach, describe, expect, it } from 'vitest';
import { createUser, type LoggedInUser } from '../../../test/support/accounts.js';
import { testClock } from '../../../test/support/clock.js';
import { connectHub, sleep, waitFor, type TestHubClient } from '../../../test/support/hub-client.js';
import { memberOf, orgWithOwner, type SeededMember } from '../../../test/support/members.js';
import { testService } from '../../../test/support/services.js';
import { sharedDatabaseUrl } from '../../../test/support/shared-database.js';
import { startTestServer, type StartOptions, type TestServer } from '../../../test/support/test-server.js';
import { PolicyType } from '../policies/policy-type.js';
import { PushType } from '../../platform/push/pushes.js';

const redisUrl = testService('redis');

let servers: TestServer[] = [];
let clients: TestHubClient[] = [];
afterEach(async () => {
  await Promise.all(clients.map((client) => client.stop().catch(() => undefined)));
  clients = [];
  await Promise.all(servers.map((server) => server.close().catch(() => undefined)));
  servers = [];
});

async function start(options: StartOptions = {}): Promise<TestServer> {
  const server = await startTestServer(options);
  servers.push(server);
  return server;
}

async function connect(server: TestServer, user: LoggedInUser): Promise<TestHubClient> {
  const client = await connectHub(`${server.baseUrl}/notifications/hub`, { token: user.accessToken });
  clients.push(client);
  return client;
}

const policyPushes = (client: TestHubClient) => client.received().filter((m) => m.Type === PushType.PolicyChanged);

async function savePolicy(server: TestServer, owner: LoggedInUser, orgId: string, enabled: boolean): Promise<void> {
  const res = await server.request('PUT', `/api/organizations/${orgId}/policies/${PolicyType.DisableSend}`, { token: owner.accessToken, json: { enabled } });
  expect(res.status).toBe(200);
}

/** An organization with its owner, a member who stays and one who is about to lose the membership, each with a hub connection. */
async function organizationOnTheHub(server: TestServer, hubServer = server) {
  const { orgId, owner } = await orgWithOwner(server);
  const staying = await memberOf(server, orgId);
  const leaving = await memberOf(server, orgId);
  return { orgId, owner, staying, leaving, stayingClient: await connect(hubServer, staying), leavingClient: await connect(hubServer, leaving) };
}

describe('notifications hub: organization pushes follow current membership', () => {
  it.each([
    ['removed', (server: TestServer, owner: LoggedInUser, orgId: string, member: SeededMember) =>
      server.request('DELETE', `/api/organizations/${orgId}/users/${member.memberId}`, { token: owner.accessToken })],
    ['revoked', (server: TestServer, owner: LoggedInUser, orgId: string, member: SeededMember) =>
      server.request('PUT', `/api/organizations/${orgId}/users/${member.memberId}/revoke`, { token: owner.accessToken })],
  ] as const)('stops the organization pushes to a member %s after connecting, at once', async (_how, change) => {
    const server = await start();
    const { orgId, owner, leaving, stayingClient, leavingClient } = await organizationOnTheHub(server);
    await savePolicy(server, owner, orgId, true);
    await waitFor(() => policyPushes(stayingClient).length === 1 && policyPushes(leavingClient).length === 1, 5000, 'the first policy push to both');

    expect((await change(server, owner, orgId, leaving)).status).toBe(200);
    await savePolicy(server, owner, orgId, false);
    await waitFor(() => policyPushes(stayingClient).length === 2, 5000, 'the second policy push to the remaining member');
    await sleep(200);
    expect(policyPushes(leavingClient)).toHaveLength(1);
    // The connection itself stays: the member's own pushes (SyncOrgKeys for the change) still arrive.
    expect(leavingClient.received().some((m) => m.Type === PushType.SyncOrgKeys)).toBe(true);
    expect(leavingClient.connection.state).toBe('Connected');
  });

  it("sends a deleted organization's pushes to no one", async () => {
    const server = await start();
    const { orgId, owner, stayingClient, leavingClient } = await organizationOnTheHub(server);
    const ownerClient = await connect(server, owner);
    const res = await server.request('DELETE', `/api/organizations/${orgId}`, { token: owner.accessToken, json: { masterPasswordHash: owner.account.masterPasswordHash } });
    expect(res.status).toBe(200);
    // A push for the organization still in flight when it was deleted.
    server.app.features.pushes.send({ type: PushType.SyncOrganizationStatusChanged, payload: { OrganizationId: orgId, Enabled: false }, contextId: null, target: { organization: orgId } });
    await sleep(300);
    for (const client of [ownerClient, stayingClient, leavingClient]) expect(client.received().filter((m) => m.Type === PushType.SyncOrganizationStatusChanged)).toEqual([]);
  });

  it.skipIf(!redisUrl)('stops them on every instance when the member is removed on another', { timeout: 90_000 }, async () => {
    const databaseUrl = await sharedDatabaseUrl();
    const env = { REDIS_URL: redisUrl! };
    const a = await start({ databaseUrl, env });
    const b = await start({ databaseUrl, env });
    // The connections are on B; the removal and the policy change are made on A.
    const { orgId, owner, leaving, stayingClient, leavingClient } = await organizationOnTheHub(a, b);
    expect((await a.request('DELETE', `/api/organizations/${orgId}/users/${leaving.memberId}`, { token: owner.accessToken })).status).toBe(200);
    await savePolicy(a, owner, orgId, true);
    await waitFor(() => policyPushes(stayingClient).length === 1, 10_000, 'the policy push on the other instance');
    await sleep(300);
    expect(policyPushes(leavingClient)).toEqual([]);
  });
});

describe('notifications hub: a connection lasts as long as its token', () => {
  it('closes a connection when the access token it was opened with expires, and not before', async () => {
    const clock = testClock();
    const server = await start({ clock });
    const lifetimeMs = server.config.accessTokenLifetimeSeconds * 1000;
    const early = await createUser(server);
    const earlyClient = await connect(server, early);
    clock.advance(lifetimeMs - 60_000);
    const late = await createUser(server);
    const lateClient = await connect(server, late);
    await sleep(1500);
    expect(earlyClient.connection.state).toBe('Connected');

    clock.advance(120_000);
    const error = await Promise.race([earlyClient.closed, sleep(5000).then(() => new Error('still open'))]);
    expect(error?.message).toContain('access token expired');
    expect(lateClient.connection.state).toBe('Connected');
    server.app.features.pushes.send({ type: PushType.SyncSettings, payload: { UserId: late.userId, Date: clock.now() }, contextId: null, target: { user: late.userId } });
    await waitFor(() => lateClient.received().length === 1);
  });

  it('closes the connections of a user whose security stamp changes (log out of all sessions)', async () => {
    const server = await start();
    const user = await createUser(server);
    const other = await createUser(server);
    const client = await connect(server, user);
    const otherClient = await connect(server, other);
    const res = await server.request('POST', '/api/accounts/security-stamp', { token: user.accessToken, json: { masterPasswordHash: user.account.masterPasswordHash } });
    expect(res.status).toBe(200);
    const error = await Promise.race([client.closed, sleep(5000).then(() => new Error('still open'))]);
    expect(error?.message).toContain('logged out');
    expect(otherClient.connection.state).toBe('Connected');
  });
});
