import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Actor } from '../../../test/support/admin.js';
import { seedGroup } from '../../../test/support/admin.js';
import { createAccessToken, createMachineAccount, machineLogin, READ, seedPolicy, seedSecretVersion, smActor, smCallerOf, smOrg } from '../../../test/support/sm.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { systemClock } from '../../shared/clock.js';
import type { Principal } from '../../http/access.js';
import type { ClientContext } from '../../http/request-context.js';
import { createAuditLog } from '../../platform/audit/audit-log.js';
import { OrganizationUserType } from '../../platform/access/roles.js';
import { createSecretService } from './secrets.service.js';
import { createSmAnswers } from './sm-answers.js';

/**
 * The cached answers (sm-answers.ts) against answers built afresh: after every kind of change,
 * each cached route must answer exactly what a service without a cache answers. A write that
 * forgot to move the organization's revision fails here.
 */
/** A well-formed encrypted string whose data part carries `text`. */
const enc = (text: string) => `2.AAAAAAAAAAAAAAAAAAAAAA==|${Buffer.from(text).toString('base64')}|AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=`;
const CLIENT: ClientContext = { ipAddress: '127.0.0.1', deviceType: null, deviceIdentifier: null, clientVersion: null };
const body = (name: string, projectIds?: string[]) => ({ key: enc(`${name}-key`), value: enc(`${name}-value`), note: enc(`${name}-note`), ...(projectIds ? { projectIds } : {}) });

let server: TestServer;
let org: string;
let owner: Actor;
let member: Actor;
let group: string;
let account: string;
let machineToken: string;
let p1: string;
let p2: string;
/** The secrets get-by-ids asks for, in this order. */
let asked: string[];

const fresh = () => createSecretService({ db: server.database.db, clock: systemClock, audit: createAuditLog({ clock: systemClock }), config: { secretVersionsKept: 10 }, answers: createSmAnswers(0) });
const userPrincipal = (who: Actor): Principal => ({ kind: 'user', userId: who.userId, email: '', securityStamp: '', deviceIdentifier: null, clientId: 'web', scopes: ['api'], amr: ['Application'] });
const machinePrincipal = (): Principal => ({ kind: 'serviceAccount', serviceAccountId: account, organizationId: org, accessTokenId: randomUUID(), clientId: randomUUID(), scopes: ['api.secrets'] });

/** What a service call answers, as status and parsed body, so that a 404 compares like a route's. */
async function outcome(call: () => Promise<Buffer>): Promise<{ status: number; body: unknown }> {
  try {
    return { status: 200, body: JSON.parse((await call()).toString('utf8')) as unknown };
  } catch (error) {
    return { status: (error as { statusCode?: number }).statusCode ?? 500, body: null };
  }
}

describe('an answer no request used', () => {
  it('is dropped after a whole release round, and built again', async () => {
    const answers = createSmAnswers(1024 * 1024);
    let builds = 0;
    const build = async () => ({ body: Buffer.from(`answer ${++builds}`) });
    const text = async () => (await answers.answer('org', 1, 'list', build)).body.toString();
    expect(await text()).toBe('answer 1');
    expect(answers.dropUnused()).toBe(0);
    expect(await text()).toBe('answer 1');
    expect(answers.dropUnused()).toBe(0);
    expect(answers.dropUnused()).toBe('answer 1'.length);
    expect(await text()).toBe('answer 2');
  });
});

/** Every cached read, through the routes and afresh: pairs that must be equal. */
async function views() {
  const service = fresh();
  const route = async (method: string, path: string, token: string, json?: unknown) => {
    const res = await server.request(method, `/api${path}`, { token, ...(json ? { json } : {}) });
    return { status: res.status, body: res.status === 200 ? (res.body as unknown) : null };
  };
  return {
    ownerList: [await route('GET', `/organizations/${org}/secrets`, owner.token), await outcome(() => service.list(smCallerOf(userPrincipal(owner)), org))],
    memberList: [await route('GET', `/organizations/${org}/secrets`, member.token), await outcome(() => service.list(smCallerOf(userPrincipal(member)), org))],
    projectList: [await route('GET', `/projects/${p1}/secrets`, owner.token), await outcome(() => service.listOfProject(smCallerOf(userPrincipal(owner)), p1))],
    machineSync: [await route('GET', `/organizations/${org}/secrets/sync`, machineToken), await outcome(() => service.sync(smCallerOf(machinePrincipal(), CLIENT), org, undefined))],
    machineByIds: [await route('POST', '/secrets/get-by-ids', machineToken, { ids: asked }), await outcome(() => service.getByIds(smCallerOf(machinePrincipal(), CLIENT), asked))],
  };
}

