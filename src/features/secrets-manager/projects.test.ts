import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OrganizationUserType } from '../../platform/access/roles.js';
import { ENC, eventsOf, type Actor } from '../../../test/support/admin.js';
import { encryptText, type SymmetricKey } from '../../../test/support/bw-crypto.js';
import { createAccessToken, createMachineAccount, machineLogin, READ, seedMachineAccount, seedPolicy, seedSecret, smActor, smOrg } from '../../../test/support/sm.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { EventType } from '../../platform/audit/event-type.js';

let server: TestServer;
let orgId: string;
let orgKey: SymmetricKey;
let owner: Actor;
let member: Actor;
let outsider: Actor;
let stranger: Actor;
let machineId: string;
let machine: string;
let foreignMachine: string;

const LONG_AGO = '2000-01-01T00:00:00.000Z';

/** A machine account granted only one secret, itself and not through its project; answers its id. */
async function accountGrantedSecretOnly(secretId: string): Promise<string> {
  const id = await seedMachineAccount(server, orgId, { date: LONG_AGO });
  await seedPolicy(server, { machineAccount: id }, { secret: secretId }, READ);
  return id;
}

async function revisionOf(serviceAccountId: string): Promise<string> {
  return (await server.database.db.selectFrom('service_accounts').select('revision_date').where('id', '=', serviceAccountId).executeTakeFirstOrThrow()).revision_date;
}

async function createProject(token: string, organizationId = orgId, name = ENC) {
  return server.request('POST', `/api/organizations/${organizationId}/projects`, { token, json: { name } });
}

beforeAll(async () => {
  server = await startTestServer();
  ({ orgId, owner, orgKey } = await smOrg(server));
  member = await smActor(server, orgId);
  outsider = await smActor(server, orgId, { accessSecretsManager: false });
  const other = await smOrg(server);
  stranger = other.owner;
  const foreignId = await createMachineAccount(server, other.owner.token, other.orgId);
  foreignMachine = await machineLogin(server, (await createAccessToken(server, other.owner.token, foreignId, other.orgKey)).accessToken);
  machineId = await createMachineAccount(server, owner.token, orgId);
  machine = await machineLogin(server, (await createAccessToken(server, owner.token, machineId, orgKey)).accessToken);
});
afterAll(async () => server.close());

describe('creating projects', () => {
  it('answers the project with read and write, records Project_Created, and gives an admin no policy', async () => {
    const name = encryptText('deploy', orgKey);
    const res = await createProject(owner.token, orgId, name);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'project', organizationId: orgId, name, read: true, write: true });
    const events = (await eventsOf(server, EventType.Project_Created)).filter((e) => e.project_id === res.body.id);
    expect(events).toMatchObject([{ organization_id: orgId, acting_user_id: owner.userId, service_account_id: null }]);
    const policies = await server.database.db.selectFrom('access_policies').selectAll().where('granted_project_id', '=', res.body.id).execute();
    expect(policies).toEqual([]);
  });

  it('gives a member who creates a project read and write on it', async () => {
    const res = await createProject(member.token);
    expect(res.status).toBe(200);
    const got = await server.request('GET', `/api/projects/${res.body.id}`, { token: member.token });
    expect(got.body).toMatchObject({ id: res.body.id, read: true, write: true });
  });

  it('lets a machine account create a project it then reaches, recorded as acting machine account', async () => {
    const res = await createProject(machine);
    expect(res.status).toBe(200);
    expect((await server.request('GET', `/api/projects/${res.body.id}`, { token: machine })).body).toMatchObject({ read: true, write: true });
    const [event] = (await eventsOf(server, EventType.Project_Created)).filter((e) => e.project_id === res.body.id);
    expect(event).toMatchObject({ service_account_id: machineId, acting_user_id: null });
  });

  it('refuses a missing, plaintext or oversize name naming the field, and writes nothing', async () => {
    const before = (await server.database.db.selectFrom('projects').select('id').execute()).length;
    for (const json of [{}, { name: 'plain text' }, { name: `2.${'A'.repeat(1000)}|AAAA|AAAA` }]) {
      const res = await server.request('POST', `/api/organizations/${orgId}/projects`, { token: owner.token, json });
      expect(res.status, JSON.stringify(json)).toBe(400);
      expect(Object.keys(res.body.validationErrors ?? {})).toContain('name');
    }
    expect((await server.database.db.selectFrom('projects').select('id').execute()).length).toBe(before);
  });

  it('answers 404 to a member without Secrets Manager access, to another organization, and for an invalid id', async () => {
    expect((await createProject(outsider.token)).status).toBe(404);
    expect((await createProject(stranger.token)).status).toBe(404);
    expect((await server.request('POST', '/api/organizations/not-a-guid/projects', { token: owner.token, json: { name: ENC } })).status).toBe(400);
  });
});

