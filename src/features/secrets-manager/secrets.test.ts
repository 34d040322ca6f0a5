import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventsOf, seedGroup, type Actor } from '../../../test/support/admin.js';
import { seedOrganization } from '../../../test/support/orgs.js';
import { counting } from '../../../test/support/query-count.js';
import { READ, READ_WRITE, seedMachineAccount, seedPolicy, seedProject, seedSecret, smActor, smCallerOf } from '../../../test/support/sm.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { systemClock } from '../../shared/clock.js';
import type { ServiceAccountPrincipal } from '../../http/access.js';
import type { ClientContext } from '../../http/request-context.js';
import { createAuditLog } from '../../platform/audit/audit-log.js';
import { EventType } from '../../platform/audit/event-type.js';
import { OrganizationUserType } from '../../platform/access/roles.js';
import { createSecretService } from './secrets.service.js';
import { createSmAnswers } from './sm-answers.js';

/** A well-formed encrypted string whose data part carries `text`, so values can be told apart. */
export const enc = (text: string) => `2.AAAAAAAAAAAAAAAAAAAAAA==|${Buffer.from(text).toString('base64')}|AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=`;
const secretBody = (name: string, projectIds?: string[]) => ({ key: enc(`${name}-key`), value: enc(`${name}-value`), note: enc(`${name}-note`), ...(projectIds ? { projectIds } : {}) });
/** An answer's array, typed for the fields the tests read. */
const rows = (value: unknown) => value as Record<string, unknown>[];
const LONG_AGO = '2000-01-01T00:00:00.000Z';
const CLIENT: ClientContext = { ipAddress: '127.0.0.1', deviceType: null, deviceIdentifier: null, clientVersion: null };

/** Seeded secrets hold `enc('k')`, `enc('v')` and `enc('n')` unless a test says otherwise; projects are named `enc('project')`. */
const secretIn = (server: TestServer, org: string, projectId: string | null, opts: { trashed?: boolean; value?: string } = {}) =>
  seedSecret(server, org, projectId, { key: enc('k'), value: enc('v'), note: enc('n'), ...opts });
const projectIn = (server: TestServer, org: string) => seedProject(server, org, { name: enc('project') });
const machineAccountIn = (server: TestServer, org: string) => seedMachineAccount(server, org, { name: enc('machine'), date: LONG_AGO });
const smMember = (server: TestServer, org: string, email: string, type = OrganizationUserType.User, accessSecretsManager = true) => smActor(server, org, { email, type, accessSecretsManager });

function machine(serviceAccountId: string, organizationId: string): ServiceAccountPrincipal {
  return { kind: 'serviceAccount', serviceAccountId, organizationId, accessTokenId: randomUUID(), clientId: randomUUID(), scopes: ['api.secrets'] };
}

