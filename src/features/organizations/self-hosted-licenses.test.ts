import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetch, FormData } from 'undici';
import { createUser, type LoggedInUser } from '../../../test/support/accounts.js';
import { actor, seedGroup } from '../../../test/support/admin.js';
import { foundingKeys } from '../../../test/support/org-founding.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { systemClock } from '../../shared/clock.js';
import { OrganizationUserType as Role } from '../../platform/access/roles.js';
import { createLicenseIssuer, licenseTerms } from './licenses.js';
import { PlanType } from './plans.js';

const DAY = 86_400_000;

describe('self-hosted organization licenses (SelfHostedOrganizationLicensesController)', () => {
  let s: TestServer;
  let owner: LoggedInUser;
  let orgId: string;
  let licenseKey: string;

  async function issue(terms: { id: string; licenseKey: string; planType?: PlanType; seats?: number | null; expires?: number; features?: { useGroups?: boolean } }): Promise<string> {
    const license = await createLicenseIssuer({ db: s.database.db, clock: systemClock }).issue(
      licenseTerms({
        id: terms.id,
        licenseKey: terms.licenseKey,
        name: 'Licensed',
        billingEmail: 'billing@example.com',
        planType: terms.planType ?? PlanType.TeamsAnnually,
        seats: terms.seats === undefined ? 5 : terms.seats,
        expires: new Date(Date.now() + (terms.expires ?? 30 * DAY)).toISOString(),
        ...(terms.features ? { features: terms.features } : {}),
      }),
    );
    return JSON.stringify(license);
  }

  /** The web vault's upload: multipart with the file in `license`. */
  async function post(path: string, token: string, license: string | null, extra: Record<string, string> = {}) {
    const form = new FormData();
    if (license !== null) form.append('license', new Blob([license], { type: 'application/json' }), 'bitwarden_organization_license.json');
    for (const [k, v] of Object.entries(extra)) form.append(k, v);
    const res = await fetch(new URL(`/api${path}`, s.baseUrl), { method: 'POST', body: form, headers: { authorization: `Bearer ${token}` } });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : undefined };
  }
  const org = () => s.database.db.selectFrom('organizations').selectAll().where('id', '=', orgId).executeTakeFirstOrThrow();

  beforeAll(async () => {
    s = await startTestServer({ env: { DEPLOYMENT: 'selfhosted' } });
    owner = await createUser(s);
    orgId = randomUUID();
    licenseKey = randomUUID();
    const { fields } = foundingKeys(owner);
    const res = await post('/organizations/licenses/self-hosted', owner.accessToken, await issue({ id: orgId, licenseKey }), { key: fields.key, collectionName: fields.collectionName });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'organization', id: orgId, selfHost: true, seats: 5, planType: PlanType.TeamsAnnually });
  }, 120_000);
  afterAll(async () => s?.close());

  it("replaces the license: seats, plan features and expiry become the renewed file's", async () => {
    const expires = 400 * DAY;
    const res = await post(`/organizations/licenses/self-hosted/${orgId}`, owner.accessToken, await issue({ id: orgId, licenseKey, planType: PlanType.EnterpriseAnnually, seats: 50, expires }));
    expect(res.status).toBe(200);
    const row = await org();
    expect(row).toMatchObject({ seats: 50, plan_type: PlanType.EnterpriseAnnually, license_key: licenseKey });
    expect(Boolean(row.use_policies)).toBe(true);
    expect(Boolean(row.use_sso)).toBe(true);
    const sub = await s.request('GET', `/api/organizations/${orgId}/subscription`, { token: owner.accessToken });
    expect(sub.status).toBe(200);
    expect(sub.body).toMatchObject({ seats: 50, planType: PlanType.EnterpriseAnnually, useSso: true, expiration: row.expiration_date });
    expect(Date.parse(sub.body.expiration as string)).toBeGreaterThan(Date.now() + 399 * DAY);
  });

  it('refuses a license of another organization, a tampered one and an expired one, changing nothing', async () => {
    const before = await org();
    const other = await post(`/organizations/licenses/self-hosted/${orgId}`, owner.accessToken, await issue({ id: randomUUID(), licenseKey: randomUUID() }));
    expect(other.status).toBe(400);
    expect(other.body?.validationErrors).toEqual({ license: ['The license was issued for another organization.'] });

    const tampered = JSON.parse(await issue({ id: orgId, licenseKey, seats: 10 })) as Record<string, unknown>;
    tampered.seats = 1000;
    const bad = await post(`/organizations/licenses/self-hosted/${orgId}`, owner.accessToken, JSON.stringify(tampered));
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body?.validationErrors)).toMatch(/signature is not valid/);

    const expired = await post(`/organizations/licenses/self-hosted/${orgId}`, owner.accessToken, await issue({ id: orgId, licenseKey, expires: -DAY }));
    expect(expired.status).toBe(400);
    expect(JSON.stringify(expired.body?.validationErrors)).toMatch(/expired/);

    const noFile = await post(`/organizations/licenses/self-hosted/${orgId}`, owner.accessToken, null);
    expect(noFile.status).toBe(400);
    expect(JSON.stringify(noFile.body)).toMatch(/license/);
    expect(await org()).toEqual(before);
  });

  it('refuses a license the organization does not fit, or whose key another organization holds', async () => {
    const before = await org();
    await actor(s, orgId, 'second@example.com', { type: Role.User });
    const tooSmall = await post(`/organizations/licenses/self-hosted/${orgId}`, owner.accessToken, await issue({ id: orgId, licenseKey, seats: 1 }));
    expect(tooSmall.status).toBe(400);
    expect(JSON.stringify(tooSmall.body?.validationErrors)).toMatch(/2 seats filled/);

    const group = await seedGroup(s, orgId);
    const noGroups = await post(`/organizations/licenses/self-hosted/${orgId}`, owner.accessToken, await issue({ id: orgId, licenseKey, features: { useGroups: false } }));
    expect(noGroups.status).toBe(400);
    expect(JSON.stringify(noGroups.body?.validationErrors)).toMatch(/groups/);
    await s.database.db.deleteFrom('groups').where('id', '=', group).execute();

    const taken = randomUUID();
    await s.database.db.insertInto('organizations').values({ ...before, id: randomUUID(), license_key: taken }).execute();
    const inUse = await post(`/organizations/licenses/self-hosted/${orgId}`, owner.accessToken, await issue({ id: orgId, licenseKey: taken }));
    expect(inUse.status).toBe(400);
    expect(JSON.stringify(inUse.body?.validationErrors)).toMatch(/already in use/);
    expect(await org()).toEqual(before);
  });

  it('hides update and sync from everyone but an owner (404)', async () => {
    const admin = await actor(s, orgId, 'admin@example.com', { type: Role.Admin });
    const stranger = await createUser(s);
    const file = await issue({ id: orgId, licenseKey });
    for (const token of [admin.token, stranger.accessToken]) {
      expect((await post(`/organizations/licenses/self-hosted/${orgId}`, token, file)).status).toBe(404);
      expect((await s.request('POST', `/api/organizations/licenses/self-hosted/${orgId}/sync`, { token })).status).toBe(404);
    }
  });

  it('answers sync as the official server without a billing-sync connection: 404 naming why', async () => {
    const res = await s.request('POST', `/api/organizations/licenses/self-hosted/${orgId}/sync`, { token: owner.accessToken });
    expect(res.status).toBe(404);
    expect(res.body.message).toMatch(/^Unable to get Cloud Billing Sync connection/);
  });
});

describe('self-hosted license routes on cloud', () => {
  it('refuses every caller before any organization rule, as the official [SelfHosted] filter', async () => {
    const s = await startTestServer({ env: { DEPLOYMENT: 'cloud' } });
    try {
      const user = await createUser(s);
      const id = randomUUID();
      for (const path of [`/api/organizations/licenses/self-hosted/${id}`, `/api/organizations/licenses/self-hosted/${id}/sync`, '/api/organizations/licenses/self-hosted']) {
        const res = await s.request('POST', path, { token: user.accessToken, json: { license: '{}', key: 'x' } });
        expect(res.status, path).toBe(400);
        expect(res.body.message, path).toBe('Only allowed when self hosted.');
      }
    } finally {
      await s.close();
    }
  }, 120_000);
});
