import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OrganizationUserStatusType } from '../../platform/access/roles.js';
import { EventType } from '../../platform/audit/event-type.js';
import { seedAccount } from '../../../test/support/accounts.js';
import { loginThroughIdp } from '../../../test/support/oidc-idp.js';
import { seedMembership } from '../../../test/support/orgs.js';
import { cliAuthorizeUrl, codeGrantForm, ssoOrganization, startSsoWorld, type SsoWorld } from '../../../test/support/sso-login.js';

/**
 * The SSO login over HTTP, against real OpenID Connect providers (oidc-provider) on loopback:
 * prevalidate → authorize → the IdP's login page → our callback → the client's redirect with our
 * code → the token endpoint → sync.
 */

const ENC = '2.AAAAAAAAAAAAAAAAAAAAAA==|AAAAAAAAAAAAAAAAAAAAAA==|AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=';
let world: SsoWorld;

beforeAll(async () => {
  world = await startSsoWorld([
    [
      { sub: 'ada-sub', email: 'ada@acme.example', name: 'Ada', password: 'pw-ada' },
      { sub: 'new-sub', email: 'newbie@acme.example', name: 'New Person', password: 'pw-new' },
      { sub: 'inv-sub', email: 'invited@acme.example', name: 'Invited', password: 'pw-inv' },
      { sub: 'stranger-sub', email: 'stranger@acme.example', password: 'pw-str' },
    ],
    [{ sub: 'bob-sub', email: 'bob@beta.example', name: 'Bob', password: 'pw-bob' }],
  ]);
});
afterAll(async () => world?.close());

async function collectionFor(orgId: string, memberId: string): Promise<string> {
  const id = randomUUID();
  const now = new Date().toISOString();
  const db = world.server.database.db;
  await db.insertInto('collections').values({ id, organization_id: orgId, name: ENC, external_id: null, type: 0, creation_date: now, revision_date: now }).execute();
  await db.insertInto('collection_users').values({ collection_id: id, organization_user_id: memberId, read_only: false, hide_passwords: false, manage: false }).execute();
  return id;
}

/** The whole login as the CLI does it; answers the token response and where the browser ended. */
async function ssoLogin(identifier: string, user: { login: string; password: string }, extra: Record<string, string> = {}) {
  const start = await cliAuthorizeUrl(world, identifier, extra);
  const browser = await loginThroughIdp(start.url, user);
  const code = browser.location?.searchParams.get('code');
  return { start, browser, code };
}

