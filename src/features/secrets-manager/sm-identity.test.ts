import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENC, type Actor } from '../../../test/support/admin.js';
import { decryptText, smAccessTokenKey, type SymmetricKey } from '../../../test/support/bw-crypto.js';
import { testClock } from '../../../test/support/clock.js';
import { createAccessToken, createMachineAccount, machineLogin, machineLoginForm, READ, seedPolicy, smOrg } from '../../../test/support/sm.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { standingAccessToken } from './sm-identity.js';

let server: TestServer;
const clock = testClock();
let orgId: string;
let orgKey: SymmetricKey;
let owner: Actor;
let machineId: string;
let projectId: string;

function claimsOf(jwt: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString()) as Record<string, unknown>;
}

function headerOf(jwt: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(jwt.split('.')[0] ?? '', 'base64url').toString()) as Record<string, unknown>;
}

async function login(form: Record<string, string>) {
  return server.request('POST', '/identity/connect/token', { form });
}

/** A machine account of the organization, granted read on the test project, with a token. */
async function grantedMachine(opts: { expireAt?: string } = {}) {
  const id = await createMachineAccount(server, owner.token, orgId);
  await seedPolicy(server, { machineAccount: id }, { project: projectId }, READ, { date: clock.now().toISOString() });
  const token = await createAccessToken(server, owner.token, id, orgKey, opts);
  const bearer = await machineLogin(server, token.accessToken);
  return { id, token, bearer };
}

const readProject = (bearer: string) => server.request('GET', `/api/projects/${projectId}`, { token: bearer });

beforeAll(async () => {
  server = await startTestServer({ clock });
  ({ orgId, owner, orgKey } = await smOrg(server));
  machineId = await createMachineAccount(server, owner.token, orgId);
  projectId = (await server.request('POST', `/api/organizations/${orgId}/projects`, { token: owner.token, json: { name: ENC } })).body.id as string;
});
afterAll(async () => server.close());

describe('machine account login', () => {
  it('answers the SDK response: a one-hour bearer token, scope api.secrets and the encrypted payload, no refresh token or Kdf', async () => {
    const token = await createAccessToken(server, owner.token, machineId, orgKey);
    const res = await login(machineLoginForm(token.accessToken));
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['access_token', 'encrypted_payload', 'expires_in', 'scope', 'token_type']);
    expect(res.body).toMatchObject({ expires_in: 3600, token_type: 'Bearer', scope: 'api.secrets' });
    const secret = Buffer.from(token.accessToken.split(':')[1] ?? '', 'base64');
    expect(JSON.parse(decryptText(res.body.encrypted_payload as string, smAccessTokenKey(secret)))).toEqual({ encryptionKey: orgKey.raw.toString('base64') });
  });

  it('signs a JWT with the claims the SDK requires: sub, type ServiceAccount, organization, client_id, scope', async () => {
    const token = await createAccessToken(server, owner.token, machineId, orgKey);
    const jwt = await machineLogin(server, token.accessToken);
    const claims = claimsOf(jwt);
    expect(claims).toMatchObject({ sub: machineId, type: 'ServiceAccount', organization: orgId, client_id: token.id, scope: ['api.secrets'] });
    expect(Number(claims.exp) - Number(claims.iat)).toBe(3600);
    expect(headerOf(jwt).typ).toBe('at+jwt');
  });

  it('accepts the apikey.<id> form of the client id and an upper-case id', async () => {
    const token = await createAccessToken(server, owner.token, machineId, orgKey);
    const form = machineLoginForm(token.accessToken);
    expect((await login({ ...form, client_id: `apikey.${token.id}` })).status).toBe(200);
    expect((await login({ ...form, client_id: token.id.toUpperCase() })).status).toBe(200);
  });

  it('refuses a wrong secret, an unknown id and an id that is not a guid with invalid_client', async () => {
    const token = await createAccessToken(server, owner.token, machineId, orgKey);
    const form = machineLoginForm(token.accessToken);
    const cases: Record<string, string>[] = [
      { client_secret: `${form.client_secret}x` },
      { client_secret: '' },
      { client_id: randomUUID() },
      { client_id: 'not-a-guid' },
      { client_id: 'foo' },
      { client_id: 'apikey.zzz' },
      { client_id: 'web' },
    ];
    for (const bad of cases) {
      const res = await login({ ...form, ...bad });
      expect(res.status, JSON.stringify(bad)).toBe(400);
      expect(res.body.error).toBe('invalid_client');
    }
  });

  it('refuses any scope other than api.secrets with invalid_scope', async () => {
    const token = await createAccessToken(server, owner.token, machineId, orgKey);
    const res = await login({ ...machineLoginForm(token.accessToken), scope: 'api' });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_scope');
  });

  it('lets a machine token call a Secrets Manager route it is granted, and no user route', async () => {
    const { bearer } = await grantedMachine();
    expect((await readProject(bearer)).status).toBe(200);
    expect((await server.request('GET', '/api/accounts/profile', { token: bearer })).status).toBe(401);
  });
});

