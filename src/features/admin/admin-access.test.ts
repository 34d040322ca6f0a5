import { afterEach, describe, expect, it } from 'vitest';
import { testClock } from '../../../test/support/clock.js';
import { ADMIN_TOKEN, adminTokenHash, cookieFrom, csrfIn, signIn } from '../../../test/support/admin-console.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { hashAdminToken, verifyAdminToken } from './admin-token.js';
import { runAdminTokenCommand } from '../../commands/admin-token.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(env: Record<string, string> = {}, clock?: ReturnType<typeof testClock>) {
  server = await startTestServer({ env: { ADMIN_TOKEN: await adminTokenHash(), ...env }, ...(clock ? { clock } : {}) });
  return server;
}

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
const FORM = 'application/x-www-form-urlencoded';

describe('the admin token', () => {
  it('is stored as an Argon2id PHC string that verifies only the token it was made from', async () => {
    const hash = await hashAdminToken('a-token-of-my-own-choosing');
    expect(hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(await verifyAdminToken('a-token-of-my-own-choosing', hash)).toBe(true);
    expect(await verifyAdminToken('a-token-of-my-own-choosinG', hash)).toBe(false);
    expect(await verifyAdminToken('a-token-of-my-own-choosing', 'plain-text')).toBe(false);
  });

  it('`strongroom admin-token` prints a random token and the ADMIN_TOKEN setting of its hash', async () => {
    const out = await runAdminTokenCommand([]);
    const token = /Admin token .*: (\S+)/.exec(out)?.[1] ?? '';
    const hash = /ADMIN_TOKEN='([^']+)'/.exec(out)?.[1] ?? '';
    expect(token).toHaveLength(43);
    expect(await verifyAdminToken(token, hash)).toBe(true);
    await expect(runAdminTokenCommand(['--token', 'short'])).rejects.toThrow(/at least 16/);
  });
});

