import { randomUUID } from 'node:crypto';
import { decodeJwt } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { seedAccount } from '../../../test/support/accounts.js';
import { seedMembership, seedOrganization } from '../../../test/support/orgs.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { collectionGrants } from './grants.js';
import { confirmedMembership } from './org-access.js';
import { OrganizationUserStatusType, OrganizationUserType } from './roles.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function collection(s: TestServer, organizationId: string): Promise<string> {
  const id = randomUUID();
  const now = new Date().toISOString();
  await s.database.db.insertInto('collections').values({ id, organization_id: organizationId, name: '2.aQ==|aQ==|aQ==', external_id: null, type: 0, creation_date: now, revision_date: now }).execute();
  return id;
}

async function group(s: TestServer, organizationId: string, members: string[], accessAll = false): Promise<string> {
  const id = randomUUID();
  const now = new Date().toISOString();
  await s.database.db.insertInto('groups').values({ id, organization_id: organizationId, name: 'g', access_all: accessAll, external_id: null, creation_date: now, revision_date: now }).execute();
  for (const member of members) await s.database.db.insertInto('group_users').values({ group_id: id, organization_user_id: member }).execute();
  return id;
}

describe('organization access', () => {
  it('counts only confirmed memberships', async () => {
    server = await startTestServer();
    const user = await seedAccount(server);
    const org = await seedOrganization(server);
    for (const status of [OrganizationUserStatusType.Invited, OrganizationUserStatusType.Accepted, OrganizationUserStatusType.Revoked]) {
      const id = await seedMembership(server, { organizationId: org, userId: user.userId, status });
      expect(await confirmedMembership(server.database.db, org, user.userId)).toBeNull();
      await server.database.db.deleteFrom('organization_users').where('id', '=', id).execute();
    }
    await seedMembership(server, { organizationId: org, userId: user.userId, type: OrganizationUserType.Admin });
    const membership = await confirmedMembership(server.database.db, org, user.userId);
    expect(membership?.rights.has('manageUsers')).toBe(true);
    await server.database.db.updateTable('organizations').set({ enabled: false }).execute();
    expect(await confirmedMembership(server.database.db, org, user.userId)).toBeNull();
  });

  it('gives the highest access across direct and group grants', async () => {
    server = await startTestServer();
    const user = await seedAccount(server);
    const org = await seedOrganization(server);
    const member = await seedMembership(server, { organizationId: org, userId: user.userId });
    const [a, b, c, unrelated] = [await collection(server, org), await collection(server, org), await collection(server, org), await collection(server, org)];
    const g1 = await group(server, org, [member]);
    const g2 = await group(server, org, [member]);
    const db = server.database.db;
    await db.insertInto('collection_users').values({ collection_id: a, organization_user_id: member, read_only: true, hide_passwords: true, manage: false }).execute();
    await db.insertInto('collection_groups').values({ collection_id: a, group_id: g1, read_only: false, hide_passwords: true, manage: false }).execute();
    await db.insertInto('collection_groups').values({ collection_id: a, group_id: g2, read_only: true, hide_passwords: false, manage: false }).execute();
    await db.insertInto('collection_groups').values({ collection_id: b, group_id: g2, read_only: true, hide_passwords: true, manage: true }).execute();
    await db.insertInto('collection_users').values({ collection_id: c, organization_user_id: member, read_only: true, hide_passwords: false, manage: false }).execute();

    const grants = await collectionGrants(db, { id: member, organizationId: org, accessAll: false, type: OrganizationUserType.User });
    expect(Object.fromEntries(grants)).toEqual({
      [a]: { readOnly: false, hidePasswords: false, manage: false },
      [b]: { readOnly: true, hidePasswords: true, manage: true },
      [c]: { readOnly: true, hidePasswords: false, manage: false },
    });
    expect(grants.has(unrelated)).toBe(false);
  });

  it('reaches every collection through a group with access to all', async () => {
    server = await startTestServer();
    const user = await seedAccount(server);
    const org = await seedOrganization(server);
    const member = await seedMembership(server, { organizationId: org, userId: user.userId });
    const ids = [await collection(server, org), await collection(server, org)];
    await group(server, org, [member], true);
    const grants = await collectionGrants(server.database.db, { id: member, organizationId: org, accessAll: false, type: OrganizationUserType.User });
    expect([...grants.keys()].sort()).toEqual(ids.sort());
  });
});

describe('organization API key (client_credentials)', () => {
  it('issues api.organization tokens that end when the key rotates', async () => {
    server = await startTestServer();
    const org = await seedOrganization(server);
    await server.database.db.insertInto('organization_api_keys').values({ id: randomUUID(), organization_id: org, type: 0, api_key: 'k'.repeat(30), revision_date: new Date().toISOString() }).execute();
    const form = { grant_type: 'client_credentials', scope: 'api.organization', client_id: `organization.${org}`, client_secret: 'k'.repeat(30) };
    const res = await server.request('POST', '/identity/connect/token', { form });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ token_type: 'Bearer', scope: 'api.organization', expires_in: 3600 });
    expect(decodeJwt(res.body.access_token)).toMatchObject({ sub: org, type: 'Organization', scope: ['api.organization'] });

    expect((await server.request('POST', '/identity/connect/token', { form: { ...form, client_secret: 'x'.repeat(30) } })).body.error).toBe('invalid_client');
    expect((await server.request('POST', '/identity/connect/token', { form: { ...form, scope: 'api' } })).body.error).toBe('invalid_scope');
    // An organization token is no user token.
    expect((await server.request('GET', '/api/accounts/profile', { token: res.body.access_token })).status).toBe(401);
  });
});
