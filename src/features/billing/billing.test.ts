import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../../test/support/accounts.js';
import { actor, orgWithCallers, type Actor } from '../../../test/support/admin.js';
import { seedMembership } from '../../../test/support/orgs.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { OrganizationUserStatusType as Status, OrganizationUserType as Role } from '../../platform/access/roles.js';
import { PlanType, ProductTierType } from '../organizations/plans.js';

const CLIENT = { 'bitwarden-client-version': '2024.10.0' };

describe('billing reads on cloud', () => {
  let server: TestServer;
  let org: string;
  let actors: Record<string, Actor>;

  beforeAll(async () => {
    server = await startTestServer({ env: { DEPLOYMENT: 'cloud' } });
    ({ org, actors } = await orgWithCallers(server, { user: { type: Role.User }, admin: { type: Role.Admin } }));
    // Seats: owner, user, admin, an invited member; a revoked one takes none.
    await seedMembership(server, { organizationId: org, email: 'invited@example.com', status: Status.Invited });
    await seedMembership(server, { organizationId: org, email: 'revoked@example.com', status: Status.Revoked });
    await server.database.db.updateTable('organizations').set({ storage_bytes: 3 * 1024 * 1024 }).where('id', '=', org).execute();
  });
  afterAll(async () => server?.close());

  const get = (path: string, who: Actor | null) => server.request('GET', `/api${path}`, { ...(who ? { token: who.token } : {}), headers: CLIENT });

  it('answers billing/metadata, with the seats in use, to every member', async () => {
    const res = await get(`/organizations/${org}/billing/metadata`, actors.user!);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      isEligibleForSelfHost: false,
      isManaged: false,
      isOnSecretsManagerStandalone: false,
      isSubscriptionUnpaid: false,
      hasSubscription: false,
      hasOpenInvoice: false,
      isSubscriptionCanceled: false,
      invoiceDueDate: null,
      invoiceCreatedDate: null,
      subPeriodEndDate: null,
      isPaymentMethodConfigured: false,
      organizationOccupiedSeats: 4,
    });
  });

  it('answers both vnext paths in the same shape, on cloud too', async () => {
    for (const path of ['vnext/metadata', 'vnext/self-host/metadata']) {
      const res = await get(`/organizations/${org}/billing/${path}`, actors.admin!);
      expect(res.status, path).toBe(200);
      expect(res.body, path).toEqual({ isOnSecretsManagerStandalone: false, organizationOccupiedSeats: 4, hasPaymentMethod: true });
    }
  });

  it('hides the metadata from non-members and anonymous callers', async () => {
    for (const path of ['metadata', 'vnext/metadata', 'vnext/self-host/metadata']) {
      expect((await get(`/organizations/${org}/billing/${path}`, actors.stranger!)).status, path).toBe(404);
      expect((await get(`/organizations/${org}/billing/${path}`, null)).status, path).toBe(401);
    }
    // The access rule runs first: an id that is no GUID names no organization of the caller's.
    expect((await get('/organizations/not-a-guid/billing/metadata', actors.owner!)).status).toBe(404);
  });

  it('lists the offered plans to anyone, in the PlanResponseModel shape', async () => {
    const res = await get('/plans', null);
    expect(res.status).toBe(200);
    expect(res.body.object).toBe('list');
    const plans = res.body.data as Record<string, unknown>[];
    expect(plans.map((p) => p.type)).toEqual([
      PlanType.Free,
      PlanType.FamiliesAnnually2025,
      PlanType.TeamsStarter,
      PlanType.TeamsMonthly,
      PlanType.TeamsAnnually,
      PlanType.EnterpriseMonthly,
      PlanType.EnterpriseAnnually,
    ]);
    const free = plans[0]!;
    expect(free).toMatchObject({ object: 'plan', productTier: ProductTierType.Free, product: ProductTierType.Free, nameLocalizationKey: 'planNameFree', disabled: false, legacyYear: null });
    expect(free.passwordManager).toMatchObject({ baseSeats: 2, maxSeats: 2, maxCollections: 2, basePrice: 0, hasAdditionalSeatsOption: false });
    const families = plans[1]!;
    expect(families).toMatchObject({ productTier: ProductTierType.Families, isAnnual: true, hasSelfHost: true, usersGetPremium: true, secretsManager: null });
    expect(families.passwordManager).toMatchObject({ baseSeats: 6, maxSeats: 6, baseStorageGb: 1 });
    const enterprise = plans[6]!;
    expect(enterprise).toMatchObject({ productTier: ProductTierType.Enterprise, isAnnual: true, hasSso: true, hasPolicies: true, hasResetPassword: true, canBeUsedByBusiness: true });
    expect(enterprise.passwordManager).toMatchObject({ hasAdditionalSeatsOption: true, allowSeatAutoscale: true, maxSeats: null, seatPrice: 0 });
    expect(enterprise.secretsManager).toMatchObject({ maxProjects: 0, hasAdditionalSeatsOption: true });
    expect(plans[3]).toMatchObject({ productTier: ProductTierType.Teams, isAnnual: false, nameLocalizationKey: 'planNameTeams' });
  });

  it("answers the organization's subscription to its owner only", async () => {
    const res = await get(`/organizations/${org}/subscription`, actors.owner!);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      object: 'organizationSubscription',
      id: org,
      planType: PlanType.EnterpriseAnnually,
      billingEmail: 'billing@example.com',
      storageName: '3 MB',
      storageGb: 0,
      subscription: null,
      upcomingInvoice: null,
      expiration: null,
      expirationWithoutGracePeriod: null,
    });
    expect(res.body.plan).toMatchObject({ type: PlanType.EnterpriseAnnually });
    for (const who of ['admin', 'user', 'stranger']) expect((await get(`/organizations/${org}/subscription`, actors[who]!)).status, who).toBe(404);
  });

  it("answers the caller's subscription: storage and quota, no premium", async () => {
    const user = await createUser(server);
    const res = await server.request('GET', '/api/accounts/subscription', { token: user.accessToken });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      object: 'subscription',
      storageName: null,
      storageGb: 0,
      maxStorageGb: expect.any(Number),
      subscription: null,
      upcomingInvoice: null,
      customerDiscount: null,
      license: null,
      expiration: null,
      usingInAppPurchase: false,
    });
    expect((await get('/accounts/subscription', null)).status).toBe(401);
  });
});

