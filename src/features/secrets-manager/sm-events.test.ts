import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { custom, type Actor } from '../../../test/support/admin.js';
import { testClock } from '../../../test/support/clock.js';
import { seedOrganization } from '../../../test/support/orgs.js';
import { READ, READ_WRITE, seedMachineAccount, seedPolicy, seedProject, seedSecret, smActor } from '../../../test/support/sm.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { EventType } from '../../platform/audit/event-type.js';
import { OrganizationUserType, type Permissions } from '../../platform/access/roles.js';

const NOW = new Date('2026-11-22T12:00:00.000Z');
const clock = testClock(NOW);

let server: TestServer;
let org: string;
let otherOrg: string;
let owner: Actor;
/** A custom member who may read the event log and has Secrets Manager access, with read on `project`. */
let auditor: Actor;
/** A plain member with Secrets Manager access, managing `account`. */
let manager: Actor;
let stranger: Actor;
let project: string;
let secret: string;
let hiddenSecret: string;
let account: string;
let otherOrgAccount: string;

const T0 = '2026-01-01T00:00:00.000Z';

/** Seeded rows are dated T0. */
const at = { date: T0 };

async function seedEvent(values: { type: EventType; organization_id: string; date?: string; secret_id?: string; project_id?: string; service_account_id?: string; granted_service_account_id?: string }) {
  const id = randomUUID();
  await server.database.db
    .insertInto('events')
    .values({ id, date: NOW.toISOString(), ...values })
    .execute();
  return id;
}

const smMember = (organizationId: string, email: string, opts: { type?: OrganizationUserType; permissions?: Partial<Permissions> }) => smActor(server, organizationId, { email, ...opts });

const get = (path: string, token: string) => server.request('GET', `/api${path}`, { token });
const types = (res: { body: { data: { type: number }[] } }) => res.body.data.map((e) => e.type);

beforeAll(async () => {
  server = await startTestServer({ clock });
  org = await seedOrganization(server);
  otherOrg = await seedOrganization(server);
  owner = await smMember(org, 'ev-owner@example.com', { type: OrganizationUserType.Owner });
  auditor = await smMember(org, 'ev-auditor@example.com', custom('accessEventLogs'));
  manager = await smMember(org, 'ev-manager@example.com', { type: OrganizationUserType.User });
  stranger = await smMember(otherOrg, 'ev-stranger@example.com', { type: OrganizationUserType.Owner });
  project = await seedProject(server, org, at);
  account = await seedMachineAccount(server, org, at);
  otherOrgAccount = await seedMachineAccount(server, otherOrg, at);
  secret = await seedSecret(server, org, project, at);
  hiddenSecret = await seedSecret(server, org, null, at);
  await seedPolicy(server, { member: auditor.memberId }, { project }, READ, at);
  await seedPolicy(server, { member: manager.memberId }, { machineAccount: account }, READ_WRITE, at);
  await seedEvent({ type: EventType.Secret_Created, organization_id: org, secret_id: secret, date: '2026-11-22T10:00:00.000Z' });
  await seedEvent({ type: EventType.Secret_Retrieved, organization_id: org, secret_id: secret, service_account_id: account, date: '2026-11-22T11:00:00.000Z' });
  await seedEvent({ type: EventType.Secret_Created, organization_id: org, secret_id: hiddenSecret });
  await seedEvent({ type: EventType.Project_Created, organization_id: org, project_id: project });
  await seedEvent({ type: EventType.ServiceAccount_UserAdded, organization_id: org, granted_service_account_id: account, date: '2026-11-22T09:00:00.000Z' });
  await seedEvent({ type: EventType.ServiceAccount_Created, organization_id: otherOrg, service_account_id: otherOrgAccount });
}, 120_000);

afterAll(async () => {
  await server?.close();
});

