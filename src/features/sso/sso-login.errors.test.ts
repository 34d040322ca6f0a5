import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { seedAccount } from '../../../test/support/accounts.js';
import { loginThroughIdp } from '../../../test/support/oidc-idp.js';
import { seedMembership } from '../../../test/support/orgs.js';
import { cliAuthorizeUrl, SECRETS_KEY, ssoOrganization, startSsoWorld, type SsoWorld } from '../../../test/support/sso-login.js';
import { startTestServer } from '../../../test/support/test-server.js';

/**
 * Every way an SSO login fails: each is a clear answer naming the problem, and none leaves an
 * account, a membership, a link or a code behind.
 */

let world: SsoWorld;
beforeAll(async () => {
  world = await startSsoWorld([[
    { sub: 'eve-sub', email: 'eve@acme.example', name: 'Eve', password: 'pw-eve' },
    { sub: 'other-sub', email: 'other@acme.example', password: 'pw-other' },
  ]]);
});
afterAll(async () => world?.close());
afterEach(() => world.idps[0]!.idp.misbehave({}));

const eve = { login: 'eve@acme.example', password: 'pw-eve' };

async function counts(orgId: string) {
  const db = world.server.database.db;
  const n = async (table: 'sso_users' | 'sso_codes' | 'organization_users') => (await db.selectFrom(table).select('organization_id').where('organization_id', '=', orgId).execute()).length;
  const users = (await db.selectFrom('users').select('id').where('email', '=', 'eve@acme.example').execute()).length;
  return { links: await n('sso_users'), codes: await n('sso_codes'), members: await n('organization_users'), users };
}
const NOTHING = { links: 0, codes: 0, members: 0, users: 0 };

async function failedLogin(identifier: string, user = eve, extra: Record<string, string> = {}) {
  const start = await cliAuthorizeUrl(world, identifier, extra);
  return loginThroughIdp(start.url, user);
}