describe('secrets over HTTP', () => {
  let server: TestServer;
  let org: string;
  let otherOrg: string;
  let noSmOrg: string;
  let p1: string;
  let p2: string;
  let p3: string;
  let otherProject: string;
  const who: Record<string, Actor> = {};

  beforeAll(async () => {
    server = await startTestServer();
    org = await seedOrganization(server);
    otherOrg = await seedOrganization(server, { name: 'Other' });
    noSmOrg = await seedOrganization(server, { name: 'No SM', overrides: { use_secrets_manager: false } });
    who.owner = await smMember(server, org, 'owner@example.com', OrganizationUserType.Owner);
    who.admin = await smMember(server, org, 'admin@example.com', OrganizationUserType.Admin);
    who.reader = await smMember(server, org, 'reader@example.com');
    who.writer = await smMember(server, org, 'writer@example.com');
    who.grouped = await smMember(server, org, 'grouped@example.com');
    who.direct = await smMember(server, org, 'direct@example.com');
    who.noSm = await smMember(server, org, 'nosm@example.com', OrganizationUserType.Admin, false);
    who.stranger = await smMember(server, otherOrg, 'stranger@example.com', OrganizationUserType.Owner);
    who.noSmOrgOwner = await smMember(server, noSmOrg, 'nosmorg@example.com', OrganizationUserType.Owner);
    p1 = await projectIn(server, org);
    p2 = await projectIn(server, org);
    p3 = await projectIn(server, org);
    otherProject = await projectIn(server, otherOrg);
    await seedPolicy(server, { member: who.reader.memberId }, { project: p1 }, READ);
    await seedPolicy(server, { member: who.writer.memberId }, { project: p1 }, READ_WRITE);
    await seedPolicy(server, { member: who.writer.memberId }, { project: p3 }, READ_WRITE);
    await seedPolicy(server, { member: who.writer.memberId }, { project: p2 }, READ);
    const group = await seedGroup(server, org, [who.grouped.memberId]);
    await seedPolicy(server, { group }, { project: p1 }, READ_WRITE);
  });
  afterAll(async () => server.close());

  const call = (caller: string, method: string, path: string, json?: unknown) =>
    server.request(method, `/api${path}`, { token: who[caller]?.token ?? '', ...(json !== undefined ? { json } : {}) });

  describe('who reaches what', () => {
    let inP1: string;
    let inP2: string;
    let loose: string;
    beforeAll(async () => {
      inP1 = await secretIn(server, org, p1);
      inP2 = await secretIn(server, org, p2);
      loose = await secretIn(server, org, null);
      await seedPolicy(server, { member: who.direct!.memberId }, { secret: inP2 }, READ);
    });

    it.each([
      // caller, sees P1 secret (read, write), sees P2 secret, sees the loose one
      ['owner', [true, true], [true, true], [true, true]],
      ['admin', [true, true], [true, true], [true, true]],
      ['reader', [true, false], null, null],
      ['writer', [true, true], [true, false], null],
      ['grouped', [true, true], null, null],
      ['direct', null, [true, false], null],
    ] as const)('%s lists and reads exactly the secrets its grants reach, with its rights', async (caller, onP1, onP2, onLoose) => {
      const res = await call(caller, 'GET', `/organizations/${org}/secrets`);
      expect(res.status).toBe(200);
      expect(res.body.object).toBe('SecretsWithProjectsList');
      for (const [id, expected] of [
        [inP1, onP1],
        [inP2, onP2],
        [loose, onLoose],
      ] as const) {
        const item = rows(res.body.secrets).find((s) => s.id === id);
        if (!expected) {
          expect(item).toBeUndefined();
          expect((await call(caller, 'GET', `/secrets/${id}`)).status).toBe(404);
          continue;
        }
        expect(item).toMatchObject({ read: expected[0], write: expected[1] });
        expect(item?.value).toBeUndefined();
        const one = await call(caller, 'GET', `/secrets/${id}`);
        expect(one.status).toBe(200);
        expect(one.body).toMatchObject({ object: 'secret', id, value: enc('v'), read: expected[0], write: expected[1] });
      }
      for (const project of res.body.projects) expect(Object.keys(project).sort()).toEqual(['id', 'name']);
    });

    it('lists the projects of the listed secrets once each', async () => {
      const res = await call('owner', 'GET', `/organizations/${org}/secrets`);
      const ids = rows(res.body.projects).map((p) => p.id);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids).toEqual(expect.arrayContaining([p1, p2]));
      expect(rows(res.body.secrets).find((s) => s.id === inP1)?.projects).toEqual([{ id: p1, name: enc('project') }]);
    });

    it.each(['noSm', 'stranger', 'noSmOrgOwner'])('answers 404 to %s on every secret route', async (caller) => {
      expect((await call(caller, 'GET', `/organizations/${org}/secrets`)).status).toBe(404);
      expect((await call(caller, 'POST', `/organizations/${org}/secrets`, secretBody('x', [p1]))).status).toBe(404);
      expect((await call(caller, 'GET', `/secrets/${inP1}`)).status).toBe(404);
      expect((await call(caller, 'PUT', `/secrets/${inP1}`, secretBody('x'))).status).toBe(404);
      expect((await call(caller, 'GET', `/projects/${p1}/secrets`)).status).toBe(404);
      expect((await call(caller, 'POST', '/secrets/get-by-ids', { ids: [inP1] })).status).toBe(404);
      expect((await call(caller, 'GET', `/secrets/${org}/trash`)).status).toBe(404);
      const deleted = await call(caller, 'POST', '/secrets/delete', [inP1]);
      expect(deleted.body.data).toEqual([{ object: 'BulkDeleteResponseModel', id: inP1, error: 'access denied' }]);
    });

    it("answers 404 on the organization of a member whose organization has no Secrets Manager", async () => {
      expect((await call('noSmOrgOwner', 'GET', `/organizations/${noSmOrg}/secrets`)).status).toBe(404);
    });

    it("lists a project's readable secrets, and 404 to a caller who cannot read the project", async () => {
      const res = await call('reader', 'GET', `/projects/${p1}/secrets`);
      expect(res.status).toBe(200);
      expect(rows(res.body.secrets).map((s) => s.id)).toContain(inP1);
      expect(rows(res.body.secrets).every((s) => (s.projects as { id: string }[])[0]?.id === p1)).toBe(true);
      expect((await call('direct', 'GET', `/projects/${p2}/secrets`)).status).toBe(404);
      expect((await call('owner', 'GET', `/projects/${otherProject}/secrets`)).status).toBe(404);
      expect((await call('owner', 'GET', `/projects/${randomUUID()}/secrets`)).status).toBe(404);
    });

    it('records Secret_Retrieved for a read, naming the acting user', async () => {
      const before = (await eventsOf(server, EventType.Secret_Retrieved)).length;
      await call('reader', 'GET', `/secrets/${inP1}`);
      const events = await eventsOf(server, EventType.Secret_Retrieved);
      expect(events.length).toBe(before + 1);
      expect(events.at(-1)).toMatchObject({ secret_id: inP1, organization_id: org, acting_user_id: who.reader!.userId });
    });
  });

  describe('create', () => {
    it.each([
      ['owner', null, 200],
      ['admin', 'p1', 200],
      ['writer', 'p1', 200],
      ['grouped', 'p1', 200],
      ['writer', null, 404],
      ['writer', 'p2', 404],
      ['reader', 'p1', 404],
      ['direct', null, 404],
    ] as const)('%s creating into %s answers %i', async (caller, project, status) => {
      const projectId = project === 'p1' ? p1 : project === 'p2' ? p2 : undefined;
      const res = await call(caller, 'POST', `/organizations/${org}/secrets`, secretBody('new', projectId ? [projectId] : undefined));
      expect(res.status).toBe(status);
      if (status !== 200) return;
      expect(res.body).toMatchObject({ object: 'secret', organizationId: org, key: enc('new-key'), value: enc('new-value'), note: enc('new-note'), read: true, write: true });
      expect(res.body.projects).toEqual(projectId ? [{ id: projectId, name: enc('project') }] : []);
      const row = await server.database.db.selectFrom('secrets').selectAll().where('id', '=', res.body.id).executeTakeFirstOrThrow();
      expect(row).toMatchObject({ value: enc('new-value'), project_id: projectId ?? null, deleted_date: null });
    });

    it('records Secret_Created and moves the revision of machine accounts reaching the project', async () => {
      const sa = await machineAccountIn(server, org);
      await seedPolicy(server, { machineAccount: sa }, { project: p3 }, READ);
      const res = await call('owner', 'POST', `/organizations/${org}/secrets`, secretBody('evt', [p3]));
      const events = await eventsOf(server, EventType.Secret_Created);
      expect(events.at(-1)).toMatchObject({ secret_id: res.body.id, acting_user_id: who.owner!.userId, organization_id: org });
      const row = await server.database.db.selectFrom('service_accounts').select('revision_date').where('id', '=', sa).executeTakeFirstOrThrow();
      expect(row.revision_date > LONG_AGO).toBe(true);
    });

    it('refuses bad input with a 400 naming the field, and writes nothing', async () => {
      const count = async () => Number((await server.database.db.selectFrom('secrets').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
      const before = await count();
      const cases: [unknown, string][] = [
        [{ value: enc('v'), note: enc('n') }, 'key'],
        [{ key: enc('k'), note: enc('n') }, 'value'],
        [{ ...secretBody('x'), value: 'plaintext password' }, 'value'],
        [{ ...secretBody('x'), key: `2.AAAAAAAAAAAAAAAAAAAAAA==|${'A'.repeat(1000)}|AAAA` }, 'key'],
        [{ ...secretBody('x'), value: `2.AAAAAAAAAAAAAAAAAAAAAA==|${'A'.repeat(35_000)}|AAAA` }, 'value'],
        [{ ...secretBody('x'), note: `2.AAAAAAAAAAAAAAAAAAAAAA==|${'A'.repeat(10_000)}|AAAA` }, 'note'],
        [{ ...secretBody('x'), projectIds: ['not-a-guid'] }, 'projectIds[0]'],
      ];
      for (const [body, field] of cases) {
        const res = await call('owner', 'POST', `/organizations/${org}/secrets`, body);
        expect(res.status, field).toBe(400);
        expect(Object.keys(res.body.validationErrors ?? {}), field).toContain(field);
      }
      const two = await call('owner', 'POST', `/organizations/${org}/secrets`, secretBody('x', [p1, p2]));
      expect(two.status).toBe(400);
      expect(two.body.validationErrors).toEqual({ projectIds: ['Only one project assignment is supported.'] });
      expect((await call('owner', 'POST', `/organizations/${org}/secrets`, secretBody('x', [otherProject]))).status).toBe(404);
      expect((await call('owner', 'POST', `/organizations/not-a-guid/secrets`, secretBody('x'))).status).toBe(400);
      expect(await count()).toBe(before);
    });
  });

  describe('update', () => {
    it.each([
      ['owner', 200],
      ['writer', 200],
      ['grouped', 200],
      ['reader', 404],
      ['direct', 404],
    ] as const)('%s updating a secret of project 1 answers %i', async (caller, status) => {
      const id = await secretIn(server, org, p1);
      const res = await call(caller, 'PUT', `/secrets/${id}`, secretBody('upd'));
      expect(res.status).toBe(status);
      const row = await server.database.db.selectFrom('secrets').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
      if (status === 200) {
        expect(res.body).toMatchObject({ object: 'secret', id, key: enc('upd-key'), value: enc('upd-value'), read: true, write: true, projects: [{ id: p1 }] });
        expect(row).toMatchObject({ key: enc('upd-key'), value: enc('upd-value'), project_id: p1 });
      } else {
        expect(row.key).toBe(enc('k'));
      }
    });

    it('lets non-admins move a secret only into a project they can write, and never out of every project', async () => {
      const id = await secretIn(server, org, p1);
      expect((await call('writer', 'PUT', `/secrets/${id}`, { ...secretBody('m'), projectIds: [] })).status).toBe(404);
      expect((await call('writer', 'PUT', `/secrets/${id}`, secretBody('m', [p2]))).status).toBe(404);
      expect((await call('writer', 'PUT', `/secrets/${id}`, secretBody('m', [otherProject]))).status).toBe(404);
      expect((await call('writer', 'PUT', `/secrets/${id}`, secretBody('m', [p1]))).status).toBe(200);
      const moved = await call('writer', 'PUT', `/secrets/${id}`, secretBody('m', [p3]));
      expect(moved.status).toBe(200);
      expect(moved.body.projects).toEqual([{ id: p3, name: enc('project') }]);
      const freed = await call('admin', 'PUT', `/secrets/${id}`, { ...secretBody('m'), projectIds: [] });
      expect(freed.status).toBe(200);
      expect(freed.body.projects).toEqual([]);
      expect((await call('admin', 'PUT', `/secrets/${id}`, secretBody('m', [otherProject]))).status).toBe(404);
      expect((await call('admin', 'PUT', `/secrets/${id}`, secretBody('m', [p1, p2]))).status).toBe(400);
    });

    it('answers 404, not the 400 of several projects, to a caller who cannot write the secret, as for an unknown id', async () => {
      const id = await secretIn(server, org, p1);
      for (const caller of ['reader', 'direct', 'stranger']) {
        expect((await call(caller, 'PUT', `/secrets/${id}`, secretBody('x', [p1, p2]))).status, caller).toBe(404);
      }
      expect((await call('owner', 'PUT', `/secrets/${randomUUID()}`, secretBody('x', [p1, p2]))).status).toBe(404);
      expect((await call('writer', 'PUT', `/secrets/${id}`, secretBody('x', [p1, p2]))).status).toBe(400);
    });

    it('records Secret_Edited and moves the revision of machine accounts of the old and the new project', async () => {
      const saOld = await machineAccountIn(server, org);
      const saNew = await machineAccountIn(server, org);
      const from = await projectIn(server, org);
      const to = await projectIn(server, org);
      await seedPolicy(server, { machineAccount: saOld }, { project: from }, READ);
      await seedPolicy(server, { machineAccount: saNew }, { project: to }, READ);
      const id = await secretIn(server, org, from);
      const res = await call('owner', 'PUT', `/secrets/${id}`, secretBody('mv', [to]));
      expect(res.status).toBe(200);
      const accounts = await server.database.db.selectFrom('service_accounts').select(['id', 'revision_date']).where('id', 'in', [saOld, saNew]).execute();
      for (const row of accounts) expect(row.revision_date > LONG_AGO).toBe(true);
      expect((await eventsOf(server, EventType.Secret_Edited)).at(-1)).toMatchObject({ secret_id: id, acting_user_id: who.owner!.userId });
    });

    it('answers 404 for a secret in the trash or unknown', async () => {
      const trashed = await secretIn(server, org, p1, { trashed: true });
      expect((await call('owner', 'PUT', `/secrets/${trashed}`, secretBody('x'))).status).toBe(404);
      expect((await call('owner', 'GET', `/secrets/${trashed}`)).status).toBe(404);
      expect((await call('owner', 'PUT', `/secrets/${randomUUID()}`, secretBody('x'))).status).toBe(404);
    });
  });

  describe('bulk delete', () => {
    it('answers per id: moved, or access denied for ids the caller cannot write, see or find, and moves the rest', async () => {
      const writable = await secretIn(server, org, p1);
      const readOnly = await secretIn(server, org, p2);
      const hidden = await secretIn(server, org, null);
      const foreign = await secretIn(server, otherOrg, otherProject);
      const missing = randomUUID();
      const before = (await eventsOf(server, EventType.Secret_Deleted)).length;
      const res = await call('writer', 'POST', '/secrets/delete', [writable.toUpperCase(), readOnly, hidden, foreign, missing]);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        object: 'list',
        continuationToken: null,
        data: [
          { object: 'BulkDeleteResponseModel', id: writable, error: null },
          { object: 'BulkDeleteResponseModel', id: readOnly, error: 'access denied' },
          { object: 'BulkDeleteResponseModel', id: hidden, error: 'access denied' },
          { object: 'BulkDeleteResponseModel', id: foreign, error: 'access denied' },
          { object: 'BulkDeleteResponseModel', id: missing, error: 'access denied' },
        ],
      });
      const stored = await server.database.db.selectFrom('secrets').select(['id', 'deleted_date']).where('id', 'in', [writable, readOnly, hidden, foreign]).execute();
      const deleted = new Map(stored.map((r) => [r.id, r.deleted_date]));
      expect(deleted.get(writable)).not.toBeNull();
      for (const id of [readOnly, hidden, foreign]) expect(deleted.get(id)).toBeNull();
      const events = await eventsOf(server, EventType.Secret_Deleted);
      expect(events.length).toBe(before + 1);
      expect(events.at(-1)).toMatchObject({ secret_id: writable });
      const list = await call('owner', 'GET', `/organizations/${org}/secrets`);
      expect(rows(list.body.secrets).map((s) => s.id)).not.toContain(writable);
    });

    it('lets an admin trash any secret of the organization', async () => {
      const ids = [await secretIn(server, org, p1), await secretIn(server, org, null)];
      const res = await call('admin', 'POST', '/secrets/delete', ids);
      expect(rows(res.body.data).map((r) => r.error)).toEqual([null, null]);
    });

    it('refuses 0 ids, 1,001 ids and invalid ids', async () => {
      expect((await call('owner', 'POST', '/secrets/delete', [])).status).toBe(400);
      expect((await call('owner', 'POST', '/secrets/delete', Array.from({ length: 1001 }, () => randomUUID()))).status).toBe(400);
      expect((await call('owner', 'POST', '/secrets/delete', ['nope'])).status).toBe(400);
      expect((await call('owner', 'POST', '/secrets/delete', { ids: [randomUUID()] })).status).toBe(400);
    });
  });

  describe('get-by-ids', () => {
    it('answers readable secrets with values and records Secret_Retrieved for each', async () => {
      const a = await secretIn(server, org, p1, { value: enc('a') });
      const b = await secretIn(server, org, p1, { value: enc('b') });
      const before = (await eventsOf(server, EventType.Secret_Retrieved)).length;
      const res = await call('reader', 'POST', '/secrets/get-by-ids', { ids: [b, a.toUpperCase()] });
      expect(res.status).toBe(200);
      expect(res.body.object).toBe('list');
      expect(rows(res.body.data).map((s) => [s.object, s.id, s.value])).toEqual([
        ['baseSecret', b, enc('b')],
        ['baseSecret', a, enc('a')],
      ]);
      expect(res.body.data[0].read).toBeUndefined();
      // One audit row names the two secrets read; the event log shows one event per secret.
      expect((await eventsOf(server, EventType.Secret_Retrieved)).length).toBe(before + 1);
      const log = await call('owner', 'GET', `/organizations/${org}/events`);
      const reads = rows(log.body.data).filter((e) => e.type === EventType.Secret_Retrieved && (e.secretId === a || e.secretId === b));
      expect(reads.map((e) => e.secretId)).toEqual([b, a]);
    });

    it('answers 404 when any id is missing, trashed, unreadable or of another organization', async () => {
      const ok = await secretIn(server, org, p1);
      for (const other of [randomUUID(), await secretIn(server, org, p1, { trashed: true }), await secretIn(server, org, p2), await secretIn(server, otherOrg, null)]) {
        expect((await call('reader', 'POST', '/secrets/get-by-ids', { ids: [ok, other] })).status).toBe(404);
      }
    });

    it('refuses duplicate, missing, invalid and too many ids with 400', async () => {
      const id = await secretIn(server, org, p1);
      // An answer cached for the id alone, found again in other letter case, does not let the list naming it twice through.
      expect((await call('owner', 'POST', '/secrets/get-by-ids', { ids: [id] })).status).toBe(200);
      expect((await call('owner', 'POST', '/secrets/get-by-ids', { ids: [id.toUpperCase()] })).status).toBe(200);
      const dup = await call('owner', 'POST', '/secrets/get-by-ids', { ids: [id, id.toUpperCase()] });
      expect(dup.status).toBe(400);
      expect(Object.keys(dup.body.validationErrors)).toEqual(['ids']);
      expect((await call('owner', 'POST', '/secrets/get-by-ids', { ids: [] })).status).toBe(400);
      expect((await call('owner', 'POST', '/secrets/get-by-ids', {})).status).toBe(400);
      expect((await call('owner', 'POST', '/secrets/get-by-ids', { ids: ['x'] })).status).toBe(400);
      expect((await call('owner', 'POST', '/secrets/get-by-ids', { ids: Array.from({ length: 1001 }, () => randomUUID()) })).status).toBe(400);
    });
  });

  describe('sync', () => {
    it('refuses users with 400, and a future date before anything else', async () => {
      const user = await call('owner', 'GET', `/organizations/${org}/secrets/sync`);
      expect(user.status).toBe(400);
      expect(user.body.message).toBe('Only service accounts can sync secrets.');
      const future = await call('owner', 'GET', `/organizations/${org}/secrets/sync?lastSyncedDate=${new Date(Date.now() + 3_600_000).toISOString()}`);
      expect(future.status).toBe(400);
      expect(future.body.message).toBe('Last synced date must be in the past.');
      const bad = await call('owner', 'GET', `/organizations/${org}/secrets/sync?lastSyncedDate=yesterday`);
      expect(bad.status).toBe(400);
      expect(Object.keys(bad.body.validationErrors)).toEqual(['lastSyncedDate']);
      expect((await call('noSm', 'GET', `/organizations/${org}/secrets/sync`)).status).toBe(404);
    });
  });

  describe('trash', () => {
    it('lets admins list, restore and empty the trash, recording events', async () => {
      const a = await secretIn(server, org, p1, { trashed: true });
      const b = await secretIn(server, org, null, { trashed: true });
      const live = await secretIn(server, org, p1);
      const trash = await call('admin', 'GET', `/secrets/${org}/trash`);
      expect(trash.status).toBe(200);
      expect(trash.body.object).toBe('SecretsWithProjectsList');
      const ids = rows(trash.body.secrets).map((s) => s.id);
      expect(ids).toEqual(expect.arrayContaining([a, b]));
      expect(ids).not.toContain(live);

      expect((await call('admin', 'POST', `/secrets/${org}/trash/restore`, [a, live])).status).toBe(404);
      expect((await call('admin', 'POST', `/secrets/${otherOrg}/trash/restore`, [a])).status).toBe(404);
      const restored = await call('owner', 'POST', `/secrets/${org}/trash/restore`, [a]);
      expect(restored.status).toBe(200);
      expect(restored.text).toBe('');
      expect((await call('reader', 'GET', `/secrets/${a}`)).status).toBe(200);
      expect((await eventsOf(server, EventType.Secret_Restored)).at(-1)).toMatchObject({ secret_id: a, acting_user_id: who.owner!.userId });

      expect((await call('owner', 'POST', `/secrets/${org}/trash/empty`, [b, live])).status).toBe(404);
      const emptied = await call('owner', 'POST', `/secrets/${org}/trash/empty`, [b]);
      expect(emptied.status).toBe(200);
      expect(await server.database.db.selectFrom('secrets').select('id').where('id', '=', b).executeTakeFirst()).toBeUndefined();
      expect((await eventsOf(server, EventType.Secret_Permanently_Deleted)).at(-1)).toMatchObject({ secret_id: b });
    });

    it.each([
      ['writer', 401],
      ['reader', 401],
      ['noSm', 404],
      ['stranger', 404],
    ] as const)('answers %s with %i on every trash route', async (caller, status) => {
      const id = await secretIn(server, org, p1, { trashed: true });
      const res = await call(caller, 'GET', `/secrets/${org}/trash`);
      expect(res.status).toBe(status);
      if (status === 401) expect(res.body.message).toBe('Unauthorized.');
      expect((await call(caller, 'POST', `/secrets/${org}/trash/restore`, [id])).status).toBe(status);
      expect((await call(caller, 'POST', `/secrets/${org}/trash/empty`, [id])).status).toBe(status);
      expect((await server.database.db.selectFrom('secrets').select('deleted_date').where('id', '=', id).executeTakeFirstOrThrow()).deleted_date).not.toBeNull();
    });
  });

  describe('access policies sent with a secret (the web app\'s accessPoliciesRequests)', () => {
    const policiesOf = (secretId: string) =>
      server.database.db.selectFrom('access_policies').select(['organization_user_id', 'group_id', 'service_account_id', 'read', 'write']).where('granted_secret_id', '=', secretId).execute();
    const requests = (users: { granteeId: string; read: boolean; write: boolean }[]) => ({ userAccessPolicyRequests: users, groupAccessPolicyRequests: [], serviceAccountAccessPolicyRequests: [] });

    it('grants the secret itself on create, so a member without its project reaches it', async () => {
      const res = await call('owner', 'POST', `/organizations/${org}/secrets`, { ...secretBody('granted'), accessPoliciesRequests: requests([{ granteeId: who.direct!.memberId, read: true, write: false }]) });
      expect(res.status).toBe(200);
      expect((await policiesOf(res.body.id as string)).map((p) => [p.organization_user_id, Boolean(p.read), Boolean(p.write)])).toEqual([[who.direct!.memberId, true, false]]);
      expect((await call('direct', 'GET', `/secrets/${res.body.id as string}`)).status).toBe(200);
      expect((await call('direct', 'PUT', `/secrets/${res.body.id as string}`, secretBody('granted'))).status).toBe(404);
    });

    it('replaces the secret\'s own policies on update', async () => {
      const id = (await call('owner', 'POST', `/organizations/${org}/secrets`, { ...secretBody('swap'), accessPoliciesRequests: requests([{ granteeId: who.direct!.memberId, read: true, write: true }]) })).body.id as string;
      const res = await call('owner', 'PUT', `/secrets/${id}`, { ...secretBody('swap'), accessPoliciesRequests: requests([{ granteeId: who.reader!.memberId, read: true, write: false }]) });
      expect(res.status).toBe(200);
      expect((await policiesOf(id)).map((p) => p.organization_user_id)).toEqual([who.reader!.memberId]);
    });

    it('refuses duplicate or unreadable grants and grantees of another organization, and writes nothing', async () => {
      const before = await server.database.db.selectFrom('secrets').select('id').where('organization_id', '=', org).execute();
      const twice = requests([
        { granteeId: who.direct!.memberId, read: true, write: false },
        { granteeId: who.direct!.memberId, read: true, write: true },
      ]);
      const duplicate = await call('owner', 'POST', `/organizations/${org}/secrets`, { ...secretBody('dup'), accessPoliciesRequests: twice });
      expect(duplicate.status).toBe(400);
      expect(JSON.stringify(duplicate.body)).toContain('userAccessPolicyRequests');
      const unreadable = await call('owner', 'POST', `/organizations/${org}/secrets`, { ...secretBody('dup'), accessPoliciesRequests: requests([{ granteeId: who.direct!.memberId, read: false, write: true }]) });
      expect(unreadable.status).toBe(400);
      const foreign = await call('owner', 'POST', `/organizations/${org}/secrets`, { ...secretBody('dup'), accessPoliciesRequests: requests([{ granteeId: who.stranger!.memberId, read: true, write: false }]) });
      expect(foreign.status).toBe(404);
      expect(await server.database.db.selectFrom('secrets').select('id').where('organization_id', '=', org).execute()).toHaveLength(before.length);
    });
  });

  describe('machine accounts (service layer: the identity grant comes with the machine-account part)', () => {
    const service = () => createSecretService({ db: server.database.db, clock: systemClock, audit: createAuditLog({ clock: systemClock }), config: { secretVersionsKept: 10 }, answers: createSmAnswers(1 << 20) });
    /** The services answer the large reads encoded, as the routes send them. */
    const decoded = (body: Buffer) => JSON.parse(body.toString('utf8')) as { hasChanges: boolean; secrets: { data: { id: string }[] } | null; data: unknown[] };
    const listed = async (body: Promise<Buffer>) => (JSON.parse((await body).toString('utf8')) as { secrets: { id: string }[] }).secrets.map((s) => s.id);
    let project: string;
    let reader: string;
    let writer: string;
    let granted: string;
    let notGranted: string;

    beforeAll(async () => {
      project = await projectIn(server, org);
      reader = await machineAccountIn(server, org);
      writer = await machineAccountIn(server, org);
      await seedPolicy(server, { machineAccount: reader }, { project }, READ);
      await seedPolicy(server, { machineAccount: writer }, { project }, READ_WRITE);
      granted = await secretIn(server, org, project, { value: enc('granted') });
      notGranted = await secretIn(server, org, p2);
    });

    it('syncs every secret the account reads, then only when something it reaches changed', async () => {
      const sm = service();
      const sa = machine(reader, org);
      const first = decoded(await sm.sync(smCallerOf(sa, CLIENT), org, undefined));
      expect(first.hasChanges).toBe(true);
      expect(first.secrets?.data.map((s) => s.id)).toEqual([granted]);
      expect(first.secrets).toMatchObject({ object: 'list', continuationToken: null, data: [{ object: 'baseSecret', value: enc('granted'), projects: [{ id: project }] }] });
      await server.database.db.updateTable('service_accounts').set({ revision_date: LONG_AGO }).where('id', '=', reader).execute();
      const since = new Date(Date.now() - 1000).toISOString();
      expect(decoded(await sm.sync(smCallerOf(sa, CLIENT), org, since))).toEqual({ object: 'secretsSync', hasChanges: false, secrets: null });
      expect(decoded(await sm.sync(smCallerOf(sa, CLIENT), org, LONG_AGO)).hasChanges).toBe(true);
      await call('owner', 'PUT', `/secrets/${granted}`, { ...secretBody('changed', [project]), value: enc('granted') });
      expect(decoded(await sm.sync(smCallerOf(sa, CLIENT), org, since)).hasChanges).toBe(true);
      const events = await eventsOf(server, EventType.Secret_Retrieved);
      expect(events.at(-1)).toMatchObject({ secret_id: granted, service_account_id: reader, acting_user_id: null });
    });

    it('answers a sync with nothing new in one query, before reading the grants', async () => {
      const { db, count } = counting(server.database.db);
      const sm = createSecretService({ db, clock: systemClock, audit: createAuditLog({ clock: systemClock }), config: { secretVersionsKept: 10 }, answers: createSmAnswers(1 << 20) });
      await server.database.db.updateTable('service_accounts').set({ revision_date: LONG_AGO }).where('id', '=', reader).execute();
      expect(decoded(await sm.sync(smCallerOf(machine(reader, org), CLIENT), org, new Date(Date.now() - 1000).toISOString()))).toMatchObject({ hasChanges: false });
      expect(count()).toBe(1);
    });

    it('reads granted secrets (recording Secret_Retrieved with the account) and nothing else', async () => {
      const sm = service();
      const sa = machine(reader, org);
      expect(await sm.get(smCallerOf(sa, CLIENT), granted)).toMatchObject({ id: granted, read: true, write: false });
      expect((await eventsOf(server, EventType.Secret_Retrieved)).at(-1)).toMatchObject({ secret_id: granted, service_account_id: reader });
      await expect(sm.get(smCallerOf(sa, CLIENT), notGranted)).rejects.toMatchObject({ statusCode: 404 });
      await expect(sm.getByIds(smCallerOf(sa, CLIENT), [granted, notGranted])).rejects.toMatchObject({ statusCode: 404 });
      expect(decoded(await sm.getByIds(smCallerOf(sa, CLIENT), [granted])).data).toHaveLength(1);
      expect(await listed(sm.list(smCallerOf(sa), org))).toEqual([granted]);
      await expect(sm.listTrash(smCallerOf(sa), org)).rejects.toMatchObject({ statusCode: 401 });
    });

    it('writes only with a write grant, and only into its projects', async () => {
      const sm = service();
      await expect(sm.create(smCallerOf(machine(reader, org), CLIENT), org, secretBody('sa', [project]))).rejects.toMatchObject({ statusCode: 404 });
      await expect(sm.create(smCallerOf(machine(writer, org), CLIENT), org, secretBody('sa'))).rejects.toMatchObject({ statusCode: 404 });
      const created = await sm.create(smCallerOf(machine(writer, org), CLIENT), org, secretBody('sa', [project]));
      expect((await eventsOf(server, EventType.Secret_Created)).at(-1)).toMatchObject({ secret_id: created.id, service_account_id: writer, acting_user_id: null });
      await expect(sm.update(smCallerOf(machine(reader, org), CLIENT), created.id, secretBody('x'))).rejects.toMatchObject({ statusCode: 404 });
      expect((await sm.update(smCallerOf(machine(writer, org), CLIENT), created.id, secretBody('y'))).value).toBe(enc('y-value'));
      expect(await sm.delete(smCallerOf(machine(reader, org), CLIENT), [created.id, notGranted])).toEqual([
        { object: 'BulkDeleteResponseModel', id: created.id, error: 'access denied' },
        { object: 'BulkDeleteResponseModel', id: notGranted, error: 'access denied' },
      ]);
      expect(await sm.delete(smCallerOf(machine(writer, org), CLIENT), [created.id])).toEqual([{ object: 'BulkDeleteResponseModel', id: created.id, error: null }]);
    });

    it('records a repeated read of the same secrets as one event row naming the stored set, in one statement, and stores the set again after an hour', async () => {
      const second = await secretIn(server, org, project, { value: enc('second') });
      let now = Date.now();
      const clock = { now: () => new Date(now) };
      const { db, count } = counting(server.database.db);
      const sm = createSecretService({ db, clock, audit: createAuditLog({ clock }), config: { secretVersionsKept: 10 }, answers: createSmAnswers(1 << 20) });
      const sa = machine(reader, org);
      const ids = [second, granted];
      const read = async () => {
        const before = count();
        expect(decoded(await sm.getByIds(smCallerOf(sa, CLIENT), ids)).data).toHaveLength(2);
        return count() - before;
      };
      const setRows = async () => (await eventsOf(server, EventType.Secret_Retrieved)).filter((e) => e.service_account_id === reader && e.read_set_id !== null);
      const first = await read();
      const eventsBefore = (await setRows()).length;
      const repeated = await read();
      // The grants and the revision, then the event row alone: the set is not stored again.
      expect(repeated).toBe(3);
      expect(first - repeated).toBeGreaterThanOrEqual(1);
      const events = await setRows();
      expect(events).toHaveLength(eventsBefore + 1);
      expect(events.at(-1)).toMatchObject({ secret_id: null, service_account_id: reader, acting_user_id: null, organization_id: org });
      const sets = await server.database.db.selectFrom('secret_read_set_members').select('secret_id').where('read_set_id', '=', String(events.at(-1)?.read_set_id)).orderBy('position').execute();
      expect(sets.map((m) => m.secret_id)).toEqual(ids);
      // An hour on, the set is stored again (a no-op when it is there), with the row, in a transaction.
      now += 60 * 60 * 1000;
      expect(await read()).toBeGreaterThan(repeated);
      expect(await read()).toBe(repeated);
    });

    it("refuses another organization's machine account", async () => {
      const foreign = await machineAccountIn(server, otherOrg);
      const sm = service();
      await expect(sm.get(smCallerOf(machine(foreign, otherOrg), CLIENT), granted)).rejects.toMatchObject({ statusCode: 404 });
      await expect(sm.list(smCallerOf(machine(foreign, otherOrg)), org)).rejects.toMatchObject({ statusCode: 404 });
      await expect(sm.sync(smCallerOf(machine(foreign, otherOrg), CLIENT), org, undefined)).rejects.toMatchObject({ statusCode: 404 });
      expect(await sm.delete(smCallerOf(machine(foreign, otherOrg), CLIENT), [granted])).toEqual([{ object: 'BulkDeleteResponseModel', id: granted, error: 'access denied' }]);
    });
  });

  it('lists, fetches by id and syncs in a constant number of queries whatever the number of secrets', async () => {
    const bench = await seedSeparateOrg(server);
    const run = async () => {
      const { db, count } = counting(server.database.db);
      const sm = createSecretService({ db, clock: systemClock, audit: createAuditLog({ clock: systemClock }), config: { secretVersionsKept: 10 }, answers: createSmAnswers(1 << 20) });
      await sm.list(smCallerOf(bench.member), bench.org);
      const listed = count();
      await sm.sync(smCallerOf(machine(bench.sa, bench.org), CLIENT), bench.org, LONG_AGO);
      const synced = count() - listed;
      // All but the first: never the sync's read set, so one of its own.
      const ids = bench.granted.slice(1);
      await sm.getByIds(smCallerOf(machine(bench.sa, bench.org), CLIENT), ids);
      const fetched = count() - listed - synced;
      await sm.getByIds(smCallerOf(machine(bench.sa, bench.org), CLIENT), ids);
      return { listed, synced, fetched, fetchedAgain: count() - listed - synced - fetched };
    };
    // Three readable secrets: a read of one is a plain event row, of several a stored set.
    await bench.add(6);
    const small = await run();
    await bench.add(60);
    const large = await run();
    expect(large.listed).toBe(small.listed);
    // The reads are constant; a new read set's members are stored in batches of 1,000.
    expect(large.synced).toBe(small.synced);
    expect(large.fetched).toBe(small.fetched);
    // Asked again, the same ids are answered from the cache and their set is not stored again.
    expect(large.fetchedAgain).toBe(small.fetchedAgain);
    expect(large.fetchedAgain).toBeLessThan(large.fetched);
  });
});

