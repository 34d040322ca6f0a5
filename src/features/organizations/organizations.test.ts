import { randomUUID } from 'node:crypto';
import { decodeJwt } from 'jose';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { seedAccount, type LoggedInUser } from '../../../test/support/accounts.js';
import { decryptText, rsaDecryptEncString } from '../../../test/support/bw-crypto.js';
import { createOrganization, foundingKeys } from '../../../test/support/org-founding.js';
import { seedCollection } from '../../../test/support/admin.js';
import { seedOrgItem } from '../../../test/support/org-items.js';
import { seedMembership, seedOrganization } from '../../../test/support/orgs.js';
import { cipherBody } from '../../../test/support/vault.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { organizationPrincipalResolver } from './org-api-key.js';
import { PlanType } from './plans.js';
import { OrganizationUserStatusType, OrganizationUserType } from '../../platform/access/roles.js';

// Most tests register several accounts; key derivation makes that slow on a loaded machine.
vi.setConfig({ testTimeout: 120_000 });

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const cloud = () => startTestServer({ env: { DEPLOYMENT: 'cloud' } });

async function eventsOf(s: TestServer, type: number) {
  return s.database.db.selectFrom('events').selectAll().where('type', '=', type).orderBy('seq').execute();
}

/** Custom permissions are written after seeding: seedMembership's own permissions type is unusable (it intersects with the text column). */
async function setPermissions(s: TestServer, membershipId: string, permissions: Record<string, boolean>) {
  await s.database.db.updateTable('organization_users').set({ permissions: JSON.stringify(permissions) }).where('id', '=', membershipId).execute();
}

async function member(s: TestServer, organizationId: string, opts: { type?: OrganizationUserType; status?: OrganizationUserStatusType; permissions?: Record<string, boolean> } = {}) {
  const user = await seedAccount(s);
  const { permissions, ...rest } = opts;
  const membershipId = await seedMembership(s, { organizationId, userId: user.userId, ...rest });
  if (permissions) await setPermissions(s, membershipId, permissions);
  return { ...user, membershipId };
}

