import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actor, type Actor } from '../../../test/support/admin.js';
import { seedOrganization } from '../../../test/support/orgs.js';
import { machineAccountToken, orgApiToken } from '../../../test/support/public-api.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { OrganizationUserType as Role } from '../../platform/access/roles.js';

let server: TestServer;
let org: string;
let owner: Actor;

beforeAll(async () => {
  server = await startTestServer();
  org = await seedOrganization(server);
  owner = await actor(server, org, 'owner@example.com', { type: Role.Owner });
}, 60_000);
afterAll(async () => server.close());

const UNAUTHORIZED = { object: 'error', message: 'Unauthorized.' };

describe('who may call /public', () => {
  it('accepts only organization API key tokens; user and machine-account tokens and no token get 401', async () => {
    const { token } = await orgApiToken(server, org);
    const machine = await machineAccountToken(server, org);
    expect((await server.request('GET', '/api/public/members', { token })).status).toBe(200);
    for (const [who, bearer] of [
      ['no token', undefined],
      ['user', owner.token],
      ['machine account', machine],
      ['garbage', 'not.a.jwt'],
    ] as const) {
      const res = await server.request('GET', '/api/public/members', bearer ? { token: bearer } : {});
      expect(res.status, who).toBe(401);
      expect(res.body, who).toEqual(UNAUTHORIZED);
      const write = await server.request('POST', '/api/public/groups', { ...(bearer ? { token: bearer } : {}), json: { name: 'G' } });
      expect(write.status, who).toBe(401);
    }
    expect(await server.database.db.selectFrom('groups').select('id').where('organization_id', '=', org).execute()).toEqual([]);
  });

  it('refuses an organization token everywhere outside /public', async () => {
    const { token } = await orgApiToken(server, org);
    const paths: [string, string][] = [
      ['GET', `/api/organizations/${org}`],
      ['GET', `/api/organizations/${org}/users`],
      ['GET', `/api/organizations/${org}/groups`],
      ['GET', `/api/organizations/${org}/collections`],
      ['GET', `/api/organizations/${org}/policies`],
      ['GET', `/api/organizations/${org}/events`],
      ['GET', `/api/organizations/${org}/projects`],
      ['GET', `/api/organizations/${org}/secrets`],
      ['GET', '/api/sync'],
      ['GET', '/api/accounts/profile'],
      ['GET', '/api/ciphers'],
      ['POST', `/api/organizations/${org}/users/invite`],
    ];
    for (const [method, path] of paths) {
      const res = await server.request(method, path, { token, ...(method === 'POST' ? { json: [] } : {}) });
      expect(res.status, `${method} ${path}`).toBe(401);
    }
  });

  it('ends the tokens at once when the organization is disabled, loses the API, or rotates its key', async () => {
    const cases: [string, (id: string, apiKey: string) => Promise<void>][] = [
      ['disabled', async (id) => void (await server.database.db.updateTable('organizations').set({ enabled: false }).where('id', '=', id).execute())],
      ['without useApi', async (id) => void (await server.database.db.updateTable('organizations').set({ use_api: false }).where('id', '=', id).execute())],
      ['key rotated', async (id) => void (await server.database.db.updateTable('organization_api_keys').set({ api_key: 'rotated-key-rotated-key-rotated' }).where('organization_id', '=', id).execute())],
    ];
    for (const [name, change] of cases) {
      const id = await seedOrganization(server);
      const { token, apiKey } = await orgApiToken(server, id);
      expect((await server.request('GET', '/api/public/groups', { token })).status, name).toBe(200);
      await change(id, apiKey);
      const res = await server.request('GET', '/api/public/groups', { token });
      expect(res.status, name).toBe(401);
      expect(res.body, name).toEqual(UNAUTHORIZED);
      const relogin = await server.request('POST', '/identity/connect/token', {
        form: { grant_type: 'client_credentials', scope: 'api.organization', client_id: `organization.${id}`, client_secret: apiKey },
      });
      expect(relogin.status, name).toBe(400);
    }
  });

  it('rotating the key through the web route ends the old tokens', async () => {
    const { token } = await orgApiToken(server, org);
    const rotated = await server.request('POST', `/api/organizations/${org}/rotate-api-key`, { token: owner.token, json: { masterPasswordHash: owner.account.masterPasswordHash, type: 0 } });
    expect(rotated.status, rotated.text).toBe(200);
    expect((await server.request('GET', '/api/public/members', { token })).status).toBe(401);
  });
});