describe('access to the admin console', () => {
  it('is off (404) when ADMIN_TOKEN is not set, and when ADMIN_ENABLED is false', async () => {
    server = await startTestServer();
    expect((await server.app.inject({ method: 'GET', url: '/admin/login' })).statusCode).toBe(404);
    expect((await server.app.inject({ method: 'GET', url: '/admin/users' })).statusCode).toBe(404);
    await server.close();
    server = await startTestServer({ env: { ADMIN_TOKEN: await adminTokenHash(), ADMIN_ENABLED: 'false' } });
    expect((await server.app.inject({ method: 'GET', url: '/admin/login' })).statusCode).toBe(404);
  });

  it('refuses to start with a plain token instead of its hash, without echoing it', () => {
    return expect(startTestServer({ env: { ADMIN_TOKEN: 'my-plain-admin-token' } })).rejects.toThrow(/ADMIN_TOKEN: must be an Argon2id PHC string.*\(got \(hidden\)\)/);
  });

  it('sends pages with a strict content security policy and no caching', async () => {
    const { app } = await start();
    const page = await app.inject({ method: 'GET', url: '/admin/login' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    expect(page.headers['content-security-policy']).toContain("default-src 'none'");
    expect(page.headers['content-security-policy']).not.toContain('unsafe-inline');
    expect(page.headers['x-frame-options']).toBe('DENY');
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.body).toContain('<label for="token">');
  });

  it('redirects to the sign-in page without a session, and refuses a form post with 401', async () => {
    const { app } = await start();
    const res = await app.inject({ method: 'GET', url: '/admin/users' });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/admin/login');
    const post = await app.inject({ method: 'POST', url: '/admin/logout', payload: form({ _csrf: 'x' }), headers: { 'content-type': FORM, cookie: 'strongroom_admin=forged' } });
    expect(post.statusCode).toBe(401);
    expect(post.body).toContain('sign in again');
  });

  it('refuses a wrong token (401, recorded in the admin log) and signs in with the right one', async () => {
    const { app } = await start();
    const page = await app.inject({ method: 'GET', url: '/admin/login' });
    const pre = cookieFrom(page, 'strongroom_admin_csrf');
    expect(pre?.attributes).toMatch(/HttpOnly/);
    expect(pre?.attributes).toMatch(/SameSite=Strict/);
    const headers = { 'content-type': FORM, cookie: `strongroom_admin_csrf=${pre?.value ?? ''}` };
    const wrong = await app.inject({ method: 'POST', url: '/admin/login', payload: form({ _csrf: csrfIn(page.body), token: 'not-the-token' }), headers });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.body).toContain('That is not the admin token.');
    expect(cookieFrom(wrong, 'strongroom_admin')).toBeUndefined();

    const right = await app.inject({ method: 'POST', url: '/admin/login', payload: form({ _csrf: csrfIn(page.body), token: ADMIN_TOKEN }), headers });
    expect(right.statusCode).toBe(303);
    expect(right.headers.location).toBe('/admin/users');
    const session = cookieFrom(right, 'strongroom_admin');
    expect(session?.attributes).toMatch(/HttpOnly/);
    expect(session?.attributes).toMatch(/SameSite=Strict/);
    expect(session?.attributes).toMatch(/Max-Age=1200/);
    expect(session?.attributes).toMatch(/Path=\/admin/);
    // Plain HTTP here: the Secure flag would make the browser drop the cookie.
    expect(session?.attributes).not.toMatch(/Secure/);
    const users = await app.inject({ method: 'GET', url: '/admin/users', headers: { cookie: `strongroom_admin=${session?.value ?? ''}` } });
    expect(users.statusCode).toBe(200);

    const log = await server!.database.db.selectFrom('admin_events').select(['action', 'ip_address']).orderBy('date').execute();
    expect(log).toEqual([
      { action: 'sign-in-refused', ip_address: '127.0.0.1' },
      { action: 'signed-in', ip_address: '127.0.0.1' },
    ]);
    // Only a hash of the cookie is stored.
    const stored = await server!.database.db.selectFrom('admin_sessions').select('id').execute();
    expect(stored.map((s) => s.id)).not.toContain(session?.value);
  });

  it('marks the session cookie Secure over HTTPS (X-Forwarded-Proto from a trusted proxy)', async () => {
    const { app } = await start({ TRUST_PROXY: 'true' });
    const browser = await signIn(app, { headers: { 'x-forwarded-proto': 'https' } });
    expect(browser.cookie).toMatch(/^strongroom_admin=.+/);
    const page = await app.inject({ method: 'GET', url: '/admin/login', headers: { 'x-forwarded-proto': 'https' } });
    expect(cookieFrom(page, 'strongroom_admin_csrf')?.attributes).toMatch(/Secure/);
  });

  it('throttles sign-in: five attempts from an address, then 429 with Retry-After even for the right token', async () => {
    const { app } = await start();
    const page = await app.inject({ method: 'GET', url: '/admin/login' });
    const headers = { 'content-type': FORM, cookie: `strongroom_admin_csrf=${cookieFrom(page, 'strongroom_admin_csrf')?.value ?? ''}` };
    const attempt = (token: string) => app.inject({ method: 'POST', url: '/admin/login', payload: form({ _csrf: csrfIn(page.body), token }), headers });
    for (let i = 0; i < 5; i++) expect((await attempt(`wrong-${i}`)).statusCode).toBe(401);
    const refused = await attempt(ADMIN_TOKEN);
    expect(refused.statusCode).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    // Another address is not held back by this one.
    const other = await signIn(app, { remoteAddress: '127.0.0.9' });
    expect(other.csrf).toBeTruthy();
  });

  it('ends a session after ADMIN_SESSION_MINUTES', async () => {
    const clock = testClock();
    const { app } = await start({ ADMIN_SESSION_MINUTES: '5' }, clock);
    const browser = await signIn(app);
    expect((await browser.get('/admin/users')).statusCode).toBe(200);
    clock.advance(5 * 60_000 + 1000);
    const expired = await browser.get('/admin/users');
    expect(expired.statusCode).toBe(303);
    expect(expired.headers.location).toBe('/admin/login');
    expect((await browser.post('/admin/logout')).statusCode).toBe(401);
  });

  it('refuses a form without its CSRF token, or with another session\'s, and changes nothing', async () => {
    const { app } = await start();
    const browser = await signIn(app);
    const missing = await browser.post('/admin/users/invite', { email: 'new@example.com' }, { csrf: null });
    expect(missing.statusCode).toBe(403);
    expect(missing.body).toContain('CSRF');
    const other = await signIn(app);
    const foreign = await browser.post('/admin/users/invite', { email: 'new@example.com' }, { csrf: other.csrf });
    expect(foreign.statusCode).toBe(403);
    // The sign-in form needs its own token too.
    const noToken = await app.inject({ method: 'POST', url: '/admin/login', payload: form({ token: ADMIN_TOKEN }), headers: { 'content-type': FORM } });
    expect(noToken.statusCode).toBe(403);
    expect(await server!.database.db.selectFrom('admin_events').select('action').where('action', '=', 'user-invited').execute()).toEqual([]);
  });

  it('answers 403 to an address outside ADMIN_ALLOWED_IPS, and serves one inside it', async () => {
    const { app } = await start({ ADMIN_ALLOWED_IPS: '10.0.0.0/8, ::1' });
    const outside = await app.inject({ method: 'GET', url: '/admin/login', remoteAddress: '192.168.1.5' });
    expect(outside.statusCode).toBe(403);
    expect(outside.body).toContain('ADMIN_ALLOWED_IPS');
    const inside = await app.inject({ method: 'GET', url: '/admin/login', remoteAddress: '10.2.3.4' });
    expect(inside.statusCode).toBe(200);
    // A session made from an allowed address does not open the console elsewhere.
    const browser = await signIn(app, { remoteAddress: '10.2.3.4' });
    const moved = await app.inject({ method: 'GET', url: '/admin/users', headers: { cookie: browser.cookie }, remoteAddress: '192.168.1.5' });
    expect(moved.statusCode).toBe(403);
  });

  it('rejects a bad ADMIN_ALLOWED_IPS entry at start', () => {
    return expect(startTestServer({ env: { ADMIN_ALLOWED_IPS: '10.0.0.0/99' } })).rejects.toThrow(/ADMIN_ALLOWED_IPS/);
  });

  it('signs out: the session cookie stops working', async () => {
    const { app } = await start();
    const browser = await signIn(app);
    const out = await browser.post('/admin/logout');
    expect(out.statusCode).toBe(303);
    expect((await browser.get('/admin/users')).statusCode).toBe(303);
  });

  it('answers an unknown console page 404 as a page, and serves the bundled chart library', async () => {
    const { app } = await start();
    const browser = await signIn(app);
    const missing = await browser.get('/admin/nothing-here');
    expect(missing.statusCode).toBe(404);
    expect(missing.headers['content-type']).toContain('text/html');
    const uplot = await app.inject({ method: 'GET', url: '/admin/assets/uplot.js' });
    expect(uplot.statusCode).toBe(200);
    expect(uplot.body).toContain('uPlot');
    expect((await app.inject({ method: 'GET', url: '/admin/assets/nope.js' })).statusCode).toBe(404);
  });
});
