import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../../test/support/accounts.js';
import { orgWithCallers, type Actor } from '../../../test/support/admin.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { OrganizationUserType as Role } from '../../platform/access/roles.js';

const CLIENT = { 'bitwarden-client-version': '2026.9.0' };
const NO_HISTORY = { object: 'billingHistory', invoices: [], transactions: [] };

/** The organization reads of the cloud billing pages, the path after `/organizations/{id}`. */
const ORG_OWNER_READS = ['/billing/history', '/billing', '/billing/vnext/payment-method', '/billing/vnext/address', '/billing/vnext/credit'];
const ACCOUNT_READS = [
  '/accounts/billing/history',
  '/accounts/billing/invoices',
  '/accounts/billing/transactions',
  '/accounts/billing/payment-method',
  '/account/billing/vnext/payment-method',
  '/account/billing/vnext/address',
  '/account/billing/vnext/credit',
];

describe('the cloud billing pages on cloud', () => {
  let server: TestServer;
  let org: string;
  let actors: Record<string, Actor>;
  let userToken: string;

  beforeAll(async () => {
    server = await startTestServer({ env: { DEPLOYMENT: 'cloud' } });
    ({ org, actors } = await orgWithCallers(server, { admin: { type: Role.Admin }, user: { type: Role.User } }));
    userToken = (await createUser(server)).accessToken;
  });
  afterAll(async () => server?.close());

  const get = (path: string, token: string | null) => server.request('GET', `/api${path}`, { ...(token ? { token } : {}), headers: CLIENT });
  const ofOrg = (path: string, who: string) => get(`/organizations/${org}${path}`, actors[who]!.token);

  it("answers an organization's billing history and older billing page with no records", async () => {
    expect((await ofOrg('/billing/history', 'owner')).body).toEqual(NO_HISTORY);
    const billing = await ofOrg('/billing', 'owner');
    expect(billing.status).toBe(200);
    expect(billing.body).toEqual({ object: 'billing', balance: 0, paymentSource: null, invoices: [], transactions: [] });
  });

  it("answers an organization's payment method, address and credit with an empty 200", async () => {
    for (const path of ['/billing/vnext/payment-method', '/billing/vnext/address', '/billing/vnext/credit']) {
      const res = await ofOrg(path, 'owner');
      expect(res.status, path).toBe(200);
      expect(res.text, path).toBe('');
    }
  });

  it('answers the billing reads to owners only, 404 to anyone else', async () => {
    for (const path of ORG_OWNER_READS) {
      for (const who of ['admin', 'user', 'stranger']) expect((await ofOrg(path, who)).status, `${who} ${path}`).toBe(404);
      expect((await get(`/organizations/${org}${path}`, null)).status, path).toBe(401);
    }
  });

  it('answers no warnings to every member, 404 to others', async () => {
    for (const who of ['owner', 'admin', 'user']) {
      const res = await ofOrg('/billing/vnext/warnings', who);
      expect(res.status, who).toBe(200);
      expect(res.body, who).toEqual({ freeTrial: null, inactiveSubscription: null, resellerRenewal: null, taxId: null });
    }
    expect((await ofOrg('/billing/vnext/warnings', 'stranger')).status).toBe(404);
  });

  it("answers the account's billing pages with no records", async () => {
    expect((await get('/accounts/billing/history', userToken)).body).toEqual(NO_HISTORY);
    expect((await get('/accounts/billing/invoices?status=open&startAfter=in_1', userToken)).body).toEqual([]);
    expect((await get('/accounts/billing/transactions', userToken)).body).toEqual([]);
    expect((await get('/accounts/billing/payment-method', userToken)).body).toEqual({ object: 'billingPayment', balance: 0, paymentSource: null });
    for (const path of ['/account/billing/vnext/payment-method', '/account/billing/vnext/address', '/account/billing/vnext/credit']) {
      const res = await get(path, userToken);
      expect(res.status, path).toBe(200);
      expect(res.text, path).toBe('');
    }
    for (const path of ACCOUNT_READS) expect((await get(path, null)).status, path).toBe(401);
  });
});

describe('the cloud billing pages on self-hosted', () => {
  let server: TestServer;
  let org: string;
  let owner: Actor;

  beforeAll(async () => {
    server = await startTestServer({ env: { DEPLOYMENT: 'selfhosted' } });
    ({ org, actors: { owner: owner! } } = (await orgWithCallers(server, {})) as { org: string; actors: { owner: Actor } });
  });
  afterAll(async () => server?.close());

  it('serves none of them: a self-hosted web vault never calls them', async () => {
    for (const path of [...ORG_OWNER_READS, '/billing/vnext/warnings']) {
      expect((await server.request('GET', `/api/organizations/${org}${path}`, { token: owner.token })).status, path).toBe(404);
    }
    for (const path of ACCOUNT_READS) expect((await server.request('GET', `/api${path}`, { token: owner.token })).status, path).toBe(404);
  });
});
