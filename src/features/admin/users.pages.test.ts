import { afterEach, describe, expect, it } from 'vitest';
import { adminTokenHash, signIn } from '../../../test/support/admin-console.js';
import { createUser, loginAccount, testAccount } from '../../../test/support/accounts.js';
import { registerFinishBody } from '../../../test/support/bw-crypto.js';
import { seedMembership, seedOrganization } from '../../../test/support/orgs.js';
import { seedUser } from '../../../test/support/admin.js';
import { startSmtpSink, type SmtpSink } from '../../../test/support/smtp-sink.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { OrganizationUserType } from '../organizations/roles.js';

let server: TestServer | undefined;
let smtp: SmtpSink | undefined;
afterEach(async () => {
  await server?.close();
  await smtp?.close();
  server = undefined;
  smtp = undefined;
});

async function start(env: Record<string, string> = {}) {
  server = await startTestServer({ env: { ADMIN_TOKEN: await adminTokenHash(), ...env } });
  return { server, browser: await signIn(server.app) };
}

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
    const row = /<tr>\s*<td data-label="Email">alice@example.com<\/td>[\s\S]*?<\/tr>/.exec(page.body)?.[0] ?? '';
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