describe('creating an organization (cloud)', () => {
  it('makes the creator its Confirmed Owner holding the key, with the first collection', async () => {
    server = await cloud();
    const owner = await seedAccount(server);
    const { orgKey, fields } = foundingKeys(owner);
    const res = await server.request('POST', '/api/organizations', {
      token: owner.accessToken,
      json: { name: 'Acme', businessName: 'Acme Ltd', billingEmail: 'Billing@Acme.test', planType: PlanType.TeamsAnnually, ...fields, paymentToken: 'tok', additionalSeats: 5 },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      object: 'organization',
      name: 'Acme',
      businessName: 'Acme Ltd',
      billingEmail: 'billing@acme.test',
      planType: 18,
      seats: 5,
      useGroups: true,
      usePolicies: false,
      selfHost: false,
      hasPublicAndPrivateKeys: true,
      plan: { object: 'plan', type: 18, productTier: 2 },
    });
    const id = res.body.id as string;
    const db = server.database.db;
    const membership = await db.selectFrom('organization_users').selectAll().where('organization_id', '=', id).executeTakeFirstOrThrow();
    expect(membership).toMatchObject({ user_id: owner.userId, status: 2, type: 0, key: fields.key });
    expect(rsaDecryptEncString(membership.key ?? '', owner.account.privateKeyDer).equals(orgKey.raw)).toBe(true);
    const collection = await db.selectFrom('collections').selectAll().where('organization_id', '=', id).executeTakeFirstOrThrow();
    expect(decryptText(collection.name, orgKey)).toBe('Default collection');
    const grant = await db.selectFrom('collection_users').selectAll().where('collection_id', '=', collection.id).executeTakeFirstOrThrow();
    expect(grant).toMatchObject({ organization_user_id: membership.id });
    expect(Boolean(grant.manage)).toBe(true);

    const profile = await server.request('GET', '/api/accounts/profile', { token: owner.accessToken });
    expect(profile.body.organizations).toHaveLength(1);
    expect(profile.body.organizations[0]).toMatchObject({
      object: 'profileOrganization',
      id,
      name: 'Acme',
      key: fields.key,
      type: 0,
      status: 2,
      enabled: true,
      organizationUserId: membership.id,
      userId: owner.userId,
      productTierType: 2,
      useGroups: true,
      seats: 5,
      maxCollections: null,
      hasPublicAndPrivateKeys: true,
      permissions: null,
      selfHost: false,
    });
    const listed = await server.request('GET', '/api/organizations', { token: owner.accessToken });
    expect(listed.body).toMatchObject({ object: 'list', continuationToken: null, data: [{ id, object: 'profileOrganization' }] });
  });

  it('takes seats, collection limits and features from the plan', async () => {
    server = await cloud();
    const cases: [PlanType, Record<string, unknown>][] = [
      [PlanType.Free, { seats: 2, maxCollections: 2, useGroups: false, useTotp: false, maxStorageGb: null, useSso: true }],
      [PlanType.FamiliesAnnually2019, { seats: 6, maxCollections: null, useTotp: true, useGroups: false, usersGetPremium: true }],
      // SSO is free on Strongroom: every plan answers useSso true.
      [PlanType.TeamsMonthly2019, { seats: null, useGroups: true, usePolicies: false, useSso: true }],
      [PlanType.TeamsAnnually2019, { seats: null, useGroups: true, useEvents: true }],
      [PlanType.EnterpriseMonthly2019, { seats: null, usePolicies: true, useSso: true, useResetPassword: true }],
      [PlanType.EnterpriseAnnually2019, { usePolicies: true, useCustomPermissions: true, maxStorageGb: 1 }],
      [PlanType.TeamsStarter, { seats: 10, useGroups: true }],
      [PlanType.FamiliesAnnually, { seats: 6, plan: { productTier: 1 } }],
    ];
    // One free organization per administrator; the other plans allow many.
    const owner = await seedAccount(server);
    for (const [planType, expected] of cases) {
      const { id } = await createOrganization(server, owner, { planType });
      const res = await server.request('GET', `/api/organizations/${id}`, { token: owner.accessToken });
      expect(res.body, PlanType[planType]).toMatchObject({ planType, ...expected });
    }
  });

  it('refuses unknown plans and bad input with a 400 naming the field, writing nothing', async () => {
    server = await cloud();
    const owner = await seedAccount(server);
    const { fields } = foundingKeys(owner);
    const body = { name: 'Acme', billingEmail: 'b@acme.test', planType: 0, ...fields };
    const cases: [unknown, string][] = [
      [{ ...body, planType: 99 }, 'planType'],
      [{ ...body, planType: '2' }, 'planType'],
      [{ ...body, name: undefined }, 'name'],
      [{ ...body, name: 'x'.repeat(51) }, 'name'],
      [{ ...body, billingEmail: 'not-an-email' }, 'billingEmail'],
      [{ ...body, key: 'plain text' }, 'key'],
      [{ ...body, collectionName: 'plain text' }, 'collectionName'],
      [{ ...body, keys: { publicKey: 'AAAA', encryptedPrivateKey: 'plain' } }, 'keys.encryptedPrivateKey'],
      [{ ...body, additionalSeats: 3 }, 'additionalSeats'],
      [{ ...body, additionalStorageGb: 1 }, 'additionalStorageGb'],
      [{ ...body, planType: 20, additionalStorageGb: 100 }, 'additionalStorageGb'],
    ];
    for (const [json, field] of cases) {
      const res = await server.request('POST', '/api/organizations', { token: owner.accessToken, json });
      expect(res.status, field).toBe(400);
      expect(Object.keys(res.body.validationErrors ?? {}), JSON.stringify(res.body)).toContain(field);
    }
    expect(await server.database.db.selectFrom('organizations').selectAll().execute()).toEqual([]);
    expect((await server.request('POST', '/api/organizations', { json: body })).status).toBe(401);
  });

  it('allows one free organization per administrator', async () => {
    server = await cloud();
    const owner = await seedAccount(server);
    await createOrganization(server, owner, { planType: PlanType.Free });
    const { fields } = foundingKeys(owner);
    const again = await server.request('POST', '/api/organizations', {
      token: owner.accessToken,
      json: { name: 'Second', billingEmail: 'b@acme.test', planType: PlanType.Free, ...fields },
    });
    expect(again.status).toBe(400);
    expect(again.body.validationErrors).toEqual({ planType: ['You can only be an admin of one free organization.'] });
  });
});