async function expectCachedEqualsFresh(change: string) {
  // Twice: the first call after a change may build, the second must be served from the cache.
  for (let round = 0; round < 2; round++) {
    for (const [view, [cached, built]] of Object.entries(await views())) {
      expect({ change, view, round, ...cached }).toEqual({ change, view, round, ...built });
    }
  }
}

async function ok(method: string, path: string, json?: unknown) {
  const res = await server.request(method, `/api${path}`, { token: owner.token, ...(json !== undefined ? { json } : {}) });
  expect(res.status, `${method} ${path}: ${res.text}`).toBe(200);
  return res.body as Record<string, unknown>;
}

beforeAll(async () => {
  server = await startTestServer();
  const sm = await smOrg(server);
  org = sm.orgId;
  owner = sm.owner;
  member = await smActor(server, org, { type: OrganizationUserType.User });
  p1 = String((await ok('POST', `/organizations/${org}/projects`, { name: enc('p1') })).id);
  p2 = String((await ok('POST', `/organizations/${org}/projects`, { name: enc('p2') })).id);
  group = await seedGroup(server, org);
  await seedPolicy(server, { group }, { project: p1 }, READ);
  account = await createMachineAccount(server, owner.token, org);
  await seedPolicy(server, { machineAccount: account }, { project: p1 }, READ);
  machineToken = await machineLogin(server, (await createAccessToken(server, owner.token, account, sm.orgKey)).accessToken);
  asked = [];
  for (const name of ['a', 'b', 'c']) asked.push(String((await ok('POST', `/organizations/${org}/secrets`, body(name, [p1]))).id));
  await ok('POST', `/organizations/${org}/secrets`, body('elsewhere', [p2]));
}, 120_000);

afterAll(async () => {
  await server?.close();
});

describe('cached Secrets Manager answers', () => {
  it('answer what a fresh read answers after every kind of change', async () => {
    await expectCachedEqualsFresh('start');

    const created = String((await ok('POST', `/organizations/${org}/secrets`, body('d', [p1]))).id);
    await expectCachedEqualsFresh('secret created');
    await ok('PUT', `/secrets/${created}`, body('d2', [p1]));
    await expectCachedEqualsFresh('secret edited');
    await ok('PUT', `/secrets/${asked[2]}`, body('c-moved', [p2]));
    await expectCachedEqualsFresh('secret moved to another project');
    await ok('PUT', `/projects/${p1}`, { name: enc('p1-renamed') });
    await expectCachedEqualsFresh('project renamed');

    const version = await seedSecretVersion(server, asked[0]!, { value: enc('earlier') });
    await ok('PUT', `/secrets/${asked[0]}/versions/restore`, { versionId: version });
    await expectCachedEqualsFresh('version restored');

    await server.database.db.insertInto('group_users').values({ group_id: group, organization_user_id: member.memberId }).execute();
    await expectCachedEqualsFresh('member joined a group with a grant');
    await seedPolicy(server, { machineAccount: account }, { project: p2 }, READ);
    await expectCachedEqualsFresh('machine account granted another project');

    await ok('POST', '/secrets/delete', [asked[1]]);
    await expectCachedEqualsFresh('secret moved to the trash');
    await ok('POST', `/secrets/${org}/trash/restore`, [asked[1]]);
    await expectCachedEqualsFresh('secret restored');
    await ok('POST', '/secrets/delete', [created]);
    await ok('POST', `/secrets/${org}/trash/empty`, [created]);
    await expectCachedEqualsFresh('trash emptied');

    await ok('POST', `/sm/${org}/import`, { projects: [{ id: randomUUID(), name: enc('imported') }], secrets: [] });
    await expectCachedEqualsFresh('import');
    await ok('POST', '/projects/delete', [p2]);
    await expectCachedEqualsFresh('project deleted');
  });
});
