import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { orgWithCallers, type Actor } from '../../../test/support/admin.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { OrganizationUserType as Role } from '../../platform/access/roles.js';

describe("two-step login reads of features not offered yet", () => {
  let server: TestServer;
  let org: string;
  let actors: Record<string, Actor>;

  beforeAll(async () => {
    server = await startTestServer();
    ({ org, actors } = await orgWithCallers(server, { admin: { type: Role.Admin }, user: { type: Role.User }, manager: { type: Role.Manager } }));
  });
  afterAll(async () => server?.close());

  const get = (path: string, who: Actor | null) => server.request('GET', `/api${path}`, who ? { token: who.token } : {});

  it("answers the organization's providers, an empty list, to owners and admins", async () => {
    for (const who of ['owner', 'admin']) {
      const res = await get(`/organizations/${org}/two-factor`, actors[who]!);
      expect(res.status, who).toBe(200);
      expect(res.body, who).toEqual({ object: 'list', data: [], continuationToken: null });
    }
  });

  it('hides them from other members and outsiders (404), as the official server', async () => {
    for (const who of ['user', 'manager', 'stranger']) expect((await get(`/organizations/${org}/two-factor`, actors[who]!)).status, who).toBe(404);
    expect((await get(`/organizations/${org}/two-factor`, null)).status).toBe(401);
  });

  it('refuses organization-wide Duo with a reason to policy managers, 403 to other members, 404 to outsiders', async () => {
    const duo = [
      ['POST', `/organizations/${org}/two-factor/get-duo`, { masterPasswordHash: 'aGFzaA==' }],
      ['PUT', `/organizations/${org}/two-factor/duo`, { clientId: 'DIXXXXXXXXXXXXXXXXXX', clientSecret: 'secret', host: 'api-x.duosecurity.com' }],
      ['DELETE', `/organizations/${org}/two-factor/duo`, { userVerificationToken: 'token' }],
    ] as const;
    for (const [method, path, json] of duo) {
      for (const who of ['owner', 'admin']) {
        const res = await server.request(method, `/api${path}`, { token: actors[who]!.token, json });
        expect(res.status, `${method} ${who}`).toBe(400);
        expect(res.body.validationErrors, `${method} ${who}`).toEqual({ type: ['Duo two-step login is not offered by this server.'] });
      }
      for (const who of ['user', 'manager']) expect((await server.request(method, `/api${path}`, { token: actors[who]!.token, json })).status, `${method} ${who}`).toBe(403);
      expect((await server.request(method, `/api${path}`, { token: actors.stranger!.token, json })).status, `${method} stranger`).toBe(404);
    }
  });
});