describe('variant-only operations', () => {
  it('refuses cloud-only operations on a self-hosted server, whoever asks', async () => {
    server = await startTestServer();
    const owner = await seedAccount(server);
    const org = await seedOrganization(server);
    await seedMembership(server, { organizationId: org, userId: owner.userId, type: OrganizationUserType.Owner });
    const stranger = await seedAccount(server);
    const { fields } = foundingKeys(owner);
    for (const caller of [owner, stranger]) {
      const requests: [string, string, unknown][] = [
        ['POST', '/api/organizations', { name: 'Acme', billingEmail: 'b@acme.test', planType: 0, ...fields }],
        ['POST', `/api/organizations/${org}/storage`, { storageGbAdjustment: 1 }],
        ['GET', `/api/organizations/${org}/license?installationId=${randomUUID()}`, undefined],
      ];
      for (const [method, path, json] of requests) {
        const res = await server.request(method, path, { token: caller.accessToken, json });
        expect(res.status, path).toBe(400);
        expect(res.body.message).toBe('Only allowed when not self hosted.');
      }
    }
    expect(await server.database.db.selectFrom('organizations').select('id').execute()).toHaveLength(1);
  });

  it('refuses applying a license on a cloud server', async () => {
    server = await cloud();
    const user = await seedAccount(server);
    const { fields } = foundingKeys(user);
    const res = await server.request('POST', '/api/organizations/license', { token: user.accessToken, json: { license: '{}', ...fields } });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('Only allowed when self hosted.');
  });
});

describe('who may do what', () => {
  it('follows the role table; non-members and unconfirmed or revoked members get 404', async () => {
    server = await cloud();
    const owner = await seedAccount(server);
    const { id: org } = await createOrganization(server, owner);
    const other = await seedOrganization(server);
    const Owner = OrganizationUserType.Owner;
    const callers: [string, LoggedInUser][] = [
      ['owner', owner],
      ['second owner', await member(server, org, { type: Owner })],
      ['admin', await member(server, org, { type: OrganizationUserType.Admin })],
      ['user', await member(server, org, { type: OrganizationUserType.User })],
      ['manager', await member(server, org, { type: OrganizationUserType.Manager })],
      ['custom', await member(server, org, { type: OrganizationUserType.Custom, permissions: { manageUsers: true, manageGroups: true } })],
      ['invited owner', await member(server, org, { type: Owner, status: OrganizationUserStatusType.Invited })],
      ['accepted owner', await member(server, org, { type: Owner, status: OrganizationUserStatusType.Accepted })],
      ['revoked owner', await member(server, org, { type: Owner, status: OrganizationUserStatusType.Revoked })],
      ['owner elsewhere', await member(server, other, { type: Owner })],
      ['stranger', await seedAccount(server)],
    ];
    // Empty bodies: a caller the rule admits reaches validation (400); one it refuses does not.
    const routes: [string, string, unknown][] = [
      ['GET', `/api/organizations/${org}`, undefined],
      ['PUT', `/api/organizations/${org}`, {}],
      ['DELETE', `/api/organizations/${org}`, {}],
      ['POST', `/api/organizations/${org}/api-key`, {}],
      ['POST', `/api/organizations/${org}/rotate-api-key`, {}],
      ['POST', `/api/organizations/${org}/storage`, {}],
      ['GET', `/api/organizations/${org}/license?installationId=${randomUUID()}`, undefined],
    ];
    const expected: Record<string, number[]> = {
      owner: [200, 400, 400, 400, 400, 400, 200],
      'second owner': [200, 400, 400, 400, 400, 400, 200],
      admin: [200, 400, 403, 403, 403, 403, 403],
      user: [200, 403, 403, 403, 403, 403, 403],
      manager: [200, 403, 403, 403, 403, 403, 403],
      custom: [200, 403, 403, 403, 403, 403, 403],
    };
    for (const [label, caller] of callers) {
      const statuses: number[] = [];
      for (const [method, path, json] of routes) statuses.push((await server.request(method, path, { token: caller.accessToken, json })).status);
      expect(statuses, label).toEqual(expected[label] ?? routes.map(() => 404));
    }
    // Nothing above changed the organization.
    const row = await server.database.db.selectFrom('organizations').selectAll().where('id', '=', org).executeTakeFirstOrThrow();
    expect(row.name).toBe('Acme');
  });
});