describe('GET /organization/{orgId}/secrets/{id}/events', () => {
  it('answers the events about the secret, newest first, to event-log readers who can read it', async () => {
    const res = await get(`/organization/${org}/secrets/${secret}/events`, auditor.token);
    expect(res.status, res.text).toBe(200);
    expect(res.body.object).toBe('list');
    expect(types(res)).toEqual([EventType.Secret_Retrieved, EventType.Secret_Created]);
    expect(res.body.data[0]).toMatchObject({ object: 'event', secretId: secret, serviceAccountId: account, organizationId: org });
  });

  it('answers 404 for a secret the reader cannot read, to members without the event log, and to other organizations', async () => {
    expect((await get(`/organization/${org}/secrets/${hiddenSecret}/events`, auditor.token)).status).toBe(404);
    expect((await get(`/organization/${org}/secrets/${hiddenSecret}/events`, owner.token)).status).toBe(200);
    expect((await get(`/organization/${org}/secrets/${secret}/events`, manager.token)).status).toBe(404);
    expect((await get(`/organization/${org}/secrets/${secret}/events`, stranger.token)).status).toBe(404);
    expect((await get(`/organization/${otherOrg}/secrets/${secret}/events`, stranger.token)).status).toBe(404);
  });

  it('lets only owners and admins read the events of a secret deleted for good', async () => {
    const gone = randomUUID();
    await seedEvent({ type: EventType.Secret_Permanently_Deleted, organization_id: org, secret_id: gone });
    expect(types(await get(`/organization/${org}/secrets/${gone}/events`, owner.token))).toEqual([EventType.Secret_Permanently_Deleted]);
    expect((await get(`/organization/${org}/secrets/${gone}/events`, auditor.token)).status).toBe(404);
  });
});

describe('GET /organization/{orgId}/projects/{id}/events and …/service-account/{id}/events', () => {
  it('answer the events about the project, and those by and about the machine account', async () => {
    expect(types(await get(`/organization/${org}/projects/${project}/events`, auditor.token))).toEqual([EventType.Project_Created]);
    const account_ = await get(`/organization/${org}/service-account/${account}/events`, auditor.token);
    expect(account_.status, account_.text).toBe(200);
    expect(types(account_)).toEqual([EventType.Secret_Retrieved, EventType.ServiceAccount_UserAdded]);
  });

  it('answer 404 to members without the event log and for ids of another organization', async () => {
    expect((await get(`/organization/${org}/projects/${project}/events`, manager.token)).status).toBe(404);
    expect((await get(`/organization/${org}/service-account/${account}/events`, manager.token)).status).toBe(404);
    expect((await get(`/organization/${org}/service-account/${otherOrgAccount}/events`, owner.token)).status).toBe(404);
    expect((await get(`/organization/${org}/projects/not-a-guid/events`, owner.token)).status).toBe(400);
  });

  it('page with a continuation token and keep to the window', async () => {
    const p = await seedProject(server, org, at);
    for (let i = 0; i < 55; i++) await seedEvent({ type: EventType.Project_Edited, organization_id: org, project_id: p });
    await seedEvent({ type: EventType.Project_Created, organization_id: org, project_id: p, date: '2025-01-01T00:00:00.000Z' });
    const first = await get(`/organization/${org}/projects/${p}/events`, owner.token);
    expect(first.body.data).toHaveLength(50);
    const second = await get(`/organization/${org}/projects/${p}/events?continuationToken=${first.body.continuationToken as string}`, owner.token);
    expect(second.body.data).toHaveLength(5);
    expect(second.body.continuationToken).toBeNull();
    const old = await get(`/organization/${org}/projects/${p}/events?start=2024-12-01T00:00:00Z&end=2025-02-01T00:00:00Z`, owner.token);
    expect(types(old)).toEqual([EventType.Project_Created]);
  });
});

describe('GET /sm/events/service-accounts/{serviceAccountId}', () => {
  it('answers the machine account’s events to those who manage it, even without the event log', async () => {
    const res = await get(`/sm/events/service-accounts/${account}`, manager.token);
    expect(res.status, res.text).toBe(200);
    expect(types(res)).toEqual([EventType.Secret_Retrieved, EventType.ServiceAccount_UserAdded]);
    expect(res.body.data[1]).toMatchObject({ grantedServiceAccountId: account });
  });

  it('answers 404 to members who do not manage it, other organizations and unknown ids', async () => {
    expect((await get(`/sm/events/service-accounts/${account}`, auditor.token)).status).toBe(404);
    expect((await get(`/sm/events/service-accounts/${account}`, stranger.token)).status).toBe(404);
    expect((await get(`/sm/events/service-accounts/${randomUUID()}`, owner.token)).status).toBe(404);
  });
});

describe('events written by policy changes', () => {
  it('are readable through the machine account’s event route', async () => {
    const sa = await seedMachineAccount(server, org, at);
    const res = await server.request('PUT', `/api/service-accounts/${sa}/access-policies/people`, {
      token: owner.token,
      json: { userAccessPolicyRequests: [{ granteeId: manager.memberId, read: true, write: true }] },
    });
    expect(res.status, res.text).toBe(200);
    const events = await get(`/sm/events/service-accounts/${sa}`, manager.token);
    expect(events.body.data).toEqual([expect.objectContaining({ type: EventType.ServiceAccount_UserAdded, organizationUserId: manager.memberId, actingUserId: owner.userId, grantedServiceAccountId: sa })]);
  });
});
