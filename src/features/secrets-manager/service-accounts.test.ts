import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OrganizationUserType } from '../../platform/access/roles.js';
import { ENC, eventsOf, type Actor } from '../../../test/support/admin.js';
import { encryptText, type SymmetricKey } from '../../../test/support/bw-crypto.js';
import { createAccessToken, createMachineAccount, machineLogin, READ, seedPolicy, seedSecret, smActor, smOrg } from '../../../test/support/sm.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { EventType } from '../../platform/audit/event-type.js';
import { generateClientSecret } from './service-accounts.service.js';

let server: TestServer;
let orgId: string;
let orgKey: SymmetricKey;
let owner: Actor;
let member: Actor;
let outsider: Actor;
let stranger: Actor;

const at = (minutes: number) => new Date(Date.now() + minutes * 60_000).toISOString();

beforeAll(async () => {
  server = await startTestServer();
  ({ orgId, owner, orgKey } = await smOrg(server));
  member = await smActor(server, orgId);
  outsider = await smActor(server, orgId, { accessSecretsManager: false });
  stranger = (await smOrg(server)).owner;
});
afterAll(async () => server.close());

describe('creating machine accounts', () => {
  it('creates for an owner, records ServiceAccount_Created naming the account and the user, with no people policy', async () => {
    const name = encryptText('ci', orgKey);
    const res = await server.request('POST', `/api/organizations/${orgId}/service-accounts`, { token: owner.token, json: { name } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'serviceAccount', organizationId: orgId, name });
    expect(Object.keys(res.body).sort()).toEqual(['creationDate', 'id', 'name', 'object', 'organizationId', 'revisionDate']);
    const events = (await eventsOf(server, EventType.ServiceAccount_Created)).filter((e) => e.granted_service_account_id === res.body.id);
    expect(events).toMatchObject([{ organization_id: orgId, acting_user_id: owner.userId, service_account_id: null }]);
    expect(await server.database.db.selectFrom('access_policies').select('id').where('granted_service_account_id', '=', res.body.id).execute()).toEqual([]);
  });

  it('gives a member who creates one a read+write people policy, so they can manage it', async () => {
    const id = await createMachineAccount(server, member.token, orgId);
    const [row] = await server.database.db.selectFrom('access_policies').selectAll().where('granted_service_account_id', '=', id).execute();
    expect(row).toMatchObject({ organization_user_id: member.memberId });
    expect(Boolean(row?.read) && Boolean(row?.write)).toBe(true);
    expect((await server.request('GET', `/api/service-accounts/${id}`, { token: member.token })).status).toBe(200);
    expect((await eventsOf(server, EventType.ServiceAccount_UserAdded)).filter((e) => e.granted_service_account_id === id)).toMatchObject([{ organization_user_id: member.memberId }]);
  });

  it('refuses machine accounts as creators with 404', async () => {
    const id = await createMachineAccount(server, owner.token, orgId);
    const machine = await machineLogin(server, (await createAccessToken(server, owner.token, id, orgKey)).accessToken);
    const res = await server.request('POST', `/api/organizations/${orgId}/service-accounts`, { token: machine, json: { name: ENC } });
    expect(res.status).toBe(404);
  });

  it('refuses a missing, plaintext or oversize name naming the field, and writes nothing', async () => {
    const before = (await server.database.db.selectFrom('service_accounts').select('id').execute()).length;
    for (const json of [{}, { name: 'ci runner' }, { name: `2.${'A'.repeat(1000)}|AAAA|AAAA` }]) {
      const res = await server.request('POST', `/api/organizations/${orgId}/service-accounts`, { token: owner.token, json });
      expect(res.status, JSON.stringify(json)).toBe(400);
      expect(Object.keys(res.body.validationErrors ?? {})).toContain('name');
    }
    expect((await server.database.db.selectFrom('service_accounts').select('id').execute()).length).toBe(before);
  });

  it('answers 404 to a member without Secrets Manager access and to another organization', async () => {
    for (const token of [outsider.token, stranger.token]) {
      expect((await server.request('POST', `/api/organizations/${orgId}/service-accounts`, { token, json: { name: ENC } })).status).toBe(404);
    }
  });
});