describe('reading an organization', () => {
  it('shows billing details to owners and admins only, and 404 to everyone outside', async () => {
    server = await cloud();
    const owner = await seedAccount(server);
    const { id } = await createOrganization(server, owner);
    const admin = await member(server, id, { type: OrganizationUserType.Admin });
    const user = await member(server, id, { type: OrganizationUserType.User });
    for (const caller of [owner, admin]) {
      expect((await server.request('GET', `/api/organizations/${id}`, { token: caller.accessToken })).body).toMatchObject({ id, billingEmail: 'billing@acme.test' });
    }
    const limited = await server.request('GET', `/api/organizations/${id}`, { token: user.accessToken });
    expect(limited.body).toMatchObject({ id, name: 'Acme', billingEmail: null, businessName: null });
    expect((await server.request('GET', `/api/organizations/${randomUUID()}`, { token: owner.accessToken })).status).toBe(404);
    expect((await server.request('GET', '/api/organizations/not-a-guid', { token: owner.accessToken })).status).toBe(404);
  });

  it('lists only confirmed memberships as profile organizations, and accepted ones too as organizationsNew', async () => {
    server = await cloud();
    const user = await seedAccount(server);
    const confirmed = await seedOrganization(server, { name: 'B confirmed' });
    const accepted = await seedOrganization(server, { name: 'A accepted' });
    const custom = await seedMembership(server, { organizationId: confirmed, userId: user.userId, type: OrganizationUserType.Custom, key: '4.aGVsbG8=' });
    await setPermissions(server, custom, { manageUsers: true });
    await seedMembership(server, { organizationId: accepted, userId: user.userId, status: OrganizationUserStatusType.Accepted });
    const listed = await server.request('GET', '/api/organizations', { token: user.accessToken });
    expect(listed.body.data).toHaveLength(1);
    expect(listed.body.data[0]).toMatchObject({ id: confirmed, type: 4, key: '4.aGVsbG8=', useActivateAutofillPolicy: true, permissions: { manageUsers: true, manageGroups: false } });
    const { profileOrganizationsNew } = await import('./profile-organizations.js');
    const both = await profileOrganizationsNew(server.database.db, user.userId);
    expect(both.map((o) => [o.id, o.status])).toEqual([
      [accepted, 1],
      [confirmed, 2],
    ]);

    // The profile and sync carry both lists: the 2026 clients prefer organizationsNew when present.
    const profile = (await server.request('GET', '/api/accounts/profile', { token: user.accessToken })).body as { organizations: { id: string }[]; organizationsNew: { id: string; status: number }[] };
    const sync = (await server.request('GET', '/api/sync', { token: user.accessToken })).body as { profile: typeof profile };
    for (const seen of [profile, sync.profile]) {
      expect(seen.organizations.map((o) => o.id)).toEqual([confirmed]);
      expect(seen.organizationsNew.map((o) => [o.id, o.status])).toEqual([
        [accepted, 1],
        [confirmed, 2],
      ]);
    }
  });
});

