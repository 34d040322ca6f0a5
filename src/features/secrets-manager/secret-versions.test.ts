import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { actor, eventsOf, type Actor } from '../../../test/support/admin.js';
import { testClock } from '../../../test/support/clock.js';
import { seedOrganization } from '../../../test/support/orgs.js';
import { seedMachineAccount, seedPolicy, seedProject, seedSecret, smActor, smCallerOf, type PolicyGrantee } from '../../../test/support/sm.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import type { ServiceAccountPrincipal } from '../../http/access.js';
import { createAuditLog } from '../../platform/audit/audit-log.js';
import { EventType } from '../../platform/audit/event-type.js';
import { OrganizationUserType } from '../../platform/access/roles.js';
import { createSecretVersionService } from './secret-versions.service.js';
import { createSmAnswers } from './sm-answers.js';
import { createSecretService } from './secrets.service.js';

const KEPT = 3;
const enc = (text: string) => `2.AAAAAAAAAAAAAAAAAAAAAA==|${Buffer.from(text).toString('base64')}|AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=`;
const body = (value: string, extra: Record<string, unknown> = {}) => ({ key: enc('key'), value: enc(value), note: enc('note'), ...extra });
const rows = (value: unknown) => value as Record<string, unknown>[];
const LONG_AGO = '2000-01-01T00:00:00.000Z';
const CLIENT = { ipAddress: null, deviceType: null, deviceIdentifier: null, clientVersion: null };

