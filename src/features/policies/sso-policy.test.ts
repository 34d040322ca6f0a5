import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { passwordGrantForm, TEST_DEVICE, type LoggedInUser } from '../../../test/support/accounts.js';
import { memberOf, orgWithOwner } from '../../../test/support/members.js';
import { seedMembership, seedOrganization } from '../../../test/support/orgs.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { EventType } from '../../platform/audit/event-type.js';
import { OrganizationUserStatusType as Status, OrganizationUserType as Role } from '../../platform/access/roles.js';
import { PolicyType } from './policy-type.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server.close());

const put = (token: string, org: string, type: number, json: unknown) => server.request('PUT', `/api/organizations/${org}/policies/${type}`, { token, json });
const passwordLogin = (who: LoggedInUser) => server.request('POST', '/identity/connect/token', { form: passwordGrantForm(who.account) });

/** An organization with an SSO identifier, Single organization and Require single sign-on on, through the routes. */
async function ssoOrg() {
  const { orgId, owner } = await orgWithOwner(server);
  const identifier = `sso-${orgId.slice(0, 8)}`;
  await server.database.db.updateTable('organizations').set({ identifier }).where('id', '=', orgId).execute();
  expect((await put(owner.accessToken, orgId, PolicyType.SingleOrg, { enabled: true })).status).toBe(200);
  expect((await put(owner.accessToken, orgId, PolicyType.RequireSso, { enabled: true })).status).toBe(200);
  return { orgId, owner, identifier };
}

async function seedSsoConfig(organizationId: string, memberDecryptionType: number, enabled = true) {
  const now = new Date().toISOString();
  const data = JSON.stringify({ configType: 1, memberDecryptionType, authority: 'https://idp.example.com', clientId: 'c', clientSecret: 'sealed' });
  await server.database.db.insertInto('sso_configs').values({ organization_id: organizationId, enabled, data, creation_date: now, revision_date: now }).execute();
}