describe('updating an organization', () => {
  it('lets owners and admins rename it, and only owners change the billing email', async () => {
    server = await cloud();
    const owner = await seedAccount(server);
    const { id } = await createOrganization(server, owner);
    const admin = await member(server, id, { type: OrganizationUserType.Admin });
    const renamed = await server.request('PUT', `/api/organizations/${id}`, {
      token: admin.accessToken,
      json: { name: 'Acme 2', businessName: 'Acme Two', billingEmail: 'billing@acme.test' },
    });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ name: 'Acme 2', businessName: 'Acme Two', billingEmail: 'billing@acme.test' });
    const refused = await server.request('PUT', `/api/organizations/${id}`, { token: admin.accessToken, json: { name: 'Acme 2', billingEmail: 'new@acme.test' } });
    expect(refused.status).toBe(403);
    const byOwner = await server.request('POST', `/api/organizations/${id}`, { token: owner.accessToken, json: { name: 'Acme 3', billingEmail: 'New@Acme.test' } });
    expect(byOwner.body).toMatchObject({ name: 'Acme 3', billingEmail: 'new@acme.test', businessName: 'Acme Two' });
    const events = await eventsOf(server, 1600);
    expect(events).toHaveLength(2);
    expect(events[0]).toMatchObject({ organization_id: id, acting_user_id: admin.userId });
  });

  it('keeps SSO identifiers unique and refuses bad fields by name', async () => {
    server = await cloud();
    const owner = await seedAccount(server);
    const a = await createOrganization(server, owner);
    const b = await createOrganization(server, owner);
    expect((await server.request('PUT', `/api/organizations/${a.id}`, { token: owner.accessToken, json: { name: 'A', identifier: 'acme-sso' } })).body.identifier).toBe('acme-sso');
    const taken = await server.request('PUT', `/api/organizations/${b.id}`, { token: owner.accessToken, json: { name: 'B', identifier: 'ACME-SSO' } });
    expect(taken.status).toBe(400);
    expect(taken.body.validationErrors).toEqual({ identifier: ['Organization with this identifier already exists.'] });
    for (const [json, field] of [
      [{ name: '' }, 'name'],
      [{ name: 'B', billingEmail: 'nope' }, 'billingEmail'],
      [{ name: 'B', identifier: 'x'.repeat(51) }, 'identifier'],
    ] as const) {
      const res = await server.request('PUT', `/api/organizations/${b.id}`, { token: owner.accessToken, json });
      expect(res.status, field).toBe(400);
      expect(Object.keys(res.body.validationErrors), field).toContain(field);
    }
  });
});

describe('leaving an organization', () => {
  it('removes the membership with an OrganizationUser_Left event; the only confirmed owner may not leave', async () => {
    server = await cloud();
    const owner = await seedAccount(server);
    const { id } = await createOrganization(server, owner);
    const user = await member(server, id);
    await seedMembership(server, { organizationId: id, email: 'invited@example.com', type: OrganizationUserType.Owner, status: OrganizationUserStatusType.Invited });
    const left = await server.request('POST', `/api/organizations/${id}/leave`, { token: user.accessToken });
    expect(left.status).toBe(200);
    expect(left.text).toBe('');
    expect((await server.request('GET', '/api/organizations', { token: user.accessToken })).body.data).toEqual([]);
    expect(await eventsOf(server, 1516)).toMatchObject([{ organization_id: id, organization_user_id: user.membershipId, user_id: user.userId, acting_user_id: user.userId }]);
    expect((await server.request('POST', `/api/organizations/${id}/leave`, { token: user.accessToken })).status).toBe(404);

    const alone = await server.request('POST', `/api/organizations/${id}/leave`, { token: owner.accessToken });
    expect(alone.status).toBe(400);
    expect(alone.body.message).toBe('Organization must have at least one confirmed owner.');
    await member(server, id, { type: OrganizationUserType.Owner });
    expect((await server.request('POST', `/api/organizations/${id}/leave`, { token: owner.accessToken })).status).toBe(200);
  });
});

