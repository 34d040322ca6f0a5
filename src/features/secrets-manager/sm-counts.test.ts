import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENC, type Actor } from '../../../test/support/admin.js';
import type { SymmetricKey } from '../../../test/support/bw-crypto.js';
import { counting } from '../../../test/support/query-count.js';
import { createAccessToken, createMachineAccount, machineLogin, READ, seedPolicy, seedSecret, smActor, smCallerOf, smOrg } from '../../../test/support/sm.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import type { UserPrincipal } from '../../http/access.js';
import { createAuditLog } from '../../platform/audit/audit-log.js';
import { createEventQueryService } from '../events/events.service.js';
import { createSecretsManager } from './secrets-manager.js';

let server: TestServer;
let orgId: string;
let orgKey: SymmetricKey;
let owner: Actor;
let member: Actor;
let outsider: Actor;
let stranger: Actor;
let machine: string;
const p = {} as Record<'written' | 'read' | 'hidden', string>;
let account: string;

const get = (path: string, token: string) => server.request('GET', `/api${path}`, { token });

beforeAll(async () => {
  server = await startTestServer();
  ({ orgId, owner, orgKey } = await smOrg(server));
  member = await smActor(server, orgId);
  outsider = await smActor(server, orgId, { accessSecretsManager: false });
  stranger = (await smOrg(server)).owner;
  for (const k of ['written', 'read', 'hidden'] as const) {
    p[k] = (await server.request('POST', `/api/organizations/${orgId}/projects`, { token: owner.token, json: { name: ENC } })).body.id as string;
  }
  await seedPolicy(server, { member: member.memberId }, { project: p.written });
  await seedPolicy(server, { member: member.memberId }, { project: p.read }, READ);
  await seedSecret(server, orgId, p.written);
  await seedSecret(server, orgId, p.written);
  await seedSecret(server, orgId, p.written, { trashed: true });
  await seedSecret(server, orgId, p.read);
  await seedSecret(server, orgId, p.hidden);
  const direct = await seedSecret(server, orgId, null);
  await seedSecret(server, orgId, null);
  await seedPolicy(server, { member: member.memberId }, { secret: direct }, READ);

  account = await createMachineAccount(server, owner.token, orgId);
  await createMachineAccount(server, owner.token, orgId);
  await seedPolicy(server, { member: member.memberId }, { machineAccount: account });
  await seedPolicy(server, { machineAccount: account }, { project: p.written }, READ);
  await seedPolicy(server, { machineAccount: account }, { project: p.read }, READ);
  await createAccessToken(server, owner.token, account, orgKey);
  machine = await machineLogin(server, (await createAccessToken(server, owner.token, account, orgKey)).accessToken);
});
afterAll(async () => server.close());

describe('organization counts', () => {
  it('counts everything for an owner, secrets outside the trash', async () => {
    const res = await get(`/organizations/${orgId}/sm-counts`, owner.token);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ object: 'organizationCounts', projects: 3, secrets: 6, serviceAccounts: 2 });
  });

  it('counts what a member can read', async () => {
    expect((await get(`/organizations/${orgId}/sm-counts`, member.token)).body).toEqual({ object: 'organizationCounts', projects: 2, secrets: 4, serviceAccounts: 1 });
  });

  it('answers 404 to a machine account, a member without access and another organization', async () => {
    for (const token of [machine, outsider.token, stranger.token]) expect((await get(`/organizations/${orgId}/sm-counts`, token)).status).toBe(404);
  });
});

describe('project counts', () => {
  it('counts secrets, people and machine accounts for a writer', async () => {
    expect((await get(`/projects/${p.written}/sm-counts`, owner.token)).body).toEqual({ object: 'projectCounts', secrets: 2, people: 1, serviceAccounts: 1 });
    expect((await get(`/projects/${p.written}/sm-counts`, member.token)).body).toEqual({ object: 'projectCounts', secrets: 2, people: 1, serviceAccounts: 1 });
  });

  it('shows a reader only the secrets', async () => {
    expect((await get(`/projects/${p.read}/sm-counts`, member.token)).body).toEqual({ object: 'projectCounts', secrets: 1, people: 0, serviceAccounts: 0 });
  });

  it('answers 404 without read, to a machine account, another organization and an unknown id', async () => {
    expect((await get(`/projects/${p.hidden}/sm-counts`, member.token)).status).toBe(404);
    expect((await get(`/projects/${p.written}/sm-counts`, machine)).status).toBe(404);
    expect((await get(`/projects/${p.written}/sm-counts`, stranger.token)).status).toBe(404);
    expect((await get(`/projects/${randomUUID()}/sm-counts`, owner.token)).status).toBe(404);
  });
});

describe('machine account counts', () => {
  it('counts granted projects, people and access tokens', async () => {
    const expected = { object: 'serviceAccountCounts', projects: 2, people: 1, accessTokens: 2 };
    expect((await get(`/service-accounts/${account}/sm-counts`, owner.token)).body).toEqual(expected);
    expect((await get(`/service-accounts/${account}/sm-counts`, member.token)).body).toEqual(expected);
  });

  it('answers 404 to a member without a policy on it, a machine account and another organization', async () => {
    const other = await createMachineAccount(server, owner.token, orgId);
    expect((await get(`/service-accounts/${other}/sm-counts`, member.token)).status).toBe(404);
    expect((await get(`/service-accounts/${account}/sm-counts`, machine)).status).toBe(404);
    expect((await get(`/service-accounts/${account}/sm-counts`, stranger.token)).status).toBe(404);
  });
});

describe('query counts', () => {
  it('lists machine accounts with their reach in the same number of queries for 1 or 30 accounts', async () => {
    const view = counting(server.database.db);
    const sm = createSecretsManager({ db: view.db, clock: { now: () => new Date() }, audit: createAuditLog({ clock: { now: () => new Date() } }), config: server.config, events: createEventQueryService({ db: view.db, clock: { now: () => new Date() } }) });
    const principal: UserPrincipal = { kind: 'user', userId: member.userId, email: '', securityStamp: '', deviceIdentifier: null, clientId: 'web', scopes: ['api'], amr: [] };
    const measure = async () => {
      const before = view.count();
      await sm.serviceAccounts.list(smCallerOf(principal), orgId, true);
      await sm.projects.list(smCallerOf(principal), orgId);
      await sm.counts.organization(smCallerOf(principal), orgId);
      return view.count() - before;
    };
    const few = await measure();
    for (let i = 0; i < 30; i++) {
      const id = await createMachineAccount(server, owner.token, orgId);
      await seedPolicy(server, { member: member.memberId }, { machineAccount: id });
      await seedPolicy(server, { machineAccount: id }, { project: p.written }, READ);
      await seedSecret(server, orgId, p.written);
    }
    expect(await measure()).toBe(few);
  });
});