describe('Require single sign-on (policy 4) at login', () => {
  it("refuses a confirmed member's password login with the official error, naming the organization, after checking the password", async () => {
    const { orgId, identifier } = await ssoOrg();
    const member = await memberOf(server, orgId);
    const res = await passwordLogin(member);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'invalid_grant', error_description: 'SSO authentication is required.', ErrorModel: { Message: 'SSO authentication is required.' }, SsoOrganizationIdentifier: identifier });
    expect(res.body.access_token).toBeUndefined();
    const failed = await server.database.db.selectFrom('events').select('type').where('user_id', '=', member.userId).where('type', '=', EventType.User_FailedLogIn).execute();
    expect(failed).toHaveLength(1);

    // A wrong password is still just a wrong password: nothing about SSO leaks.
    const wrong = await server.request('POST', '/identity/connect/token', { form: { ...passwordGrantForm(member.account), password: 'bm90IGl0' } });
    expect(wrong.body.error_description).toBe('invalid_username_or_password');
  });

  it('leaves out the organization identifier when two organizations require SSO of the member', async () => {
    const first = await ssoOrg();
    const second = await ssoOrg();
    const member = await memberOf(server, first.orgId);
    await seedMembership(server, { organizationId: second.orgId, userId: member.userId, status: Status.Accepted });
    const res = await passwordLogin(member);
    expect(res.body.error_description).toBe('SSO authentication is required.');
    expect(res.body).not.toHaveProperty('SsoOrganizationIdentifier');
  });

  it('names the one organization that requires SSO, whatever other memberships the member has', async () => {
    const { orgId, identifier } = await ssoOrg();
    const member = await memberOf(server, orgId);
    await seedMembership(server, { organizationId: await seedOrganization(server), userId: member.userId, status: Status.Confirmed });
    expect((await passwordLogin(member)).body.SsoOrganizationIdentifier).toBe(identifier);
  });

  it('binds accepted members too, as the official server does since July 2026, but not invited or revoked ones', async () => {
    const { orgId } = await ssoOrg();
    const accepted = await memberOf(server, orgId, { status: Status.Accepted });
    const revoked = await memberOf(server, orgId, { status: Status.Revoked });
    expect((await passwordLogin(accepted)).body.error_description).toBe('SSO authentication is required.');
    expect((await passwordLogin(revoked)).status).toBe(200);
  });

  it('lets owners and admins log in with their password; custom members, even with manageSso, are bound', async () => {
    const { orgId, owner } = await ssoOrg();
    const admin = await memberOf(server, orgId, { type: Role.Admin });
    const custom = await memberOf(server, orgId, { type: Role.Custom, permissions: { manageSso: true } });
    for (const who of [owner, admin]) expect((await passwordLogin(who)).status).toBe(200);
    expect((await passwordLogin(custom)).body.error_description).toBe('SSO authentication is required.');
  });

  it('lets the member in with the personal API key, as officially', async () => {
    const { orgId } = await ssoOrg();
    const member = await memberOf(server, orgId);
    const { api_key } = await server.database.db.selectFrom('users').select('api_key').where('id', '=', member.userId).executeTakeFirstOrThrow();
    const res = await server.request('POST', '/identity/connect/token', {
      form: { grant_type: 'client_credentials', client_id: `user.${member.userId}`, client_secret: api_key, scope: 'api', ...TEST_DEVICE },
    });
    expect(res.status).toBe(200);
  });

  it('refuses logging in with a device approved by the member (an auth request), as a password login', async () => {
    const { orgId, owner } = await orgWithOwner(server);
    const member = await memberOf(server, orgId);
    const phone = { deviceType: '9', deviceIdentifier: randomUUID(), deviceName: 'chrome' };
    // The device logged in before, so the server takes its requests.
    expect((await server.request('POST', '/identity/connect/token', { form: passwordGrantForm(member.account, phone) })).status).toBe(200);
    for (const type of [PolicyType.SingleOrg, PolicyType.RequireSso]) expect((await put(owner.accessToken, orgId, type, { enabled: true })).status).toBe(200);

    const accessCode = `code-${randomUUID().slice(0, 8)}`;
    const asked = await server.request('POST', '/api/auth-requests', {
      headers: { 'device-type': phone.deviceType, 'device-identifier': phone.deviceIdentifier },
      json: { email: member.account.email, publicKey: Buffer.from('a public key').toString('base64'), deviceIdentifier: phone.deviceIdentifier, accessCode, type: 0 },
    });
    expect(asked.status, asked.text).toBe(200);
    const approved = await server.request('PUT', `/api/auth-requests/${asked.body.id}`, { token: member.accessToken, json: { deviceIdentifier: TEST_DEVICE.deviceIdentifier, requestApproved: true, key: '4.aGVsbG8=' } });
    expect(approved.status, approved.text).toBe(200);
    const res = await server.request('POST', '/identity/connect/token', { form: { ...passwordGrantForm(member.account, phone), password: accessCode, authRequest: asked.body.id } });
    expect(res.status).toBe(400);
    expect(res.body.error_description).toBe('SSO authentication is required.');
  });

  it('lets the member in once the policy is off, and a former member once they leave', async () => {
    const { orgId, owner } = await ssoOrg();
    const member = await memberOf(server, orgId);
    const leaver = await memberOf(server, orgId);
    expect((await passwordLogin(member)).status).toBe(400);
    expect((await passwordLogin(leaver)).status).toBe(400);

    expect((await server.request('POST', `/api/organizations/${orgId}/leave`, { token: leaver.accessToken })).status).toBe(200);
    expect((await passwordLogin(leaver)).status).toBe(200);

    expect((await put(owner.accessToken, orgId, PolicyType.RequireSso, { enabled: false })).status).toBe(200);
    expect((await passwordLogin(member)).status).toBe(200);
  });

  it('does not bind members of a disabled organization', async () => {
    const { orgId } = await ssoOrg();
    const member = await memberOf(server, orgId);
    await server.database.db.updateTable('organizations').set({ enabled: false }).where('id', '=', orgId).execute();
    expect((await passwordLogin(member)).status).toBe(200);
  });
});