describe('deleting an organization', () => {
  it('needs an owner and the master password hash, and takes everything of the organization with it', async () => {
    server = await cloud();
    const owner = await seedAccount(server);
    const { id } = await createOrganization(server, owner);
    const admin = await member(server, id, { type: OrganizationUserType.Admin });
    // Organization items, their collection places and users' settings of them go too;
    // personal items and other organizations' items stay.
    const collection = await seedCollection(server, id);
    const item = await seedOrgItem(server, id, [collection]);
    await server.database.db.insertInto('cipher_user_settings').values({ user_id: admin.userId, cipher_id: item, folder_id: null, favorite: true, archived_date: null }).execute();
    const otherOrg = await seedOrganization(server, { name: 'Other' });
    const kept = await seedOrgItem(server, otherOrg, [await seedCollection(server, otherOrg)]);
    const personal = await server.request('POST', '/api/ciphers', { token: owner.accessToken, json: cipherBody('login', owner.account.userKey) });
    expect(personal.status).toBe(200);
    const before = await server.database.db.selectFrom('users').select('account_revision_date').where('id', '=', admin.userId).executeTakeFirstOrThrow();
    expect((await server.request('DELETE', `/api/organizations/${id}`, { token: admin.accessToken, json: { secret: admin.account.masterPasswordHash } })).status).toBe(403);
    const wrong = await server.request('DELETE', `/api/organizations/${id}`, { token: owner.accessToken, json: { secret: 'd3Jvbmc=' } });
    expect(wrong.status).toBe(400);
    expect(wrong.body.validationErrors).toEqual({ secret: ['User verification failed.'] });
    const none = await server.request('DELETE', `/api/organizations/${id}`, { token: owner.accessToken, json: {} });
    expect(none.status).toBe(400);
    await new Promise((r) => setTimeout(r, 5));
    const res = await server.request('POST', `/api/organizations/${id}/delete`, { token: owner.accessToken, json: { masterPasswordHash: owner.account.masterPasswordHash } });
    expect(res.status).toBe(200);
    const db = server.database.db;
    for (const table of ['collection_users'] as const) {
      expect(await db.selectFrom(table).selectAll().execute(), table).toEqual([]);
    }
    expect(await db.selectFrom('cipher_user_settings').selectAll().where('cipher_id', '=', item).execute()).toEqual([]);
    expect(await db.selectFrom('organizations').select('id').execute()).toEqual([{ id: otherOrg }]);
    expect(await db.selectFrom('organization_users').selectAll().where('organization_id', '=', id).execute()).toEqual([]);
    expect((await db.selectFrom('collections').select('organization_id').execute()).map((r) => r.organization_id)).toEqual([otherOrg]);
    expect((await db.selectFrom('ciphers').select('id').orderBy('id').execute()).map((r) => r.id).sort()).toEqual([kept, personal.body.id as string].sort());
    expect((await db.selectFrom('collection_ciphers').select('cipher_id').execute()).map((r) => r.cipher_id)).toEqual([kept]);
    const after = await db.selectFrom('users').select('account_revision_date').where('id', '=', admin.userId).executeTakeFirstOrThrow();
    expect(after.account_revision_date > before.account_revision_date).toBe(true);
    expect((await server.request('GET', `/api/organizations/${id}`, { token: owner.accessToken })).status).toBe(404);
  });
});