describe('secret versions', () => {
  const clock = testClock(new Date('2026-01-01T00:00:00.000Z'));
  let server: TestServer;
  let org: string;
  let otherOrg: string;
  let project: string;
  let readOnlyProject: string;
  const who: Record<string, Actor> = {};

  const smMember = (email: string, type = OrganizationUserType.User, accessSecretsManager = true) => smActor(server, org, { email, type, accessSecretsManager });
  /** A secret whose value carries `value`, dated long ago like every seeded row. */
  const secretWith = (projectId: string | null, value: string) => seedSecret(server, org, projectId, { key: enc('key'), value: enc(value), note: enc('note'), date: LONG_AGO });
  const grant = (grantee: PolicyGrantee, projectId: string, write: boolean) => seedPolicy(server, grantee, { project: projectId }, { read: true, write }, { date: LONG_AGO });

  const versionRows = (secretId: string) =>
    server.database.db.selectFrom('secret_versions').selectAll().where('secret_id', '=', secretId).orderBy('version_date', 'desc').execute();

  beforeAll(async () => {
    server = await startTestServer({ clock, env: { SECRET_VERSIONS_KEPT: String(KEPT) } });
    org = await seedOrganization(server);
    otherOrg = await seedOrganization(server, { name: 'Other' });
    who.owner = await smMember('owner@example.com', OrganizationUserType.Owner);
    who.writer = await smMember('writer@example.com');
    who.reader = await smMember('reader@example.com');
    who.noSm = await smMember('nosm@example.com', OrganizationUserType.Admin, false);
    who.stranger = await smActor(server, otherOrg, { email: 'stranger@example.com', type: OrganizationUserType.Owner });
    project = await seedProject(server, org, { name: enc('p'), date: LONG_AGO });
    readOnlyProject = await seedProject(server, org, { name: enc('p'), date: LONG_AGO });
    await grant({ member: who.writer.memberId }, project, true);
    await grant({ member: who.reader.memberId }, project, false);
    await grant({ member: who.writer.memberId }, readOnlyProject, false);
  });
  afterAll(async () => server.close());
  // Every step a minute later, so versions order by date alone.
  beforeEach(() => clock.advance(60_000));

  const call = (caller: string, method: string, path: string, json?: unknown) => {
    clock.advance(1000);
    return server.request(method, `/api${path}`, { token: who[caller]?.token ?? '', ...(json !== undefined ? { json } : {}) });
  };

  it('keeps the replaced value, who replaced it and when, on a value change', async () => {
    const id = await secretWith(project, 'v1');
    const res = await call('writer', 'PUT', `/secrets/${id}`, body('v2'));
    expect(res.status).toBe(200);
    const versions = await call('reader', 'GET', `/secrets/${id}/versions`);
    expect(versions.status).toBe(200);
    expect(versions.body).toMatchObject({ object: 'list', continuationToken: null });
    expect(versions.body.data).toEqual([
      {
        object: 'secretVersion',
        id: expect.any(String),
        secretId: id,
        value: enc('v1'),
        versionDate: res.body.revisionDate,
        editorOrganizationUserId: who.writer!.memberId,
        editorServiceAccountId: null,
      },
    ]);
  });

  it('honours valueChanged, and without it counts a different encrypted value as a change', async () => {
    const id = await secretWith(project, 'a');
    await call('writer', 'PUT', `/secrets/${id}`, body('a-reencrypted', { valueChanged: false }));
    expect(await versionRows(id)).toHaveLength(0);
    await call('writer', 'PUT', `/secrets/${id}`, body('a-reencrypted'));
    expect(await versionRows(id)).toHaveLength(0);
    await call('writer', 'PUT', `/secrets/${id}`, body('b', { valueChanged: true }));
    await call('writer', 'PUT', `/secrets/${id}`, body('c'));
    expect((await versionRows(id)).map((v) => v.value)).toEqual([enc('b'), enc('a-reencrypted')]);
  });

  it(`keeps at most SECRET_VERSIONS_KEPT (${KEPT}) versions, dropping the oldest`, async () => {
    const id = await secretWith(project, 'v0');
    for (let i = 1; i <= 5; i++) expect((await call('owner', 'PUT', `/secrets/${id}`, body(`v${i}`))).status).toBe(200);
    expect((await versionRows(id)).map((v) => v.value)).toEqual([enc('v4'), enc('v3'), enc('v2')]);
  });

  it('restores a version for writers, keeping the replaced value first, and records Secret_Edited', async () => {
    const id = await secretWith(project, 'old');
    await call('writer', 'PUT', `/secrets/${id}`, body('new'));
    const [old] = await versionRows(id);
    expect((await call('reader', 'PUT', `/secrets/${id}/versions/restore`, { versionId: old!.id })).status).toBe(404);
    const res = await call('writer', 'PUT', `/secrets/${id}/versions/restore`, { versionId: old!.id.toUpperCase() });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'secret', id, value: enc('old'), read: true, write: true });
    expect((await call('reader', 'GET', `/secrets/${id}`)).body.value).toBe(enc('old'));
    expect((await versionRows(id)).map((v) => v.value)).toEqual([enc('new'), enc('old')]);
    expect((await eventsOf(server, EventType.Secret_Edited)).at(-1)).toMatchObject({ secret_id: id, acting_user_id: who.writer!.userId });
    // Restoring the value the secret already has keeps no duplicate.
    await call('writer', 'PUT', `/secrets/${id}/versions/restore`, { versionId: old!.id });
    expect(await versionRows(id)).toHaveLength(2);
  });

  it('refuses a restore of another secret\'s version, an unknown version and a malformed body', async () => {
    const a = await secretWith(project, 'a');
    const b = await secretWith(project, 'b');
    await call('owner', 'PUT', `/secrets/${b}`, body('b2'));
    const [ofB] = await versionRows(b);
    expect((await call('owner', 'PUT', `/secrets/${a}/versions/restore`, { versionId: ofB!.id })).status).toBe(404);
    expect((await call('owner', 'PUT', `/secrets/${a}/versions/restore`, { versionId: randomUUID() })).status).toBe(404);
    const bad = await call('owner', 'PUT', `/secrets/${a}/versions/restore`, {});
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body.validationErrors)).toEqual(['versionId']);
  });

  it('shows versions only to callers who can read the secret', async () => {
    const id = await secretWith(project, 'x');
    await call('owner', 'PUT', `/secrets/${id}`, body('y'));
    const [version] = await versionRows(id);
    for (const [caller, status] of [
      ['owner', 200],
      ['writer', 200],
      ['reader', 200],
      ['noSm', 404],
      ['stranger', 404],
    ] as const) {
      expect((await call(caller, 'GET', `/secrets/${id}/versions`)).status, caller).toBe(status);
      expect((await call(caller, 'GET', `/secret-versions/${version!.id}`)).status, caller).toBe(status);
      expect((await call(caller, 'POST', '/secret-versions/get-by-ids', [version!.id])).status, caller).toBe(status);
    }
    const one = await call('reader', 'GET', `/secret-versions/${version!.id}`);
    expect(one.body).toMatchObject({ object: 'secretVersion', id: version!.id, secretId: id, value: enc('x') });
    const hidden = await secretWith(null, 'h');
    await call('owner', 'PUT', `/secrets/${hidden}`, body('h2'));
    const [hiddenVersion] = await versionRows(hidden);
    expect((await call('reader', 'GET', `/secrets/${hidden}/versions`)).status).toBe(404);
    expect((await call('reader', 'POST', '/secret-versions/get-by-ids', [version!.id, hiddenVersion!.id])).status).toBe(404);
    expect((await call('reader', 'POST', '/secret-versions/get-by-ids', [version!.id, randomUUID()])).status).toBe(404);
    const both = await call('owner', 'POST', '/secret-versions/get-by-ids', [version!.id, hiddenVersion!.id]);
    expect(rows(both.body.data).map((v) => v.id).sort()).toEqual([version!.id, hiddenVersion!.id].sort());
  });

  it('answers 400 "No version IDs provided." for empty lists, and 400 for invalid ids', async () => {
    for (const path of ['/secret-versions/get-by-ids', '/secret-versions/delete']) {
      const res = await call('owner', 'POST', path, []);
      expect(res.status).toBe(400);
      expect(res.body.message).toBe('No version IDs provided.');
      expect((await call('owner', 'POST', path, ['nope'])).status).toBe(400);
      expect((await call('owner', 'POST', path, Array.from({ length: 1001 }, () => randomUUID()))).status).toBe(400);
    }
  });

  it('refuses an id listed twice in get-by-ids with 400, as secrets get-by-ids does, and deletes it once', async () => {
    const id = await secretWith(project, 'd');
    await call('owner', 'PUT', `/secrets/${id}`, body('d2'));
    const [version] = await versionRows(id);
    const dup = await call('owner', 'POST', '/secret-versions/get-by-ids', [version!.id, version!.id.toUpperCase()]);
    expect(dup.status).toBe(400);
    expect(Object.keys(dup.body.validationErrors)).toEqual(['ids']);
    expect((await call('owner', 'POST', '/secret-versions/delete', [version!.id, version!.id.toUpperCase()])).status).toBe(200);
    expect(await versionRows(id)).toHaveLength(0);
  });

  it('deletes versions, all or nothing, for writers of every parent secret', async () => {
    const writable = await secretWith(project, 'w');
    const readable = await secretWith(readOnlyProject, 'r');
    await call('owner', 'PUT', `/secrets/${writable}`, body('w2'));
    await call('owner', 'PUT', `/secrets/${readable}`, body('r2'));
    const [w] = await versionRows(writable);
    const [r] = await versionRows(readable);
    expect((await call('writer', 'POST', '/secret-versions/delete', [w!.id, r!.id])).status).toBe(404);
    expect((await call('reader', 'POST', '/secret-versions/delete', [w!.id])).status).toBe(404);
    expect(await versionRows(writable)).toHaveLength(1);
    const res = await call('writer', 'POST', '/secret-versions/delete', [w!.id]);
    expect(res.status).toBe(200);
    expect(res.text).toBe('');
    expect(await versionRows(writable)).toHaveLength(0);
    expect(await versionRows(readable)).toHaveLength(1);
  });

  it('hides the versions of a secret in the trash', async () => {
    const id = await secretWith(project, 't');
    await call('owner', 'PUT', `/secrets/${id}`, body('t2'));
    const [version] = await versionRows(id);
    await call('owner', 'POST', '/secrets/delete', [id]);
    expect((await call('owner', 'GET', `/secrets/${id}/versions`)).status).toBe(404);
    expect((await call('owner', 'GET', `/secret-versions/${version!.id}`)).status).toBe(404);
    expect((await call('owner', 'PUT', `/secrets/${id}/versions/restore`, { versionId: version!.id })).status).toBe(404);
  });

  it('records a machine account as the editor of the values it replaces, and bumps the sync revision on restore', async () => {
    const sa = await seedMachineAccount(server, org, { name: enc('m'), date: LONG_AGO });
    await grant({ machineAccount: sa }, project, true);
    const principal: ServiceAccountPrincipal = { kind: 'serviceAccount', serviceAccountId: sa, organizationId: org, accessTokenId: randomUUID(), clientId: randomUUID(), scopes: ['api.secrets'] };
    const deps = { db: server.database.db, clock, audit: createAuditLog({ clock }), config: { secretVersionsKept: KEPT }, answers: createSmAnswers(1 << 20) };
    const secrets = createSecretService(deps);
    const versions = createSecretVersionService(deps);
    const id = await secretWith(project, 'm1');
    await secrets.update(smCallerOf(principal, CLIENT), id, body('m2'));
    const [kept] = await versionRows(id);
    expect(kept).toMatchObject({ value: enc('m1'), editor_service_account_id: sa, editor_organization_user_id: null });
    await server.database.db.updateTable('service_accounts').set({ revision_date: LONG_AGO }).where('id', '=', sa).execute();
    clock.advance(1000);
    expect((await versions.restore(smCallerOf(principal, CLIENT), id, kept!.id)).value).toBe(enc('m1'));
    const account = await server.database.db.selectFrom('service_accounts').select('revision_date').where('id', '=', sa).executeTakeFirstOrThrow();
    expect(account.revision_date > LONG_AGO).toBe(true);
    expect((await versions.listOfSecret(smCallerOf(principal), id)).data.map((v) => [v.value, v.editorServiceAccountId])).toEqual([
      [enc('m2'), sa],
      [enc('m1'), sa],
    ]);
  });
});

describe('secret versions with the Secrets Manager edition off', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ env: { SECRETS_MANAGER: 'false' } });
  });
  afterAll(async () => server.close());

  it('answers 404 on every version route', async () => {
    const org = await seedOrganization(server);
    const owner = await actor(server, org, 'owner@example.com', { type: OrganizationUserType.Owner });
    const id = randomUUID();
    for (const [method, path, json] of [
      ['GET', `/secrets/${id}/versions`],
      ['GET', `/secret-versions/${id}`],
      ['POST', '/secret-versions/get-by-ids', [id]],
      ['PUT', `/secrets/${id}/versions/restore`, { versionId: id }],
      ['POST', '/secret-versions/delete', [id]],
    ] as [string, string, unknown?][]) {
      expect((await server.request(method, `/api${path}`, { token: owner.token, ...(json !== undefined ? { json } : {}) })).status, path).toBe(404);
    }
  });
});
