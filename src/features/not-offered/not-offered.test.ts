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

const PATHS = ['/api/emergency-access/trusted', '/api/emergency-access/granted'];

describe('features not offered yet', () => {
  it('answer the signed-in user an empty list, so the web vault pages open', async () => {
    for (const path of PATHS) {
      const res = await server.request('GET', path, { token: user.accessToken });
      expect(res.status, path).toBe(200);
      expect(res.body, path).toEqual({ object: 'list', data: [], continuationToken: null });
    }
  });

  it('say organization connections cannot be set up, as a server without cloud communication does', async () => {
    const res = await server.request('GET', '/api/organizations/connections/enabled', { token: user.accessToken });
    expect(res.status).toBe(200);
    expect(res.body).toBe(false);
  });

  it('refuse anonymous callers', async () => {
    for (const path of [...PATHS, '/api/organizations/connections/enabled']) expect((await server.request('GET', path)).status, path).toBe(401);
  });
});
