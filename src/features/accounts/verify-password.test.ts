import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, type LoggedInUser } from '../../../test/support/accounts.js';
import { seedMembership, seedOrganization } from '../../../test/support/orgs.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { OrganizationUserStatusType, OrganizationUserType } from '../../platform/access/roles.js';
import { PolicyType } from '../policies/policy-type.js';

let server: TestServer;
let user: LoggedInUser;
beforeAll(async () => {
  server = await startTestServer();
  user = await createUser(server);
});
afterAll(async () => server.close());

const verify = (masterPasswordHash: string | undefined, token: string | undefined = user.accessToken) =>
  server.request('POST', '/api/accounts/verify-password', { ...(token ? { token } : {}), json: masterPasswordHash === undefined ? {} : { masterPasswordHash } });

describe('POST /api/accounts/verify-password', () => {
  it('accepts the master password hash and answers the (empty) master password policy', async () => {
    const res = await verify(user.account.masterPasswordHash);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      object: 'masterPasswordPolicy',
      minComplexity: null,
      minLength: null,
      requireLower: null,
      requireUpper: null,
      requireNumbers: null,
      requireSpecial: null,
      enforceOnLogin: null,
    });
  });

  it("carries the strictest policy of the caller's organizations", async () => {
    const org = await seedOrganization(server);
    await seedMembership(server, { organizationId: org, userId: user.userId, type: OrganizationUserType.User, status: OrganizationUserStatusType.Confirmed, key: '4.aGVsbG8=' });
    const now = new Date().toISOString();
    await server.database.db
      .insertInto('policies')
      .values({ id: randomUUID(), organization_id: org, type: PolicyType.MasterPassword, enabled: true, data: JSON.stringify({ minLength: 14, requireUpper: true }), creation_date: now, revision_date: now })
      .execute();
    const res = await verify(user.account.masterPasswordHash);
    expect(res.body).toMatchObject({ minLength: 14, requireUpper: true, requireLower: null });
  });

  it('refuses a wrong or missing hash with a 400 naming masterPasswordHash, and anonymous callers', async () => {
    for (const hash of ['d3Jvbmc=', undefined]) {
      const res = await verify(hash);
      expect(res.status).toBe(400);
      expect(res.body.validationErrors).toEqual({ masterPasswordHash: ['Invalid password.'] });
    }
    expect((await verify(user.account.masterPasswordHash, '')).status).toBe(401);
  });
});

describe('every command that asks for the master password', () => {
  it('refuses a wrong hash with the same 400 naming masterPasswordHash, changing nothing', async () => {
    const wrong = 'd3Jvbmcgd3Jvbmcgd3Jvbmc=';
    const commands: [string, string, Record<string, unknown>][] = [
      ['POST', '/api/accounts/password', { newMasterPasswordHash: 'bmV3', key: '2.AAAA|AAAA|AAAA' }],
      ['POST', '/api/accounts/security-stamp', {}],
      ['POST', '/api/accounts/api-key', {}],
      ['POST', '/api/accounts/rotate-api-key', {}],
      ['PUT', '/api/accounts/verify-devices', { verifyDevices: false }],
      ['DELETE', '/api/accounts', {}],
      ['POST', '/api/accounts/email-token', { newEmail: 'elsewhere@example.com' }],
      ['POST', '/api/accounts/email', { newEmail: 'elsewhere@example.com', newMasterPasswordHash: 'bmV3', token: '123456', key: '2.AAAA|AAAA|AAAA' }],
    ];
    for (const [method, path, json] of commands) {
      const res = await server.request(method, path, { token: user.accessToken, json: { ...json, masterPasswordHash: wrong } });
      expect([res.status, res.body.validationErrors], `${method} ${path}`).toEqual([400, { masterPasswordHash: ['Invalid password.'] }]);
    }
    expect((await server.request('GET', '/api/accounts/profile', { token: user.accessToken })).status).toBe(200);
  });
});