describe('SSO login errors', () => {
  it('answers prevalidate 400 for no identifier, an unknown one, or SSO off', async () => {
    const { orgId, identifier } = await ssoOrganization(world.server, world.idps[0]!);
    for (const hint of ['', 'no-such-org']) {
      const res = await world.server.request('GET', `/identity/sso/prevalidate?domainHint=${hint}`);
      expect(res.status).toBe(400);
      expect(res.text).toContain('Invalid SSO identifier');
    }
    await world.server.database.db.updateTable('sso_configs').set({ enabled: false }).where('organization_id', '=', orgId).execute();
    expect((await world.server.request('GET', `/identity/sso/prevalidate?domainHint=${identifier.toUpperCase()}`)).status).toBe(400);
  });

  it('refuses an unknown client or redirect_uri with a page, and a bad request by redirecting back with the error', async () => {
    const { identifier } = await ssoOrganization(world.server, world.idps[0]!);
    const start = await cliAuthorizeUrl(world, identifier);
    const badRedirect = await fetch(start.url.replace('localhost%3A8065', 'evil.example'), { redirect: 'manual' });
    expect(badRedirect.status).toBe(400);
    expect(badRedirect.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(await badRedirect.text()).toContain('is not allowed for client');
    const badClient = await fetch(start.url.replace('client_id=cli', 'client_id=nobody'), { redirect: 'manual' });
    expect(await badClient.text()).toContain('Unknown client_id');
    const plain = await fetch(start.url.replace('code_challenge_method=S256', 'code_challenge_method=plain'), { redirect: 'manual' });
    expect(plain.status).toBe(302);
    const back = new URL(plain.headers.get('location')!);
    expect(back.origin).toBe('http://localhost:8065');
    expect(back.searchParams.get('error')).toBe('invalid_request');
    expect(back.searchParams.get('state')).toBe(start.state);
    const otherOrg = await ssoOrganization(world.server, world.idps[0]!);
    const foreignToken = await fetch(start.url.replace(`domain_hint=${identifier}`, `domain_hint=${otherOrg.identifier}`), { redirect: 'manual' });
    expect(new URL(foreignToken.headers.get('location')!).searchParams.get('error_description')).toMatch(/another organization/);
  });

  it('names an unreachable authority, and creates nothing', async () => {
    const { orgId, identifier } = await ssoOrganization(world.server, world.idps[0]!, { data: { authority: 'http://127.0.0.1:9' } });
    const start = await cliAuthorizeUrl(world, identifier);
    const res = await fetch(start.url, { redirect: 'manual' });
    expect(res.status).toBe(502);
    expect(await res.text()).toMatch(/discovery document at http:\/\/127\.0\.0\.1:9 could not be used/);
    expect((await world.server.database.db.selectFrom('sso_flows').select('state_hash').where('organization_id', '=', orgId).execute()).length).toBe(0);
  });

  it('names a bad discovery document', async () => {
    const { identifier } = await ssoOrganization(world.server, world.idps[0]!);
    world.idps[0]!.idp.misbehave({ discovery: 'wrong-issuer' });
    const res = await fetch((await cliAuthorizeUrl(world, identifier)).url, { redirect: 'manual' });
    expect(res.status).toBe(502);
    expect(await res.text()).toMatch(/discovery document .* could not be used/);
  });

  it('remembers a failed discovery for a while, and tries again once the configuration is saved', async () => {
    const { orgId, identifier } = await ssoOrganization(world.server, world.idps[0]!);
    const { idp } = world.idps[0]!;
    const discoveries = () => idp.requests.filter((r) => r.path.endsWith('/.well-known/openid-configuration')).length;
    idp.misbehave({ discovery: 'wrong-issuer' });
    const before = discoveries();
    expect((await fetch((await cliAuthorizeUrl(world, identifier)).url, { redirect: 'manual' })).status).toBe(502);
    expect(discoveries()).toBe(before + 1);
    idp.misbehave({});
    // Within 30 s the failure answers again without asking the provider.
    const again = await fetch((await cliAuthorizeUrl(world, identifier)).url, { redirect: 'manual' });
    expect(again.status).toBe(502);
    expect(discoveries()).toBe(before + 1);
    // A saved configuration is a new revision: asked at once.
    await world.server.database.db.updateTable('sso_configs').set({ revision_date: new Date(Date.now() + 1000).toISOString() }).where('organization_id', '=', orgId).execute();
    expect((await fetch((await cliAuthorizeUrl(world, identifier)).url, { redirect: 'manual' })).status).toBe(302);
    expect(discoveries()).toBe(before + 2);
  });

  it('refuses an IdP answer without an email claim, and creates nothing', async () => {
    const { orgId, identifier } = await ssoOrganization(world.server, world.idps[0]!);
    world.idps[0]!.idp.misbehave({ omitClaims: ['email'] });
    const end = await failedLogin(identifier);
    expect(end.status).toBe(403);
    expect(end.body).toContain('Cannot find email claim');
    expect(await counts(orgId)).toEqual(NOTHING);
  });

  it('refuses an id_token for another audience or issuer, and creates nothing', async () => {
    const { orgId, identifier } = await ssoOrganization(world.server, world.idps[0]!);
    world.idps[0]!.idp.misbehave({ audience: 'someone-else' });
    const wrongAudience = await failedLogin(identifier);
    expect(wrongAudience.status).toBe(502);
    expect(wrongAudience.body).toMatch(/&#34;aud&#34;|"aud"/);
    world.idps[0]!.idp.misbehave({ issuer: 'https://not-the-idp.example' });
    const wrongIssuer = await failedLogin(identifier);
    expect(wrongIssuer.body).toMatch(/&#34;iss&#34;|"iss"/);
    expect(await counts(orgId)).toEqual(NOTHING);
  });

  it('checks the acr the IdP reports against the expected one', async () => {
    const { identifier } = await ssoOrganization(world.server, world.idps[0]!, { data: { acrValues: 'urn:test:mfa', expectedReturnAcrValue: 'urn:test:mfa' } });
    world.idps[0]!.idp.users.set('acr-sub', { sub: 'acr-sub', email: 'acr@acme.example', password: 'pw-acr' });
    world.idps[0]!.idp.misbehave({ acr: 'urn:test:password' });
    const weak = await failedLogin(identifier, { login: 'acr-sub', password: 'pw-acr' });
    expect(weak.status).toBe(502);
    expect(weak.body).toContain('authentication context class reference (acr)');
    world.idps[0]!.idp.misbehave({ acr: 'urn:test:mfa' });
    const strong = await failedLogin(identifier, { login: 'acr-sub', password: 'pw-acr' });
    expect(strong.location?.searchParams.get('code')).toBeTruthy();
  });

  it('refuses a replayed callback and an expired login', async () => {
    const { orgId, identifier } = await ssoOrganization(world.server, world.idps[0]!);
    const other = await seedAccount(world.server, { email: 'other@acme.example' });
    await seedMembership(world.server, { organizationId: orgId, userId: other.userId });
    const done = await failedLogin(identifier, { login: 'other@acme.example', password: 'pw-other' });
    expect(done.location?.searchParams.get('code')).toBeTruthy();
    const callback = done.visited.find((url) => url.includes('/sso/oidc-signin'))!;
    const replay = await fetch(callback, { redirect: 'manual' });
    expect(replay.status).toBe(400);
    expect(await replay.text()).toContain('cannot be used twice');

    const start = await cliAuthorizeUrl(world, identifier);
    const toIdp = (await fetch(start.url, { redirect: 'manual' })).headers.get('location')!;
    await world.server.database.db.updateTable('sso_flows').set({ expiration_date: new Date(Date.now() - 1000).toISOString() }).where('organization_id', '=', orgId).where('used', '=', false).execute();
    const late = await loginThroughIdp(toIdp, { login: 'other@acme.example', password: 'pw-other' });
    expect(late.status).toBe(400);
    expect(late.body).toContain('has expired');
    expect((await world.server.database.db.selectFrom('sso_codes').select('code_hash').where('organization_id', '=', orgId).execute()).length).toBe(1);
  });

  it('refuses an existing account that is not a member, and a link for another email than the account', async () => {
    const { orgId, identifier } = await ssoOrganization(world.server, world.idps[0]!);
    await seedAccount(world.server, { email: 'eve@acme.example' });
    const notMember = await failedLogin(identifier);
    expect(notMember.status).toBe(403);
    expect(notMember.body).toContain('is not a member of organization');

    const invited = await seedAccount(world.server, { email: `invited-${randomUUID().slice(0, 6)}@acme.example` });
    await seedMembership(world.server, { organizationId: orgId, userId: invited.userId });
    expect((await world.server.request('GET', '/api/accounts/sso/user-identifier')).status).toBe(401);
    const identifierRes = await world.server.request('GET', '/api/accounts/sso/user-identifier', { token: invited.accessToken });
    expect(identifierRes.status).toBe(200);
    const userIdentifier = identifierRes.body as string;
    expect(userIdentifier.startsWith(`${invited.userId},`)).toBe(true);
    const mismatch = await failedLogin(identifier, { login: 'other@acme.example', password: 'pw-other' }, { user_identifier: userIdentifier });
    expect(mismatch.status).toBe(403);
    expect(mismatch.body).toContain('answered for other@acme.example');
    const db = world.server.database.db;
    expect((await db.selectFrom('sso_users').select('id').where('organization_id', '=', orgId).execute()).length).toBe(0);
    expect((await db.selectFrom('sso_codes').select('code_hash').where('organization_id', '=', orgId).execute()).length).toBe(0);
  });

  it('refuses to link the account a user identifier names when the IdP gives no email', async () => {
    const { orgId, identifier } = await ssoOrganization(world.server, world.idps[0]!);
    const linked = await seedAccount(world.server, { email: `linked-${randomUUID().slice(0, 6)}@acme.example` });
    await seedMembership(world.server, { organizationId: orgId, userId: linked.userId });
    const userIdentifier = (await world.server.request('GET', '/api/accounts/sso/user-identifier', { token: linked.accessToken })).body as string;
    world.idps[0]!.idp.users.set('linked-sub', { sub: 'linked-sub', email: 'ignored@acme.example', password: 'pw-linked' });
    world.idps[0]!.idp.misbehave({ omitClaims: ['email'] });
    // A flow is not tied to its browser: a link handed to a colleague must not tie their identity to this account.
    const end = await failedLogin(identifier, { login: 'linked-sub', password: 'pw-linked' }, { user_identifier: userIdentifier });
    expect(end.status).toBe(403);
    expect(end.body).toContain('did not say which email address');
    expect(await world.server.database.db.selectFrom('sso_users').select('id').where('organization_id', '=', orgId).execute()).toEqual([]);
    const forged = await cliAuthorizeUrl(world, identifier, { user_identifier: `${linked.userId},not-a-token` });
    const refused = new URL((await fetch(forged.url, { redirect: 'manual' })).headers.get('location')!);
    expect(refused.searchParams.get('error_description')).toBe('Supplied userId and token did not match.');
  });

  it('answers a malformed callback with the page, not JSON', async () => {
    const res = await fetch(`${world.publicUrl}/sso/oidc-signin?state=a&state=b`, { redirect: 'manual' });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toContain('text/html');
    expect(await res.text()).toContain("The identity provider&#39;s answer is malformed");
  });

  it('answers 503 with Retry-After when the shared limits store is out of use in closed mode', async () => {
    const closed = await startTestServer({ env: { PUBLIC_URL: 'http://127.0.0.1:1', SECRETS_KEY, SSO_ALLOW_PRIVATE_ADDRESSES: 'true', REDIS_URL: 'redis://127.0.0.1:1', RATE_LIMIT_REDIS_FAILURE: 'closed', RATE_LIMIT_REDIS_TIMEOUT_MS: '200' } });
    try {
      const { identifier } = await ssoOrganization(closed, world.idps[0]!);
      const start = await cliAuthorizeUrl({ ...world, server: closed, publicUrl: closed.baseUrl }, identifier);
      const res = await fetch(start.url, { redirect: 'manual' });
      expect(res.status, await res.clone().text()).toBe(503);
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(res.headers.get('content-type')).toContain('text/html');
    } finally {
      await closed.close();
    }
  });

  it('shows a login to a provider on a private address without the address it resolved to, and logs it', async () => {
    const guarded = await startTestServer({ env: { SECRETS_KEY } });
    try {
      const { identifier } = await ssoOrganization(guarded, world.idps[0]!, { data: { authority: 'https://localhost:1' } });
      const start = await cliAuthorizeUrl({ ...world, server: guarded, publicUrl: guarded.baseUrl }, identifier);
      const res = await fetch(start.url, { redirect: 'manual' });
      expect(res.status).toBe(502);
      const page = await res.text();
      expect(page).toMatch(/localhost is on a private, loopback or link-local address/);
      expect(page).not.toMatch(/127\.0\.0\.1|::1|resolves to/);
      expect(guarded.logs.text()).toMatch(/localhost resolves to (127\.0\.0\.1|::1)/);
    } finally {
      await guarded.close();
    }
  });
});
