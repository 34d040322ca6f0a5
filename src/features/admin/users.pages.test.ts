import { afterEach, describe, expect, it } from 'vitest';
import { consoleServers } from '../../../test/support/admin-console.js';
import { createUser, loginAccount, passwordGrantForm, TEST_DEVICE, testAccount, type LoggedInUser } from '../../../test/support/accounts.js';
import { registerFinishBody } from '../../../test/support/bw-crypto.js';
import { seedMembership, seedOrganization } from '../../../test/support/orgs.js';
import { eventsOf, seedUser } from '../../../test/support/admin.js';
import { testClock } from '../../../test/support/clock.js';
import { memberOf, memberRow, orgWithOwner } from '../../../test/support/members.js';
import { counting } from '../../../test/support/query-count.js';
import { startSmtpSink, type SmtpSink } from '../../../test/support/smtp-sink.js';
import type { TestServer } from '../../../test/support/test-server.js';
import { EventSystemUser, EventType } from '../../platform/audit/event-type.js';
import { OrganizationUserStatusType, OrganizationUserType } from '../../platform/access/roles.js';
import { PolicyType } from '../policies/policy-type.js';
import { totpCode } from '../two-factor/totp.js';
import { listUsersPage } from './admin.repository.js';
import { enableAuthenticator } from '../../../test/support/two-factor.js';

const start = consoleServers();
let smtp: SmtpSink | undefined;
afterEach(async () => {
  await smtp?.close();
  smtp = undefined;
});

async function adminLog(s: TestServer) {
  return s.database.db.selectFrom('admin_events').select(['action', 'target_id', 'detail', 'ip_address']).where('action', 'not in', ['signed-in']).orderBy('date').execute();
}

describe('the users page', () => {
  it('lists accounts with their facts, searches by email or name, and pages by 50', async () => {
    const { server: s, browser } = await start();
    const alice = await createUser(s, { email: 'alice@example.com', name: 'Alice Liddell' });
    await s.request('POST', '/api/ciphers', { token: alice.accessToken, json: { type: 2, name: '2.AAAAAAAAAAAAAAAAAAAAAA==|AAAAAAAAAAAAAAAAAAAAAA==|AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=', secureNote: { type: 0 } } });
    const orgId = await seedOrganization(s, { name: 'Wonderland' });
    await seedMembership(s, { organizationId: orgId, userId: alice.userId, email: 'alice@example.com', type: OrganizationUserType.Owner });
    await seedUser(s, 'bob@example.com');

    const page = await browser.get('/admin/users');
    expect(page.statusCode).toBe(200);
    const row = /<tr>\s*<td data-label="Email"><a href="\/admin\/users\/[0-9a-f-]+">alice@example.com<\/a><\/td>[\s\S]*?<\/tr>/.exec(page.body)?.[0] ?? '';
    expect(row).toContain('Alice Liddell');
    expect(row).toContain('<td data-label="Items">1</td>');
    expect(row).toContain('<td data-label="Organizations">Wonderland</td>');
    expect(row).toMatch(/<td data-label="Last activity">\d{4}-\d\d-\d\d \d\d:\d\d<\/td>/);
    expect(row).toContain('<td data-label="Status">enabled</td>');
    expect(page.body).toContain('bob@example.com');

    const search = await browser.get('/admin/users?q=LIDDELL');
    expect(search.body).toContain('alice@example.com');
    expect(search.body).not.toContain('bob@example.com');
    // LIKE wildcards in the search are taken literally.
    expect((await browser.get('/admin/users?q=%25')).body).toContain('No users match this search.');

    for (let i = 0; i < 50; i++) await seedUser(s, `many${String(i).padStart(2, '0')}@example.com`);
    const first = await browser.get('/admin/users');
    expect(first.body).toContain('Page 1 of 2 (52 in all)');
    expect(first.body).toContain('href="/admin/users?page=2"');
    const second = await browser.get('/admin/users?page=2');
    expect((second.body.match(/<td data-label="Email">/g) ?? []).length).toBe(2);
  });

  it('answers bad query parameters with a 400 page naming the parameter', async () => {
    const { browser } = await start();
    const bad = await browser.get('/admin/users?page=0');
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('page');
    expect((await browser.get('/admin/users?notice=forged')).statusCode).toBe(400);
    expect((await browser.get('/admin/users/not-a-guid/delete')).statusCode).toBe(400);
    expect((await browser.get('/admin/users/6f1c0a52-6f5d-4c43-9d1e-2b1f2a6e4c11/delete')).statusCode).toBe(404);
  });
});