describe('reading and renaming machine accounts', () => {
  it('lists every account to an admin, granted ones to a member, none to a machine account', async () => {
    const granted = await createMachineAccount(server, owner.token, orgId);
    const hidden = await createMachineAccount(server, owner.token, orgId);
    await seedPolicy(server, { member: member.memberId }, { machineAccount: granted });
    const all = (await server.request('GET', `/api/organizations/${orgId}/service-accounts`, { token: owner.token })).body.data as { id: string; accessToSecrets: number }[];
    expect(all.map((a) => a.id)).toEqual(expect.arrayContaining([granted, hidden]));
    expect(all.every((a) => a.accessToSecrets === 0)).toBe(true);
    const mine = (await server.request('GET', `/api/organizations/${orgId}/service-accounts`, { token: member.token })).body.data as { id: string }[];
    expect(mine.map((a) => a.id)).toContain(granted);
    expect(mine.map((a) => a.id)).not.toContain(hidden);
    expect((await server.request('GET', `/api/service-accounts/${hidden}`, { token: member.token })).status).toBe(404);

    const machine = await machineLogin(server, (await createAccessToken(server, owner.token, granted, orgKey)).accessToken);
    expect((await server.request('GET', `/api/organizations/${orgId}/service-accounts`, { token: machine })).body.data).toEqual([]);
    expect((await server.request('GET', `/api/service-accounts/${granted}`, { token: machine })).status).toBe(404);
  });

  it('counts the secrets each account reaches with includeAccessToSecrets, outside the trash, once each', async () => {
    const id = await createMachineAccount(server, owner.token, orgId);
    const project = (await server.request('POST', `/api/organizations/${orgId}/projects`, { token: owner.token, json: { name: ENC } })).body.id as string;
    const inProject = await seedSecret(server, orgId, project);
    await seedSecret(server, orgId, project);
    await seedSecret(server, orgId, project, { trashed: true });
    const direct = await seedSecret(server, orgId, null);
    await seedSecret(server, orgId, null);
    await seedPolicy(server, { machineAccount: id }, { project }, READ);
    await seedPolicy(server, { machineAccount: id }, { secret: direct }, READ);
    await seedPolicy(server, { machineAccount: id }, { secret: inProject }, READ);
    const listed = async (query: string) =>
      ((await server.request('GET', `/api/organizations/${orgId}/service-accounts${query}`, { token: owner.token })).body.data as { id: string; accessToSecrets: number }[]).find((a) => a.id === id);
    expect((await listed('?includeAccessToSecrets=true'))?.accessToSecrets).toBe(3);
    expect((await listed(''))?.accessToSecrets).toBe(0);
  });

  it('renames for a writer; 404 for a member without a policy and a plaintext name is a 400', async () => {
    const id = await createMachineAccount(server, owner.token, orgId);
    const name = encryptText('renamed', orgKey);
    const res = await server.request('PUT', `/api/service-accounts/${id}`, { token: owner.token, json: { name } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id, name });
    expect((await server.request('PUT', `/api/service-accounts/${id}`, { token: member.token, json: { name } })).status).toBe(404);
    expect((await server.request('PUT', `/api/service-accounts/${id}`, { token: stranger.token, json: { name } })).status).toBe(404);
    const bad = await server.request('PUT', `/api/service-accounts/${id}`, { token: owner.token, json: { name: 'plain' } });
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body.validationErrors)).toEqual(['name']);
  });
});