describe('policies that depend on others', () => {
  it('refuses Require single sign-on without Single organization, and Single organization off under it', async () => {
    const { orgId, owner } = await orgWithOwner(server);
    const early = await put(owner.accessToken, orgId, PolicyType.RequireSso, { enabled: true });
    expect(early.status).toBe(400);
    expect(early.body.message).toBe('Turn on the Single organization policy because it is required for the Require single sign-on authentication policy.');
    expect((await put(owner.accessToken, orgId, PolicyType.SingleOrg, { enabled: true })).status).toBe(200);
    expect((await put(owner.accessToken, orgId, PolicyType.RequireSso, { enabled: true })).status).toBe(200);
    const off = await put(owner.accessToken, orgId, PolicyType.SingleOrg, { enabled: false });
    expect(off.status).toBe(400);
    expect(off.body.message).toBe('Turn off the Require single sign-on authentication policy because it requires the Single organization policy.');
  });

  it('keeps Require single sign-on and automatic account recovery enrolment on while trusted device encryption is', async () => {
    const { orgId, owner } = await orgWithOwner(server);
    for (const type of [PolicyType.SingleOrg, PolicyType.RequireSso]) expect((await put(owner.accessToken, orgId, type, { enabled: true })).status).toBe(200);
    expect((await put(owner.accessToken, orgId, PolicyType.ResetPassword, { enabled: true, data: { autoEnrollEnabled: true } })).status).toBe(200);
    await seedSsoConfig(orgId, 2);

    const sso = await put(owner.accessToken, orgId, PolicyType.RequireSso, { enabled: false });
    expect(sso.status).toBe(400);
    expect(sso.body.message).toBe('Trusted device encryption is on and requires this policy.');
    for (const body of [{ enabled: false }, { enabled: true, data: { autoEnrollEnabled: false } }, { enabled: true, data: null }]) {
      const recovery = await put(owner.accessToken, orgId, PolicyType.ResetPassword, body);
      expect(recovery.status).toBe(400);
      expect(recovery.body.message).toBe('Trusted device encryption is on and requires this policy.');
    }
    // Nothing was written: both policies are still on.
    const saved = await server.database.db.selectFrom('policies').select(['type', 'enabled', 'data']).where('organization_id', '=', orgId).orderBy('type').execute();
    expect(saved.map((p) => [p.type, Boolean(p.enabled)])).toEqual([[3, true], [4, true], [8, true]]);

    // With the SSO configuration off, they may be turned off.
    await server.database.db.updateTable('sso_configs').set({ enabled: false }).where('organization_id', '=', orgId).execute();
    expect((await put(owner.accessToken, orgId, PolicyType.RequireSso, { enabled: false })).status).toBe(200);
  });

  it('keeps Require single sign-on and Single organization on while Key Connector is', async () => {
    const { orgId, owner } = await orgWithOwner(server);
    for (const type of [PolicyType.SingleOrg, PolicyType.RequireSso]) expect((await put(owner.accessToken, orgId, type, { enabled: true })).status).toBe(200);
    await seedSsoConfig(orgId, 1);
    for (const type of [PolicyType.RequireSso, PolicyType.SingleOrg]) {
      const res = await put(owner.accessToken, orgId, type, { enabled: false });
      expect(res.body.message).toBe('Key Connector is enabled and requires this policy.');
    }
  });
});

describe('Automatic login with SSO (policy 12)', () => {
  it('stores the identity provider hosts the browser extension reads, and serves them in sync', async () => {
    const { orgId, owner } = await orgWithOwner(server);
    const member = await memberOf(server, orgId);
    const idpHost = 'https://login.example.com, idp.example.org:8443';
    const saved = await put(owner.accessToken, orgId, PolicyType.AutomaticAppLogIn, { enabled: true, data: { idpHost } });
    expect(saved.status).toBe(200);
    expect(saved.body).toMatchObject({ type: 12, enabled: true, data: { idpHost } });
    const sync = await server.request('GET', '/api/sync', { token: member.accessToken });
    expect((sync.body.policies as { type: number; data: unknown }[]).find((p) => p.type === 12)?.data).toEqual({ idpHost });
  });

  it.each([
    ['a space inside a host', 'login example.com'],
    ['an empty entry', 'login.example.com,,idp.example.org'],
    ['another scheme', 'ftp://login.example.com'],
    ['a number', 42],
    ['too long', 'a'.repeat(1001)],
  ])('refuses %s, naming the field', async (_case, idpHost) => {
    const { orgId, owner } = await orgWithOwner(server);
    const res = await put(owner.accessToken, orgId, PolicyType.AutomaticAppLogIn, { enabled: true, data: { idpHost } });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body.validationErrors ?? {})).toEqual(['data.idpHost']);
    expect(await server.database.db.selectFrom('policies').select('id').where('organization_id', '=', orgId).execute()).toEqual([]);
  });
});