describe('the users page actions', () => {
  it('invites by mail with the registration link, and the link opens closed registration', async () => {
    smtp = await startSmtpSink();
    const { server: s, browser } = await start({ ...smtp.env, REGISTRATION_ENABLED: 'false' });
    const res = await browser.post('/admin/users/invite', { email: 'New.Person@Example.com' });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('Sent an invitation to new.person@example.com');
    const mail = await smtp.waitFor('new.person@example.com');
    const link = /https?:\/\/\S+#\/finish-signup\?\S+/.exec(mail.text)?.[0] ?? '';
    const token = new URL(link.replace('#/', '')).searchParams.get('token') ?? '';
    expect(token).not.toBe('');
    const account = testAccount('new.person@example.com');
    const registered = await s.request('POST', '/identity/accounts/register/finish', { json: registerFinishBody(account, { emailVerificationToken: token }) });
    expect(registered.status).toBe(200);
    expect(await adminLog(s)).toEqual([{ action: 'user-invited', target_id: null, detail: 'new.person@example.com', ip_address: '127.0.0.1' }]);
    // An email that has an account is refused, naming the field.
    const taken = await browser.post('/admin/users/invite', { email: 'new.person@example.com' });
    expect(taken.statusCode).toBe(400);
    expect(taken.body).toContain('already taken');
  });

  it('shows the link to pass on when SMTP is not configured, and refuses a malformed email', async () => {
    const { browser } = await start();
    const res = await browser.post('/admin/users/invite', { email: 'someone@example.com' });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('SMTP is not configured');
    expect(res.body).toMatch(/#\/finish-signup\?token=/);
    const bad = await browser.post('/admin/users/invite', { email: 'not an email' });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('email');
  });

  it('shows the link, and why, when the mail server refuses the invitation, and logs the invitation', async () => {
    const { server: s, browser } = await start({ SMTP_HOST: '127.0.0.1', SMTP_PORT: '9' });
    const res = await browser.post('/admin/users/invite', { email: 'Lost@Example.com' });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('The mail server did not take the invitation');
    expect(res.body).toMatch(/#\/finish-signup\?token=[^"]*email=lost%40example\.com/);
    expect((await adminLog(s)).map((e) => [e.action, e.detail])).toEqual([['user-invited', 'lost@example.com']]);
  });

  it('disables an account: it cannot log in and its tokens stop; enabling lets it log in again', async () => {
    const { server: s, browser } = await start();
    const user = await createUser(s, { email: 'carol@example.com' });
    expect((await s.request('GET', '/api/accounts/profile', { token: user.accessToken })).status).toBe(200);

    const off = await browser.post(`/admin/users/${user.userId}/disable`);
    expect(off.statusCode).toBe(303);
    expect(off.headers.location).toBe('/admin/users?notice=disabled');
    expect((await s.request('GET', '/api/accounts/profile', { token: user.accessToken })).status).toBe(401);
    const refresh = await s.request('POST', '/identity/connect/token', { form: { grant_type: 'refresh_token', client_id: 'cli', refresh_token: user.refreshToken } });
    expect(refresh.status).toBe(400);
    await expect(loginAccount(s, user.account)).rejects.toThrow(/login failed: 400/);
    expect((await browser.get('/admin/users')).body).toContain('<td data-label="Status">disabled</td>');
    expect((await browser.post(`/admin/users/${user.userId}/disable`)).headers.location).toBe('/admin/users?notice=unchanged');

    const on = await browser.post(`/admin/users/${user.userId}/enable`);
    expect(on.headers.location).toBe('/admin/users?notice=enabled');
    expect((await loginAccount(s, user.account)).accessToken).toBeTruthy();
    expect((await adminLog(s)).map((e) => [e.action, e.target_id])).toEqual([
      ['user-disabled', user.userId],
      ['user-enabled', user.userId],
    ]);
  });

  it('deauthorizes every session of an account (security stamp) without disabling it', async () => {
    const { server: s, browser } = await start();
    const user = await createUser(s, { email: 'dave@example.com' });
    const res = await browser.post(`/admin/users/${user.userId}/deauthorize`);
    expect(res.headers.location).toBe('/admin/users?notice=deauthorized');
    expect((await s.request('GET', '/api/accounts/profile', { token: user.accessToken })).status).toBe(401);
    expect((await loginAccount(s, user.account)).accessToken).toBeTruthy();
    expect((await adminLog(s)).map((e) => e.action)).toEqual(['user-sessions-ended']);
  });

  it('deletes an account only when its email is typed to confirm, and not an organization\'s sole owner', async () => {
    const { server: s, browser } = await start();
    const id = await seedUser(s, 'erin@example.com');
    const confirmPage = await browser.get(`/admin/users/${id}/delete`);
    expect(confirmPage.body).toContain('Type <strong>erin@example.com</strong> to confirm');
    const wrong = await browser.post(`/admin/users/${id}/delete`, { confirm: 'someone-else@example.com' });
    expect(wrong.statusCode).toBe(400);
    expect(await s.database.db.selectFrom('users').select('id').where('id', '=', id).executeTakeFirst()).toBeDefined();
    const missing = await browser.post(`/admin/users/${id}/delete`, {});
    expect(missing.statusCode).toBe(400);
    expect(missing.body).toContain('confirm');
    const done = await browser.post(`/admin/users/${id}/delete`, { confirm: 'erin@example.com' });
    expect(done.headers.location).toBe('/admin/users?notice=deleted');
    expect(await s.database.db.selectFrom('users').select('id').where('id', '=', id).executeTakeFirst()).toBeUndefined();

    const owner = await seedUser(s, 'owner@example.com');
    const orgId = await seedOrganization(s);
    await seedMembership(s, { organizationId: orgId, userId: owner, email: 'owner@example.com', type: OrganizationUserType.Owner });
    const refused = await browser.post(`/admin/users/${owner}/delete`, { confirm: 'owner@example.com' });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('sole owner');
    expect((await adminLog(s)).map((e) => [e.action, e.detail])).toEqual([['user-deleted', 'erin@example.com']]);
  });

  it('answers 404 for an action on an unknown user and 400 for a malformed id', async () => {
    const { browser } = await start();
    expect((await browser.post('/admin/users/6f1c0a52-6f5d-4c43-9d1e-2b1f2a6e4c11/disable')).statusCode).toBe(404);
    expect((await browser.post('/admin/users/nope/disable')).statusCode).toBe(400);
  });

  it('resends the verification mail, whose link verifies the email; a verified email is refused', async () => {
    smtp = await startSmtpSink();
    const { server: s, browser } = await start(smtp.env);
    const user = await createUser(s, { email: 'frank@example.com' });
    expect((await browser.get('/admin/users')).body).toContain('aria-label="Resend the verification mail to frank@example.com"');
    const res = await browser.post(`/admin/users/${user.userId}/resend-verification`);
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('Sent the verification link to frank@example.com');
    const mail = await smtp.waitFor('frank@example.com');
    const link = new URL((/https?:\/\/\S+#\/verify-email\?\S+/.exec(mail.text)?.[0] ?? '').replace('#/', ''));
    expect(link.searchParams.get('userId')).toBe(user.userId);
    const forged = await s.request('POST', '/api/accounts/verify-email-token', { json: { userId: user.userId, token: 'forged' } });
    expect(forged.status).toBe(400);
    const verified = await s.request('POST', '/api/accounts/verify-email-token', { json: { userId: user.userId, token: link.searchParams.get('token') } });
    expect(verified.status).toBe(200);
    expect((await s.request('GET', '/api/accounts/profile', { token: user.accessToken })).body.emailVerified).toBe(true);
    const again = await browser.post(`/admin/users/${user.userId}/resend-verification`);
    expect(again.statusCode).toBe(400);
    expect(again.body).toContain('already verified');
    expect((await adminLog(s)).map((e) => [e.action, e.detail])).toEqual([['user-verification-sent', 'frank@example.com']]);
  });

  it('lets a signed-in user ask for the verification mail themselves; the link is for their account only', async () => {
    smtp = await startSmtpSink();
    const { server: s } = await start(smtp.env);
    const user = await createUser(s, { email: 'gina@example.com' });
    const other = await createUser(s, { email: 'hank@example.com' });
    expect((await s.request('POST', '/api/accounts/verify-email', { token: user.accessToken })).status).toBe(200);
    const token = new URL((/https?:\/\/\S+#\/verify-email\?\S+/.exec((await smtp.waitFor('gina@example.com')).text)?.[0] ?? '').replace('#/', '')).searchParams.get('token');
    expect((await s.request('POST', '/api/accounts/verify-email-token', { json: { userId: other.userId, token } })).status).toBe(400);
    expect((await s.request('POST', '/api/accounts/verify-email-token', { json: { userId: 'not-a-guid', token } })).status).toBe(400);
    expect((await s.request('POST', '/api/accounts/verify-email-token', { json: { userId: user.userId, token } })).status).toBe(200);
    expect((await s.request('POST', '/api/accounts/verify-email', {})).status).toBe(401);
  });
});

describe('removing two-step login', () => {
  const clock = testClock(new Date('2026-11-24T10:00:10Z'));

  const startWithClock = () => start({}, { clock });

  /** Turns the authenticator on with the test clock's code; the next time step may log in. */
  async function enableAuthenticatorNow(s: TestServer, user: LoggedInUser): Promise<string> {
    const key = await enableAuthenticator(s, user, clock.now());
    clock.advance(30_000);
    return key;
  }

  const login = (s: TestServer, user: LoggedInUser, extra: Record<string, string> = {}) =>
    s.request('POST', '/identity/connect/token', { form: { ...passwordGrantForm(user.account, TEST_DEVICE), ...extra } });

  const rowOf = (html: string, email: string) => new RegExp(`<tr>\\s*<td data-label="Email"><a href="[^"]+">${email.replace(/[.]/g, '\\.')}</a></td>[\\s\\S]*?</tr>`).exec(html)?.[0] ?? '';

  it('shows the column, and the action turns every provider off through the two-factor feature', async () => {
    const { server: s, browser } = await startWithClock();
    const { orgId, owner } = await orgWithOwner(s);
    const member = await memberOf(s, orgId, { email: 'ivy@example.com' });
    const plain = await createUser(s, { email: 'jack@example.com' });
    const key = await enableAuthenticatorNow(s, member);
    expect((await s.request('PUT', `/api/organizations/${orgId}/policies/${PolicyType.TwoFactorAuthentication}`, { token: owner.accessToken, json: { enabled: true } })).status).toBe(200);
    expect((await s.request('POST', '/api/two-factor/get-recover', { token: member.accessToken, json: { masterPasswordHash: member.account.masterPasswordHash } })).status).toBe(200);
    const remembered = await login(s, member, { twoFactorToken: await totpCode(key, clock.now()), twoFactorProvider: '0', twoFactorRemember: '1' });
    expect(remembered.status).toBe(200);
    const rememberToken = String(remembered.body.TwoFactorToken);

    const page = (await browser.get('/admin/users')).body;
    expect(page).toContain('<th scope="col">Two-step login</th>');
    expect(rowOf(page, 'ivy@example.com')).toContain('<td data-label="Two-step login">on</td>');
    expect(rowOf(page, 'ivy@example.com')).toContain(`href="/admin/users/${member.userId}/remove-two-step-login"`);
    expect(rowOf(page, 'jack@example.com')).toContain('<td data-label="Two-step login">off</td>');
    expect(rowOf(page, 'jack@example.com')).not.toContain('remove-two-step-login');

    const confirmPage = await browser.get(`/admin/users/${member.userId}/remove-two-step-login`);
    expect(confirmPage.statusCode).toBe(200);
    expect(confirmPage.body).toContain('Type <strong>ivy@example.com</strong> to confirm');
    expect(confirmPage.body).toContain(`action="/admin/users/${member.userId}/remove-two-step-login"`);

    const providers = () => s.database.db.selectFrom('two_factor_providers').select('type').where('user_id', '=', member.userId).execute();
    // Refused without the confirmation, without the CSRF token, or without a session: nothing changes.
    const wrong = await browser.post(`/admin/users/${member.userId}/remove-two-step-login`, { confirm: 'jack@example.com' });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.body).toContain('ivy@example.com');
    const noCsrf = await browser.post(`/admin/users/${member.userId}/remove-two-step-login`, { confirm: 'ivy@example.com' }, { csrf: null });
    expect(noCsrf.statusCode).toBe(403);
    expect(noCsrf.body).toContain('CSRF');
    const anonymous = await s.app.inject({
      method: 'POST',
      url: `/admin/users/${member.userId}/remove-two-step-login`,
      payload: new URLSearchParams({ _csrf: browser.csrf, confirm: 'ivy@example.com' }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(anonymous.statusCode).toBe(401);
    expect(await providers()).toEqual([{ type: 0 }]);
    expect((await login(s, member)).body.error_description).toBe('Two factor required.');

    const done = await browser.post(`/admin/users/${member.userId}/remove-two-step-login`, { confirm: 'IVY@example.com' });
    expect(done.statusCode).toBe(303);
    expect(done.headers.location).toBe('/admin/users?notice=twoStepLoginRemoved');
    expect(await providers()).toEqual([]);
    expect(await s.database.db.selectFrom('two_factor_recovery').select('user_id').where('user_id', '=', member.userId).execute()).toEqual([]);
    expect(await s.database.db.selectFrom('two_factor_remember_tokens').select('user_id').where('user_id', '=', member.userId).execute()).toEqual([]);
    // The password alone logs in now.
    const plainLogin = await login(s, member);
    expect(plainLogin.status).toBe(200);
    expect(typeof plainLogin.body.access_token).toBe('string');
    // The policy revoked the member, as the system, and the two-factor feature's event is recorded.
    expect((await memberRow(s, member.memberId))?.status).toBe(OrganizationUserStatusType.Revoked);
    const revoked = await eventsOf(s, EventType.OrganizationUser_Revoked_TwoFactorNonCompliance);
    expect(revoked.filter((e) => e.organization_user_id === member.memberId).map((e) => e.system_user)).toEqual([EventSystemUser.TwoFactorDisabled]);
    const disabled = (await eventsOf(s, EventType.User_Disabled2fa)).filter((e) => e.user_id === member.userId);
    expect(disabled.map((e) => [e.acting_user_id, e.ip_address])).toEqual([[null, '127.0.0.1']]);
    expect((await adminLog(s)).filter((e) => e.action === 'user-two-step-login-removed')).toEqual([
      { action: 'user-two-step-login-removed', target_id: member.userId, detail: 'ivy@example.com', ip_address: '127.0.0.1' },
    ]);
    const after = await browser.get('/admin/users?notice=twoStepLoginRemoved');
    expect(after.body).toContain('Two-step login is off for the account');
    expect(rowOf(after.body, 'ivy@example.com')).toContain('<td data-label="Two-step login">off</td>');

    // The remember token issued before does not come back with the next provider.
    await enableAuthenticatorNow(s, member);
    expect((await login(s, member, { twoFactorToken: rememberToken, twoFactorProvider: '5' })).body.error_description).toBe('Two factor required.');

    // A user without two-step login gets a clear 400, and nothing is written.
    const none = await browser.post(`/admin/users/${plain.userId}/remove-two-step-login`, { confirm: 'jack@example.com' });
    expect(none.statusCode).toBe(400);
    expect(none.body).toContain('Two-step login is not on for this account');
    const nonePage = await browser.get(`/admin/users/${plain.userId}/remove-two-step-login`);
    expect(nonePage.statusCode).toBe(400);
    expect(nonePage.body).toContain('Two-step login is not on for this account');
    expect((await adminLog(s)).filter((e) => e.action === 'user-two-step-login-removed')).toHaveLength(1);
    expect((await eventsOf(s, EventType.User_Disabled2fa)).filter((e) => e.user_id === plain.userId)).toEqual([]);
    expect((await browser.post('/admin/users/6f1c0a52-6f5d-4c43-9d1e-2b1f2a6e4c11/remove-two-step-login', { confirm: 'x@example.com' })).statusCode).toBe(404);
    expect((await browser.post('/admin/users/nope/remove-two-step-login', { confirm: 'x@example.com' })).statusCode).toBe(400);
  });

  it('reads two-step login in the listing query itself, not one query a row', async () => {
    const { server: s } = await startWithClock();
    const users: LoggedInUser[] = [];
    for (let i = 0; i < 3; i++) users.push(await createUser(s, { email: `listed${i}@example.com` }));
    for (const user of users.slice(0, 2)) await enableAuthenticatorNow(s, user);
    const counted = counting(s.database.db);
    const { rows } = await listUsersPage(counted.db, 'listed', { offset: 0, limit: 50 });
    expect(counted.count()).toBe(2);
    // Made at the same instant of the test clock, so sorted here (the page orders by date, then id).
    expect(rows.map((r) => [r.email, Boolean(r.two_factor_enabled)]).sort()).toEqual([
      ['listed0@example.com', true],
      ['listed1@example.com', true],
      ['listed2@example.com', false],
    ]);
  });
});