describe('deleting machine accounts', () => {
  it('deletes what the caller may write, answers access denied for the rest, records ServiceAccount_Deleted', async () => {
    const mine = await createMachineAccount(server, member.token, orgId);
    const notMine = await createMachineAccount(server, owner.token, orgId);
    const res = await server.request('POST', '/api/service-accounts/delete', { token: member.token, json: [mine, notMine] });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([
      { object: 'BulkDeleteResponseModel', id: mine, error: null },
      { object: 'BulkDeleteResponseModel', id: notMine, error: 'access denied' },
    ]);
    expect(await server.database.db.selectFrom('service_accounts').select('id').where('id', 'in', [mine, notMine]).execute()).toEqual([{ id: notMine }]);
    expect((await eventsOf(server, EventType.ServiceAccount_Deleted)).filter((e) => e.granted_service_account_id === mine)).toMatchObject([{ acting_user_id: member.userId }]);
    expect((await eventsOf(server, EventType.ServiceAccount_Deleted)).filter((e) => e.granted_service_account_id === notMine)).toEqual([]);
  });

  it('denies, id by id, an unknown id and any id of a caller without standing; 400 for 0 or 1,001 ids', async () => {
    const id = await createMachineAccount(server, owner.token, orgId);
    const unknown = randomUUID();
    const results = (json: string[], token: string) => server.request('POST', '/api/service-accounts/delete', { token, json }).then((r) => Object.fromEntries((r.body.data as { id: string; error: string | null }[]).map((d) => [d.id, d.error])));
    expect(await results([unknown], owner.token)).toEqual({ [unknown]: 'access denied' });
    expect(await results([id], stranger.token)).toEqual({ [id]: 'access denied' });
    expect(await results([id], outsider.token)).toEqual({ [id]: 'access denied' });
    expect((await server.request('POST', '/api/service-accounts/delete', { token: owner.token, json: [] })).status).toBe(400);
    const many = Array.from({ length: 1001 }, () => randomUUID());
    expect((await server.request('POST', '/api/service-accounts/delete', { token: owner.token, json: many })).status).toBe(400);
    expect((await server.request('POST', '/api/service-accounts/delete', { token: owner.token, json: ['x'] })).status).toBe(400);
    expect(await server.database.db.selectFrom('service_accounts').select('id').where('id', '=', id).execute()).toHaveLength(1);
  });
});