describe('SSO login through an OpenID Connect provider', () => {
  it('logs an existing member in through the IdP: code, token grant with device, and the organization collection in sync', async () => {
    const { orgId, identifier } = await ssoOrganization(world.server, world.idps[0]!);
    const ada = await seedAccount(world.server, { email: 'ada@acme.example' });
    const memberId = await seedMembership(world.server, { organizationId: orgId, userId: ada.userId, key: '4.aGVsbG8=' });
    const collectionId = await collectionFor(orgId, memberId);

    const { start, browser, code } = await ssoLogin(identifier, { login: 'ada@acme.example', password: 'pw-ada' });
    expect(browser.location?.origin).toBe('http://localhost:8065');
    expect(browser.location?.searchParams.get('state')).toBe(start.state);
    expect(code).toBeTruthy();

    const token = await world.server.request('POST', '/identity/connect/token', { form: codeGrantForm(code!, start.verifier) });
    expect(token.status, token.text).toBe(200);
    const sync = await world.server.request('GET', '/api/sync', { token: token.body.access_token });
    expect(sync.status).toBe(200);
    expect(sync.body.profile.id).toBe(ada.userId);
    const body = sync.body as { profile: { organizations: { id: string }[] }; collections: { id: string }[] };
    expect(body.profile.organizations.map((o) => o.id)).toContain(orgId);
    expect(body.collections.map((c) => c.id)).toContain(collectionId);

    const link = await world.server.database.db.selectFrom('sso_users').selectAll().where('organization_id', '=', orgId).executeTakeFirstOrThrow();
    expect(link).toMatchObject({ user_id: ada.userId, external_id: 'ada-sub' });
    const events = await world.server.database.db.selectFrom('events').select('type').where('organization_id', '=', orgId).execute();
    expect(events.map((e) => e.type)).toContain(EventType.OrganizationUser_FirstSsoLogin);
  });

  it('refuses the same code twice, and a wrong verifier, redirect_uri or client', async () => {
    const { orgId, identifier } = await ssoOrganization(world.server, world.idps[0]!);
    const ada = await seedAccount(world.server, { email: `ada+${randomUUID().slice(0, 6)}@acme.example` });
    await seedMembership(world.server, { organizationId: orgId, userId: ada.userId });
    world.idps[0]!.idp.users.set('ada2-sub', { sub: 'ada2-sub', email: ada.account.email, password: 'pw-ada2' });
    const { start, code } = await ssoLogin(identifier, { login: 'ada2-sub', password: 'pw-ada2' });

    const wrongVerifier = await world.server.request('POST', '/identity/connect/token', { form: codeGrantForm(code!, 'x'.repeat(64)) });
    expect(wrongVerifier.status).toBe(400);
    expect(wrongVerifier.body.error_description).toMatch(/code_verifier/);
    const wrongRedirect = await world.server.request('POST', '/identity/connect/token', { form: codeGrantForm(code!, start.verifier, 'http://localhost:8066') });
    expect(wrongRedirect.body.error_description).toMatch(/redirect_uri/);
    const wrongClient = await world.server.request('POST', '/identity/connect/token', { form: codeGrantForm(code!, start.verifier, 'http://localhost:8065', 'desktop') });
    expect(wrongClient.body.error_description).toMatch(/another client/);

    const first = await world.server.request('POST', '/identity/connect/token', { form: codeGrantForm(code!, start.verifier) });
    expect(first.status, first.text).toBe(200);
    const again = await world.server.request('POST', '/identity/connect/token', { form: codeGrantForm(code!, start.verifier) });
    expect(again.status).toBe(400);
    expect(again.body.error).toBe('invalid_grant');
  });

  it('makes an account just in time for a new email, as an Accepted user', async () => {
    const { orgId, identifier } = await ssoOrganization(world.server, world.idps[0]!);
    const { start, code } = await ssoLogin(identifier, { login: 'newbie@acme.example', password: 'pw-new' });
    const db = world.server.database.db;
    const user = await db.selectFrom('users').selectAll().where('email', '=', 'newbie@acme.example').executeTakeFirstOrThrow();
    expect(user).toMatchObject({ name: 'New Person', master_password_hash: null, key: null });
    // The IdP said email_verified: true; the official server trusts that only for a verified domain.
    expect(Boolean(user.email_verified)).toBe(false);
    const member = await db.selectFrom('organization_users').selectAll().where('organization_id', '=', orgId).where('user_id', '=', user.id).executeTakeFirstOrThrow();
    expect(member.status).toBe(OrganizationUserStatusType.Accepted);
    const token = await world.server.request('POST', '/identity/connect/token', { form: codeGrantForm(code!, start.verifier) });
    expect(token.status, token.text).toBe(200);
    // The client then asks the member to set a master password (or trusts a device).
    expect(token.body.UserDecryptionOptions).toMatchObject({ HasMasterPassword: false });
  });

  it('links an invitation for the email the IdP answers, and accepts it', async () => {
    const { orgId, identifier } = await ssoOrganization(world.server, world.idps[0]!);
    const invitationId = await seedMembership(world.server, { organizationId: orgId, email: 'invited@acme.example', status: OrganizationUserStatusType.Invited });
    const { code } = await ssoLogin(identifier, { login: 'invited@acme.example', password: 'pw-inv' });
    expect(code).toBeTruthy();
    const member = await world.server.database.db.selectFrom('organization_users').selectAll().where('id', '=', invitationId).executeTakeFirstOrThrow();
    expect(member.status).toBe(OrganizationUserStatusType.Accepted);
    expect(member.user_id).not.toBeNull();
  });

  it('sends a second organization to its own identity provider', async () => {
    const first = await ssoOrganization(world.server, world.idps[0]!);
    const second = await ssoOrganization(world.server, world.idps[1]!);
    const a = await cliAuthorizeUrl(world, first.identifier);
    const b = await cliAuthorizeUrl(world, second.identifier);
    const hop = async (url: string) => (await fetch(url, { redirect: 'manual' })).headers.get('location') ?? '';
    expect(await hop(a.url)).toMatch(new RegExp(`^${world.idps[0]!.idp.issuer}/`));
    expect(await hop(b.url)).toMatch(new RegExp(`^${world.idps[1]!.idp.issuer}/`));
    const { code } = await ssoLogin(second.identifier, { login: 'bob@beta.example', password: 'pw-bob' });
    expect(code).toBeTruthy();
  });

  it('takes the answer by form post and the claims from userinfo when the configuration says so', async () => {
    const { orgId, identifier } = await ssoOrganization(world.server, world.idps[0]!, { data: { redirectBehavior: 1, getClaimsFromUserInfoEndpoint: true, additionalEmailClaimTypes: 'mail, email' } });
    const ada = await seedAccount(world.server, { email: `post-${randomUUID().slice(0, 6)}@acme.example` });
    await seedMembership(world.server, { organizationId: orgId, userId: ada.userId });
    world.idps[0]!.idp.users.set('post-sub', { sub: 'post-sub', email: ada.account.email, password: 'pw-post' });
    const { browser, code } = await ssoLogin(identifier, { login: 'post-sub', password: 'pw-post' });
    expect(browser.visited.at(-1)).toBe(`${world.publicUrl}/sso/oidc-signin`);
    expect(code).toBeTruthy();
    expect(world.idps[0]!.idp.requests.some((r) => r.path === '/me')).toBe(true);
  });

  it('refuses an existing account invited by email until it accepts, then links it; refuses a revoked member, and a new email when no seat is left', async () => {
    const db = world.server.database.db;
    const { orgId, identifier } = await ssoOrganization(world.server, world.idps[0]!);
    const email = `acct-${randomUUID().slice(0, 6)}@acme.example`;
    const account = await seedAccount(world.server, { email });
    const invitationId = await seedMembership(world.server, { organizationId: orgId, email, status: OrganizationUserStatusType.Invited });
    world.idps[0]!.idp.users.set('acct-sub', { sub: 'acct-sub', email, password: 'pw-acct' });
    // Any admin can invite an address and point SSO at their own IdP: an invitation proves nothing.
    const early = await ssoLogin(identifier, { login: 'acct-sub', password: 'pw-acct' });
    expect(early.browser.status).toBe(403);
    expect(early.browser.body).toContain(`To accept your invite to Org ${identifier}, you must first log in using your master password.`);
    expect(await db.selectFrom('organization_users').select(['status', 'user_id']).where('id', '=', invitationId).executeTakeFirstOrThrow()).toEqual({ status: OrganizationUserStatusType.Invited, user_id: null });
    expect(await db.selectFrom('sso_users').select('id').where('organization_id', '=', orgId).execute()).toEqual([]);
    // The account accepts the invitation itself (as the web vault does), then SSO links it.
    await db.updateTable('organization_users').set({ status: OrganizationUserStatusType.Accepted, user_id: account.userId, email: null }).where('id', '=', invitationId).execute();
    expect((await ssoLogin(identifier, { login: 'acct-sub', password: 'pw-acct' })).code).toBeTruthy();
    expect(await db.selectFrom('sso_users').select('user_id').where('organization_id', '=', orgId).executeTakeFirstOrThrow()).toEqual({ user_id: account.userId });

    await db.updateTable('organization_users').set({ status: OrganizationUserStatusType.Revoked }).where('id', '=', invitationId).execute();
    const revoked = await ssoLogin(identifier, { login: 'acct-sub', password: 'pw-acct' });
    expect(revoked.browser.status).toBe(403);
    expect(revoked.browser.body).toContain('has been revoked');

    const full = await ssoOrganization(world.server, world.idps[0]!, { seats: 0 });
    world.idps[0]!.idp.users.set('late-sub', { sub: 'late-sub', email: 'late@acme.example', password: 'pw-late' });
    const noSeat = await ssoLogin(full.identifier, { login: 'late-sub', password: 'pw-late' });
    expect(noSeat.browser.status).toBe(403);
    expect(noSeat.browser.body).toContain('No seats available');
    expect(await db.selectFrom('users').select('id').where('email', '=', 'late@acme.example').execute()).toEqual([]);
  });

  it('refuses an address the IdP says is unverified for an existing account or an invitation', async () => {
    const db = world.server.database.db;
    const { orgId, identifier } = await ssoOrganization(world.server, world.idps[0]!);
    const email = `unv-${randomUUID().slice(0, 6)}@acme.example`;
    const account = await seedAccount(world.server, { email });
    await seedMembership(world.server, { organizationId: orgId, userId: account.userId });
    world.idps[0]!.idp.users.set('unv-sub', { sub: 'unv-sub', email, password: 'pw-unv', email_verified: false });
    const refused = await ssoLogin(identifier, { login: 'unv-sub', password: 'pw-unv' });
    expect(refused.browser.status).toBe(403);
    expect(refused.browser.body).toContain('is not verified');
    const invited = `unv-inv-${randomUUID().slice(0, 6)}@acme.example`;
    await seedMembership(world.server, { organizationId: orgId, email: invited, status: OrganizationUserStatusType.Invited });
    world.idps[0]!.idp.users.set('unv-inv-sub', { sub: 'unv-inv-sub', email: invited, password: 'pw-unv', email_verified: false });
    expect((await ssoLogin(identifier, { login: 'unv-inv-sub', password: 'pw-unv' })).browser.status).toBe(403);
    expect(await db.selectFrom('users').select('id').where('email', '=', invited).execute()).toEqual([]);
    expect(await db.selectFrom('sso_users').select('id').where('organization_id', '=', orgId).execute()).toEqual([]);
  });

  it('lets two callbacks for one new person at once end in one account and one link', async () => {
    const db = world.server.database.db;
    const { orgId, identifier } = await ssoOrganization(world.server, world.idps[0]!);
    const email = `twice-${randomUUID().slice(0, 6)}@acme.example`;
    world.idps[0]!.idp.users.set('twice-sub', { sub: 'twice-sub', email, password: 'pw-twice' });
    // Both browsers are at our callback with their IdP answers before either is followed.
    const answers = await Promise.all([0, 1].map(async () => {
      const start = await cliAuthorizeUrl(world, identifier);
      const browser = await loginThroughIdp(start.url, { login: 'twice-sub', password: 'pw-twice' }, { stopAtCallback: true });
      return browser.location!;
    }));
    const ends = await Promise.all(answers.map((url) => fetch(url, { redirect: 'manual' })));
    for (const end of ends) expect([302, 409], await end.clone().text()).toContain(end.status);
    expect(ends.some((end) => end.status === 302)).toBe(true);
    expect((await db.selectFrom('users').select('id').where('email', '=', email).execute()).length).toBe(1);
    expect((await db.selectFrom('sso_users').select('id').where('organization_id', '=', orgId).execute()).length).toBe(1);
  });

  it('answers two organizations making one new person at once with a page to start again, not a 500', async () => {
    const db = world.server.database.db;
    const orgs = [await ssoOrganization(world.server, world.idps[0]!), await ssoOrganization(world.server, world.idps[0]!)];
    const email = `both-${randomUUID().slice(0, 6)}@acme.example`;
    world.idps[0]!.idp.users.set('both-sub', { sub: 'both-sub', email, password: 'pw-both' });
    const answers = await Promise.all(orgs.map(async ({ identifier }) => {
      const start = await cliAuthorizeUrl(world, identifier);
      return (await loginThroughIdp(start.url, { login: 'both-sub', password: 'pw-both' }, { stopAtCallback: true })).location!;
    }));
    const ends = await Promise.all(answers.map((url) => fetch(url, { redirect: 'manual' })));
    const texts = await Promise.all(ends.map((end) => end.text()));
    // The first makes the account; the second either sees it (not a member there: 403) or
    // collides with it while it is being made (409, start again).
    expect(ends.map((end) => end.status).sort()).toContain(302);
    for (const [i, end] of ends.entries()) expect([302, 403, 409], texts[i]).toContain(end.status);
    if (ends.some((end) => end.status === 409)) expect(texts.join('')).toContain('Start the login again');
    expect((await db.selectFrom('users').select('id').where('email', '=', email).execute()).length).toBe(1);
  });

  it('stops at the token endpoint when the organization turned SSO off after the callback', async () => {
    const { orgId, identifier } = await ssoOrganization(world.server, world.idps[0]!);
    const ada = await seedAccount(world.server, { email: `off-${randomUUID().slice(0, 6)}@acme.example` });
    await seedMembership(world.server, { organizationId: orgId, userId: ada.userId });
    world.idps[0]!.idp.users.set('off-sub', { sub: 'off-sub', email: ada.account.email, password: 'pw-off' });
    const { start, code } = await ssoLogin(identifier, { login: 'off-sub', password: 'pw-off' });
    expect(code).toBeTruthy();
    await world.server.database.db.updateTable('sso_configs').set({ enabled: false }).where('organization_id', '=', orgId).execute();
    const token = await world.server.request('POST', '/identity/connect/token', { form: codeGrantForm(code!, start.verifier) });
    expect(token.status).toBe(400);
    expect(token.body.error_description).toContain('SSO configuration not enabled');
  });
});
