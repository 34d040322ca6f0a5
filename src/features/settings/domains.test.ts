import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, type LoggedInUser } from '../../../test/support/accounts.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';

let server: TestServer;
let user: LoggedInUser;
beforeAll(async () => {
  server = await startTestServer();
  user = await createUser(server);
});
afterAll(async () => server.close());

describe('/api/settings/domains', () => {
  it('starts empty', async () => {
    const res = await server.request('GET', '/api/settings/domains?excluded=false', { token: user.accessToken });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ object: 'domains', equivalentDomains: null, globalEquivalentDomains: [] });
  });

  it('replaces the groups, which sync then carries and the revision date announces', async () => {
    const before = (await server.request('GET', '/api/accounts/revision-date', { token: user.accessToken })).body as number;
    await new Promise((resolve) => setTimeout(resolve, 5));
    const res = await server.request('PUT', '/api/settings/domains', {
      token: user.accessToken,
      json: { equivalentDomains: [['Example.com', 'example.net', 'example.com'], ['lonely.org'], []], excludedGlobalEquivalentDomains: [2, 2] },
    });
    expect(res.status).toBe(200);
    expect(res.body.equivalentDomains).toEqual([['example.com', 'example.net']]);
    const sync = await server.request('GET', '/api/sync', { token: user.accessToken });
    expect(sync.body.domains.equivalentDomains).toEqual([['example.com', 'example.net']]);
    const after = (await server.request('GET', '/api/accounts/revision-date', { token: user.accessToken })).body as number;
    expect(after).toBeGreaterThan(before);
    const row = await server.database.db.selectFrom('users').select('excluded_global_equivalent_domains').where('id', '=', user.userId).executeTakeFirstOrThrow();
    expect(row.excluded_global_equivalent_domains).toBe('[2]');

    const cleared = await server.request('POST', '/api/settings/domains', { token: user.accessToken, json: { equivalentDomains: null } });
    expect(cleared.body.equivalentDomains).toBeNull();
  });

  it('refuses bad input with a 400 naming the field, changing nothing', async () => {
    await server.request('PUT', '/api/settings/domains', { token: user.accessToken, json: { equivalentDomains: [['a.com', 'b.com']] } });
    const bad = await server.request('PUT', '/api/settings/domains', { token: user.accessToken, json: { equivalentDomains: [['a.com', 42]] } });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body.validationErrors)).toMatch(/equivalentDomains/);
    const now = await server.request('GET', '/api/settings/domains', { token: user.accessToken });
    expect(now.body.equivalentDomains).toEqual([['a.com', 'b.com']]);
  });

  it('needs a signed-in user', async () => {
    expect((await server.request('GET', '/api/settings/domains')).status).toBe(401);
    expect((await server.request('PUT', '/api/settings/domains', { json: { equivalentDomains: null } })).status).toBe(401);
  });
});