describe('reading projects', () => {
  it('lists every project to an admin and only granted ones to a member, with their rights', async () => {
    const granted = (await createProject(owner.token)).body.id as string;
    const readOnly = (await createProject(owner.token)).body.id as string;
    const hidden = (await createProject(owner.token)).body.id as string;
    await seedPolicy(server, { member: member.memberId }, { project: granted });
    await seedPolicy(server, { member: member.memberId }, { project: readOnly }, READ);

    const all = await server.request('GET', `/api/organizations/${orgId}/projects`, { token: owner.token });
    expect(all.status).toBe(200);
    expect((all.body.data as { id: string }[]).map((p) => p.id)).toEqual(expect.arrayContaining([granted, readOnly, hidden]));

    const mine = await server.request('GET', `/api/organizations/${orgId}/projects`, { token: member.token });
    const byId = new Map((mine.body.data as { id: string; read: boolean; write: boolean }[]).map((p) => [p.id, p]));
    expect(byId.get(granted)).toMatchObject({ read: true, write: true });
    expect(byId.get(readOnly)).toMatchObject({ read: true, write: false });
    expect(byId.has(hidden)).toBe(false);
    expect((await server.request('GET', `/api/projects/${hidden}`, { token: member.token })).status).toBe(404);
    expect((await server.request('GET', `/api/projects/${readOnly}`, { token: member.token })).body).toMatchObject({ read: true, write: false });
  });

  it('answers 404 to a member without access, another organization, a machine account without a grant, and an unknown id', async () => {
    const id = (await createProject(owner.token)).body.id as string;
    for (const token of [outsider.token, stranger.token, machine, foreignMachine]) {
      expect((await server.request('GET', `/api/projects/${id}`, { token })).status).toBe(404);
      expect((await server.request('PUT', `/api/projects/${id}`, { token, json: { name: ENC } })).status).toBe(404);
    }
    expect((await server.request('GET', `/api/organizations/${orgId}/projects`, { token: foreignMachine })).status).toBe(404);
    expect((await createProject(foreignMachine)).status).toBe(404);
    expect((await server.request('GET', `/api/projects/${randomUUID()}`, { token: owner.token })).status).toBe(404);
    expect((await server.request('GET', `/api/organizations/${orgId}/projects`, { token: outsider.token })).status).toBe(404);
    expect((await server.request('GET', `/api/organizations/${orgId}/projects`, { token: stranger.token })).status).toBe(404);
    expect((await server.request('GET', '/api/projects/nope', { token: owner.token })).status).toBe(400);
  });

  it('lets a machine account read a project it is granted', async () => {
    const id = (await createProject(owner.token)).body.id as string;
    await seedPolicy(server, { machineAccount: machineId }, { project: id }, READ);
    const res = await server.request('GET', `/api/projects/${id}`, { token: machine });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id, read: true, write: false });
  });
});

describe('renaming projects', () => {
  it('renames for a writer, records Project_Edited and moves the revision of machine accounts reaching it', async () => {
    const id = (await createProject(owner.token)).body.id as string;
    await seedPolicy(server, { machineAccount: machineId }, { project: id }, READ);
    await server.database.db.updateTable('service_accounts').set({ revision_date: '2000-01-01T00:00:00.000Z' }).where('id', '=', machineId).execute();
    const name = encryptText('renamed', orgKey);
    const res = await server.request('PUT', `/api/projects/${id}`, { token: owner.token, json: { name } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id, name, read: true, write: true });
    expect((await eventsOf(server, EventType.Project_Edited)).filter((e) => e.project_id === id)).toHaveLength(1);
    const account = await server.database.db.selectFrom('service_accounts').select('revision_date').where('id', '=', machineId).executeTakeFirstOrThrow();
    expect(account.revision_date > '2000-01-01T00:00:00.000Z').toBe(true);
  });

  it('moves the revision of machine accounts granted only a secret in it (they see the project name with the secret)', async () => {
    const id = (await createProject(owner.token)).body.id as string;
    const account = await accountGrantedSecretOnly(await seedSecret(server, orgId, id));
    expect((await server.request('PUT', `/api/projects/${id}`, { token: owner.token, json: { name: encryptText('renamed', orgKey) } })).status).toBe(200);
    expect((await revisionOf(account)) > LONG_AGO).toBe(true);
  });

  it('answers 404 to a reader who may not write, and 400 to a plaintext name', async () => {
    const id = (await createProject(owner.token)).body.id as string;
    await seedPolicy(server, { member: member.memberId }, { project: id }, READ);
    expect((await server.request('PUT', `/api/projects/${id}`, { token: member.token, json: { name: ENC } })).status).toBe(404);
    const bad = await server.request('PUT', `/api/projects/${id}`, { token: owner.token, json: { name: 'clear' } });
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body.validationErrors)).toEqual(['name']);
  });
});