describe('organization API key', () => {
  it('is created on first read, works for client_credentials at once, and rotation ends the old tokens', async () => {
    server = await cloud();
    const owner = await seedAccount(server);
    const { id } = await createOrganization(server, owner);
    const secret = { masterPasswordHash: owner.account.masterPasswordHash };
    const first = await server.request('POST', `/api/organizations/${id}/api-key`, { token: owner.accessToken, json: secret });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ object: 'apiKey', apiKey: expect.stringMatching(/^[A-Za-z0-9]{30}$/), revisionDate: expect.any(String) });
    const again = await server.request('POST', `/api/organizations/${id}/api-key`, { token: owner.accessToken, json: { secret: owner.account.masterPasswordHash, type: 0 } });
    expect(again.body.apiKey).toBe(first.body.apiKey);

    const form = { grant_type: 'client_credentials', scope: 'api.organization', client_id: `organization.${id}`, client_secret: first.body.apiKey as string };
    const token = await server.request('POST', '/identity/connect/token', { form });
    expect(token.status).toBe(200);
    const resolve = organizationPrincipalResolver(server.database.db);
    expect(await resolve(decodeJwt(token.body.access_token))).toMatchObject({ kind: 'organization', organizationId: id });

    const rotated = await server.request('POST', `/api/organizations/${id}/rotate-api-key`, { token: owner.accessToken, json: secret });
    expect(rotated.status).toBe(200);
    expect(rotated.body.apiKey).not.toBe(first.body.apiKey);
    expect(await resolve(decodeJwt(token.body.access_token))).toBeNull();
    expect((await server.request('POST', '/identity/connect/token', { form })).body.error).toBe('invalid_client');
    const fresh = await server.request('POST', '/identity/connect/token', { form: { ...form, client_secret: rotated.body.apiKey } });
    expect(fresh.status).toBe(200);
  });

  it('needs the master password hash; SCIM keys need manageScim and a Teams or Enterprise plan', async () => {
    server = await cloud();
    const owner = await seedAccount(server);
    const { id } = await createOrganization(server, owner);
    const wrong = await server.request('POST', `/api/organizations/${id}/api-key`, { token: owner.accessToken, json: { masterPasswordHash: 'd3Jvbmc=' } });
    expect(wrong.status).toBe(400);
    expect(wrong.body.validationErrors).toEqual({ masterPasswordHash: ['Invalid password.'] });
    expect(await server.database.db.selectFrom('organization_api_keys').selectAll().execute()).toEqual([]);
    const scimAdmin = await member(server, id, { type: OrganizationUserType.Custom, permissions: { manageScim: true } });
    const scim = await server.request('POST', `/api/organizations/${id}/api-key`, { token: scimAdmin.accessToken, json: { type: 2, masterPasswordHash: scimAdmin.account.masterPasswordHash } });
    expect(scim.status).toBe(200);
    expect((await server.request('POST', `/api/organizations/${id}/api-key`, { token: scimAdmin.accessToken, json: { masterPasswordHash: scimAdmin.account.masterPasswordHash } })).status).toBe(403);
    expect((await server.request('POST', `/api/organizations/${id}/api-key`, { token: owner.accessToken, json: { type: 7 } })).body.validationErrors).toHaveProperty('type');

    const freeOwner = await seedAccount(server);
    const free = await createOrganization(server, freeOwner, { planType: PlanType.Free });
    const freeScim = await server.request('POST', `/api/organizations/${free.id}/api-key`, { token: freeOwner.accessToken, json: { type: 1, masterPasswordHash: freeOwner.account.masterPasswordHash } });
    expect(freeScim.status).toBe(404);
  });
});