/** An organization with a project a member and a machine account read, to count queries against. */
async function seedSeparateOrg(server: TestServer) {
  const org = await seedOrganization(server, { name: 'Counted' });
  const a = await smMember(server, org, 'counted@example.com');
  const project = await projectIn(server, org);
  const sa = await machineAccountIn(server, org);
  await seedPolicy(server, { member: a.memberId }, { project }, READ);
  await seedPolicy(server, { machineAccount: sa }, { project }, READ);
  const member = { kind: 'user' as const, userId: a.userId, email: 'counted@example.com', securityStamp: '', deviceIdentifier: null, clientId: 'web', scopes: ['api'], amr: [] };
  /** The secrets the machine account reads (those in the project). */
  const granted: string[] = [];
  return {
    org,
    member,
    sa,
    granted,
    add: async (n: number) => {
      for (let i = 0; i < n; i++) {
        const id = await secretIn(server, org, i % 2 ? project : null);
        if (i % 2) granted.push(id);
      }
    },
  };
}

describe('secrets with the Secrets Manager edition off', () => {
  let server: TestServer;
  let org: string;
  let owner: Actor;
  beforeAll(async () => {
    server = await startTestServer({ env: { SECRETS_MANAGER: 'false' } });
    org = await seedOrganization(server);
    owner = await smMember(server, org, 'owner@example.com', OrganizationUserType.Owner);
  });
  afterAll(async () => server.close());

  it('answers 404 on every secret route', async () => {
    const id = await secretIn(server, org, null);
    const routes: [string, string, unknown?][] = [
      ['GET', `/organizations/${org}/secrets`],
      ['POST', `/organizations/${org}/secrets`, secretBody('x')],
      ['GET', `/organizations/${org}/secrets/sync`],
      ['GET', `/secrets/${id}`],
      ['PUT', `/secrets/${id}`, secretBody('x')],
      ['GET', `/projects/${randomUUID()}/secrets`],
      ['POST', '/secrets/delete', [id]],
      ['POST', '/secrets/get-by-ids', { ids: [id] }],
      ['GET', `/secrets/${org}/trash`],
      ['POST', `/secrets/${org}/trash/empty`, [id]],
      ['POST', `/secrets/${org}/trash/restore`, [id]],
    ];
    for (const [method, path, json] of routes) {
      const res = await server.request(method, `/api${path}`, { token: owner.token, ...(json !== undefined ? { json } : {}) });
      expect(res.status, `${method} ${path}`).toBe(404);
    }
  });
});