describe('deleting projects', () => {
  it('deletes what the caller may write, answers access denied for the rest, and leaves secrets without project', async () => {
    const mine = (await createProject(member.token)).body.id as string;
    const notMine = (await createProject(owner.token)).body.id as string;
    await seedPolicy(server, { member: member.memberId }, { project: notMine }, READ);
    const secretId = await seedSecret(server, orgId, mine);

    const res = await server.request('POST', '/api/projects/delete', { token: member.token, json: [mine, notMine.toUpperCase()] });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([
      { object: 'BulkDeleteResponseModel', id: mine, error: null },
      { object: 'BulkDeleteResponseModel', id: notMine, error: 'access denied' },
    ]);
    expect(await server.database.db.selectFrom('projects').select('id').where('id', 'in', [mine, notMine]).execute()).toEqual([{ id: notMine }]);
    const secret = await server.database.db.selectFrom('secrets').select('project_id').where('id', '=', secretId).executeTakeFirstOrThrow();
    expect(secret.project_id).toBeNull();
    expect((await eventsOf(server, EventType.Project_Deleted)).filter((e) => e.project_id === mine)).toMatchObject([{ acting_user_id: member.userId, organization_id: orgId }]);
    expect((await eventsOf(server, EventType.Project_Deleted)).filter((e) => e.project_id === notMine)).toEqual([]);
  });

  it('moves the revision of machine accounts that reached a deleted project', async () => {
    const id = (await createProject(owner.token)).body.id as string;
    await seedPolicy(server, { machineAccount: machineId }, { project: id });
    await server.database.db.updateTable('service_accounts').set({ revision_date: '2000-01-01T00:00:00.000Z' }).where('id', '=', machineId).execute();
    expect((await server.request('POST', '/api/projects/delete', { token: owner.token, json: [id] })).status).toBe(200);
    const account = await server.database.db.selectFrom('service_accounts').select('revision_date').where('id', '=', machineId).executeTakeFirstOrThrow();
    expect(account.revision_date > '2000-01-01T00:00:00.000Z').toBe(true);
  });

  it("moves the revision date of a deleted project's secrets, which lose their project", async () => {
    const id = (await createProject(owner.token)).body.id as string;
    const secretId = await seedSecret(server, orgId, id, { date: LONG_AGO });
    expect((await server.request('POST', '/api/projects/delete', { token: owner.token, json: [id] })).status).toBe(200);
    const secret = await server.database.db.selectFrom('secrets').select(['project_id', 'revision_date']).where('id', '=', secretId).executeTakeFirstOrThrow();
    expect(secret.project_id).toBeNull();
    expect(secret.revision_date > LONG_AGO).toBe(true);
  });

  it('moves the revision of machine accounts granted only a secret in a deleted project (the secret loses its project)', async () => {
    const id = (await createProject(owner.token)).body.id as string;
    const account = await accountGrantedSecretOnly(await seedSecret(server, orgId, id));
    expect((await server.request('POST', '/api/projects/delete', { token: owner.token, json: [id] })).status).toBe(200);
    expect((await revisionOf(account)) > LONG_AGO).toBe(true);
  });

  it('denies, id by id, an unknown id, a project of another organization and any id of a caller without standing, and deletes only what the caller may write', async () => {
    const id = (await createProject(owner.token)).body.id as string;
    const elsewhere = (await createProject(stranger.token, (await server.database.db.selectFrom('organization_users').select('organization_id').where('id', '=', stranger.memberId).executeTakeFirstOrThrow()).organization_id)).body.id as string;
    const unknown = randomUUID();
    const results = (json: string[], token: string) => server.request('POST', '/api/projects/delete', { token, json }).then((r) => Object.fromEntries((r.body.data as { id: string; error: string | null }[]).map((d) => [d.id, d.error])));
    expect(await results([unknown, elsewhere], owner.token)).toEqual({ [unknown]: 'access denied', [elsewhere]: 'access denied' });
    expect(await results([id], stranger.token)).toEqual({ [id]: 'access denied' });
    expect(await results([id], outsider.token)).toEqual({ [id]: 'access denied' });
    expect(await server.database.db.selectFrom('projects').select('id').where('id', 'in', [id, elsewhere]).execute()).toHaveLength(2);
    expect(await results([id, unknown, elsewhere], owner.token)).toEqual({ [id]: null, [unknown]: 'access denied', [elsewhere]: 'access denied' });
    expect(await server.database.db.selectFrom('projects').select('id').where('id', 'in', [id, elsewhere]).execute()).toEqual([{ id: elsewhere }]);
  });

  it('refuses 0 ids, 1,001 ids and invalid guids', async () => {
    const many = Array.from({ length: 1001 }, () => randomUUID());
    for (const json of [[], many, ['nope'], { ids: [randomUUID()] }]) {
      expect((await server.request('POST', '/api/projects/delete', { token: owner.token, json })).status).toBe(400);
    }
  });

  it('lets a machine account delete a project it may write', async () => {
    const id = (await createProject(machine)).body.id as string;
    const res = await server.request('POST', '/api/projects/delete', { token: machine, json: [id] });
    expect(res.body.data).toEqual([{ object: 'BulkDeleteResponseModel', id, error: null }]);
    expect((await eventsOf(server, EventType.Project_Deleted)).filter((e) => e.project_id === id)).toMatchObject([{ service_account_id: machineId }]);
  });
});

describe('admins', () => {
  it('an admin (not owner) with Secrets Manager access manages every project', async () => {
    const admin = await smActor(server, orgId, { type: OrganizationUserType.Admin });
    const id = (await createProject(member.token)).body.id as string;
    expect((await server.request('GET', `/api/projects/${id}`, { token: admin.token })).body).toMatchObject({ read: true, write: true });
  });
});