describe('refusing tokens that no longer stand, at login and at once on API routes', () => {
  it('a revoked token', async () => {
    const { id, token, bearer } = await grantedMachine();
    expect((await readProject(bearer)).status).toBe(200);
    await server.request('POST', `/api/service-accounts/${id}/access-tokens/revoke`, { token: owner.token, json: { ids: [token.id] } });
    expect((await login(machineLoginForm(token.accessToken))).body.error).toBe('invalid_client');
    expect((await readProject(bearer)).status).toBe(401);
  });

  it('a token past its expiry (the clock moves; the bearer token itself is still within its hour)', async () => {
    const { token, bearer } = await grantedMachine({ expireAt: new Date(clock.now().getTime() + 10 * 60_000).toISOString() });
    expect((await readProject(bearer)).status).toBe(200);
    clock.advance(11 * 60_000);
    expect((await login(machineLoginForm(token.accessToken))).body.error).toBe('invalid_client');
    expect((await readProject(bearer)).status).toBe(401);
  });

  it('a token whose expiry is set in the past in the database', async () => {
    const { token, bearer } = await grantedMachine();
    await server.database.db.updateTable('access_tokens').set({ expire_at: new Date(clock.now().getTime() - 1000).toISOString() }).where('id', '=', token.id).execute();
    expect((await login(machineLoginForm(token.accessToken))).body.error).toBe('invalid_client');
    expect((await readProject(bearer)).status).toBe(401);
  });

  it('a token of a deleted machine account', async () => {
    const { id, token, bearer } = await grantedMachine();
    expect((await server.request('POST', '/api/service-accounts/delete', { token: owner.token, json: [id] })).status).toBe(200);
    expect(await server.database.db.selectFrom('access_tokens').select('id').where('id', '=', token.id).execute()).toEqual([]);
    expect((await login(machineLoginForm(token.accessToken))).body.error).toBe('invalid_client');
    expect((await readProject(bearer)).status).toBe(401);
  });

  it('a token of an organization that is disabled or loses Secrets Manager', async () => {
    const { token, bearer } = await grantedMachine();
    for (const change of [{ enabled: false }, { use_secrets_manager: false }]) {
      await server.database.db.updateTable('organizations').set(change).where('id', '=', orgId).execute();
      expect((await login(machineLoginForm(token.accessToken))).body.error, JSON.stringify(change)).toBe('invalid_client');
      expect((await readProject(bearer)).status).toBe(401);
      await server.database.db.updateTable('organizations').set({ enabled: true, use_secrets_manager: true }).where('id', '=', orgId).execute();
      expect((await readProject(bearer)).status).toBe(200);
    }
  });
});

describe('the per-request token check', () => {
  it('reads neither the secret hash nor the encrypted payload, which only a login needs', async () => {
    const token = await createAccessToken(server, owner.token, machineId, orgKey);
    const row = await standingAccessToken(server.database.db, token.id, clock.now().toISOString());
    expect(row).not.toBeNull();
    expect(Object.keys(row ?? {})).not.toContain('client_secret_hash');
    expect(Object.keys(row ?? {})).not.toContain('encrypted_payload');
  });
});

describe('without the Secrets Manager edition', () => {
  it('refuses scope api.secrets with invalid_scope and answers 404 on the routes', async () => {
    const off = await startTestServer({ env: { SECRETS_MANAGER: 'false' } });
    try {
      const res = await off.request('POST', '/identity/connect/token', { form: { grant_type: 'client_credentials', scope: 'api.secrets', client_id: randomUUID(), client_secret: 'x' } });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_scope');
      expect(String(res.body.error_description)).toMatch(/Secrets Manager/);
      expect((await off.request('GET', `/api/projects/${randomUUID()}`)).status).toBe(404);
      // A client id that is no access token's is a wrong client, not a refused edition.
      for (const clientId of ['foo', 'apikey.foo', 'organization.foo']) {
        const unknown = await off.request('POST', '/identity/connect/token', { form: { grant_type: 'client_credentials', scope: 'api.secrets', client_id: clientId, client_secret: 'x' } });
        expect(unknown.body.error, clientId).toBe('invalid_client');
      }
    } finally {
      await off.close();
    }
  });
});