describe('billing reads on self-hosted', () => {
  let server: TestServer;
  let org: string;
  let owner: Actor;

  beforeAll(async () => {
    server = await startTestServer({ env: { DEPLOYMENT: 'selfhosted' } });
    ({ org, actors: { owner: owner! } } = await orgWithCallers(server, {}) as { org: string; actors: { owner: Actor } });
    await server.database.db.updateTable('organizations').set({ self_host: true, seats: 25, max_storage_gb: 5, expiration_date: '2031-01-02T03:04:05.000Z' }).where('id', '=', org).execute();
  });
  afterAll(async () => server?.close());

  it('lists no plans, as the official self-hosted server', async () => {
    const res = await server.request('GET', '/api/plans');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ object: 'list', data: [], continuationToken: null });
  });

  it("shows the license's seats, storage and expiry on the subscription page", async () => {
    const res = await server.request('GET', `/api/organizations/${org}/subscription`, { token: owner.token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      object: 'organizationSubscription',
      seats: 25,
      maxStorageGb: 5,
      selfHost: true,
      expiration: '2031-01-02T03:04:05.000Z',
      expirationWithoutGracePeriod: '2031-01-02T03:04:05.000Z',
    });
  });

  it('answers the self-host metadata to a member', async () => {
    const member = await actor(server, org, 'member@example.com', { type: Role.User });
    const res = await server.request('GET', `/api/organizations/${org}/billing/vnext/self-host/metadata`, { token: member.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ isOnSecretsManagerStandalone: false, organizationOccupiedSeats: 2, hasPaymentMethod: true });
  });
});