describe('access tokens', () => {
  it('creates a token whose secret is answered once and stored only as base64(SHA-256)', async () => {
    const id = await createMachineAccount(server, owner.token, orgId);
    const name = encryptText('token', orgKey);
    const expireAt = at(60);
    const res = await server.request('POST', `/api/service-accounts/${id}/access-tokens`, { token: owner.token, json: { name, encryptedPayload: ENC, key: ENC, expireAt } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'accessTokenCreation', name, expireAt });
    expect(res.body.clientSecret).toMatch(/^[A-Za-z0-9]{30}$/);
    const row = await server.database.db.selectFrom('access_tokens').selectAll().where('id', '=', res.body.id).executeTakeFirstOrThrow();
    expect(row.client_secret_hash).toBe(createHash('sha256').update(res.body.clientSecret as string, 'utf8').digest('base64'));
    expect(JSON.stringify(row)).not.toContain(res.body.clientSecret);
    expect(JSON.parse(row.scope)).toEqual(['api.secrets']);

    const listed = await server.request('GET', `/api/service-accounts/${id}/access-tokens`, { token: owner.token });
    expect(listed.body.data).toEqual([{ object: 'accessToken', id: res.body.id, name, scopes: ['api.secrets'], expireAt, creationDate: res.body.creationDate, revisionDate: res.body.revisionDate }]);
    expect(listed.text).not.toContain(res.body.clientSecret);
  });

  it('takes no expiry as a token that does not expire', async () => {
    const id = await createMachineAccount(server, owner.token, orgId);
    const res = await server.request('POST', `/api/service-accounts/${id}/access-tokens`, { token: owner.token, json: { name: ENC, encryptedPayload: ENC, key: ENC } });
    expect(res.status).toBe(200);
    expect(res.body.expireAt).toBeNull();
  });

  it('refuses a past expiry, missing or plaintext fields and an oversize name, writing nothing', async () => {
    const id = await createMachineAccount(server, owner.token, orgId);
    const base = { name: ENC, encryptedPayload: ENC, key: ENC };
    const past = await server.request('POST', `/api/service-accounts/${id}/access-tokens`, { token: owner.token, json: { ...base, expireAt: at(-1) } });
    expect(past.status).toBe(400);
    expect(past.body.validationErrors).toEqual({ expireAt: ['Please select an expiration date that is in the future.'] });
    const cases: [Record<string, unknown>, string][] = [
      [{ encryptedPayload: ENC, key: ENC }, 'name'],
      [{ ...base, name: 'plain' }, 'name'],
      [{ ...base, name: `2.${'A'.repeat(200)}|AAAA|AAAA` }, 'name'],
      [{ ...base, encryptedPayload: 'plain' }, 'encryptedPayload'],
      [{ ...base, key: undefined }, 'key'],
      [{ ...base, expireAt: 'soon' }, 'expireAt'],
    ];
    for (const [json, field] of cases) {
      const res = await server.request('POST', `/api/service-accounts/${id}/access-tokens`, { token: owner.token, json });
      expect(res.status, field).toBe(400);
      expect(Object.keys(res.body.validationErrors ?? {}), field).toContain(field);
    }
    expect(await server.database.db.selectFrom('access_tokens').select('id').where('service_account_id', '=', id).execute()).toEqual([]);
  });

  it('lets only writers of the machine account list, create and revoke tokens (404 otherwise)', async () => {
    const id = await createMachineAccount(server, owner.token, orgId);
    const token = await createAccessToken(server, owner.token, id, orgKey);
    const machine = await machineLogin(server, token.accessToken);
    for (const caller of [member.token, outsider.token, stranger.token, machine]) {
      expect((await server.request('GET', `/api/service-accounts/${id}/access-tokens`, { token: caller })).status).toBe(404);
      expect((await server.request('POST', `/api/service-accounts/${id}/access-tokens`, { token: caller, json: { name: ENC, encryptedPayload: ENC, key: ENC } })).status).toBe(404);
      expect((await server.request('POST', `/api/service-accounts/${id}/access-tokens/revoke`, { token: caller, json: { ids: [token.id] } })).status).toBe(404);
    }
    expect(await server.database.db.selectFrom('access_tokens').select('id').where('service_account_id', '=', id).execute()).toHaveLength(1);
  });

  it("revokes only that machine account's tokens and answers an empty 200", async () => {
    const a = await createMachineAccount(server, owner.token, orgId);
    const b = await createMachineAccount(server, owner.token, orgId);
    const ta = await createAccessToken(server, owner.token, a, orgKey);
    const tb = await createAccessToken(server, owner.token, b, orgKey);
    const res = await server.request('POST', `/api/service-accounts/${a}/access-tokens/revoke`, { token: owner.token, json: { ids: [ta.id, tb.id] } });
    expect(res.status).toBe(200);
    expect(res.text).toBe('');
    const left = await server.database.db.selectFrom('access_tokens').select('id').where('id', 'in', [ta.id, tb.id]).execute();
    expect(left).toEqual([{ id: tb.id }]);
    expect((await server.request('POST', `/api/service-accounts/${a}/access-tokens/revoke`, { token: owner.token, json: { ids: [] } })).status).toBe(400);
  });

  it('lets an admin and a member holding the people policy manage tokens', async () => {
    const admin = await smActor(server, orgId, { type: OrganizationUserType.Admin });
    const id = await createMachineAccount(server, member.token, orgId);
    for (const caller of [admin.token, member.token]) {
      expect((await server.request('POST', `/api/service-accounts/${id}/access-tokens`, { token: caller, json: { name: ENC, encryptedPayload: ENC, key: ENC } })).status).toBe(200);
    }
    expect((await server.request('GET', `/api/service-accounts/${id}/access-tokens`, { token: member.token })).body.data).toHaveLength(2);
  });
});

describe('client secrets', () => {
  it('are 30 letters and digits, and every symbol of the alphabet turns up', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const secret = generateClientSecret();
      expect(secret).toMatch(/^[A-Za-z0-9]{30}$/);
      for (const c of secret) seen.add(c);
    }
    expect(seen.size).toBe(62);
  });
});