describe('auto-enroll status and SSO links', () => {
  it('answers by SSO identifier or id whether account recovery enrolment is automatic, for members only', async () => {
    server = await cloud();
    const owner = await seedAccount(server);
    const { id } = await createOrganization(server, owner);
    await server.request('PUT', `/api/organizations/${id}`, { token: owner.accessToken, json: { name: 'Acme', identifier: 'Acme-SSO' } });
    const invited = await member(server, id, { status: OrganizationUserStatusType.Accepted });
    expect((await server.request('GET', '/api/organizations/acme-sso/auto-enroll-status', { token: invited.accessToken })).body).toEqual({
      object: 'organizationAutoEnrollStatus',
      id,
      resetPasswordEnabled: false,
    });
    const now = new Date().toISOString();
    await server.database.db
      .insertInto('policies')
      .values({ id: randomUUID(), organization_id: id, type: 8, enabled: true, data: JSON.stringify({ autoEnrollEnabled: true }), creation_date: now, revision_date: now })
      .execute();
    expect((await server.request('GET', `/api/organizations/${id}/auto-enroll-status`, { token: owner.accessToken })).body.resetPasswordEnabled).toBe(true);
    const stranger = await seedAccount(server);
    expect((await server.request('GET', '/api/organizations/Acme-SSO/auto-enroll-status', { token: stranger.accessToken })).status).toBe(404);
    expect((await server.request('GET', '/api/organizations/nope/auto-enroll-status', { token: owner.accessToken })).status).toBe(404);
  });

  it('removes the caller\'s SSO link for members, with an OrganizationUser_UnlinkedSso event', async () => {
    server = await cloud();
    const owner = await seedAccount(server);
    const { id } = await createOrganization(server, owner);
    const res = await server.request('DELETE', `/api/accounts/sso/${id}`, { token: owner.accessToken });
    expect(res.status).toBe(200);
    expect(await eventsOf(server, 1505)).toMatchObject([{ organization_id: id, user_id: owner.userId }]);
    const stranger = await seedAccount(server);
    expect((await server.request('DELETE', `/api/accounts/sso/${id}`, { token: stranger.accessToken })).status).toBe(404);
    expect((await server.request('DELETE', `/api/accounts/sso/${id}`)).status).toBe(401);
  });
});

describe('storage', () => {
  it('lets owners adjust storage within the plan\'s bounds', async () => {
    server = await cloud();
    const owner = await seedAccount(server);
    const { id } = await createOrganization(server, owner);
    const adjust = (storageGbAdjustment: unknown, token = owner.accessToken) =>
      server!.request('POST', `/api/organizations/${id}/storage`, { token, json: { storageGbAdjustment } });
    const res = await adjust(4);
    expect(res.body).toEqual({ object: 'payment', success: true, paymentIntentClientSecret: null });
    expect((await server.request('GET', `/api/organizations/${id}`, { token: owner.accessToken })).body.maxStorageGb).toBe(5);
    expect((await adjust(-3)).status).toBe(200);
    for (const value of [0, -2, 99, 1.5, '1']) {
      const refused = await adjust(value);
      expect(refused.status, String(value)).toBe(400);
      expect(Object.keys(refused.body.validationErrors), String(value)).toEqual(['storageGbAdjustment']);
    }
    await server.database.db.updateTable('organizations').set({ storage_bytes: 1.5 * 1024 ** 3 }).where('id', '=', id).execute();
    expect((await adjust(-1)).body.validationErrors.storageGbAdjustment[0]).toMatch(/currently using 1.50 GB/);
    const admin = await member(server, id, { type: OrganizationUserType.Admin });
    expect((await adjust(1, admin.accessToken)).status).toBe(403);

    const freeOwner = await seedAccount(server);
    const free = await createOrganization(server, freeOwner, { planType: PlanType.Free });
    const freeRes = await server.request('POST', `/api/organizations/${free.id}/storage`, { token: freeOwner.accessToken, json: { storageGbAdjustment: 1 } });
    expect(freeRes.status).toBe(400);
    expect(freeRes.body.message).toBe('Plan does not allow additional storage.');
  });
});
