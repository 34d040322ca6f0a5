import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedAccount } from '../../../test/support/accounts.js';
import { loginThroughIdp } from '../../../test/support/oidc-idp.js';
import { seedMembership } from '../../../test/support/orgs.js';
import { cliAuthorizeUrl, codeGrantForm, SECRETS_KEY, ssoOrganization, startSsoWorld, type SsoWorld } from '../../../test/support/sso-login.js';
import { startTestServer } from '../../../test/support/test-server.js';

/**
 * Two instances on one database behind one PUBLIC_URL: a login started on one is finished by the
 * other, because its state is in the database. And a loop of logins from one address is cut off
 * before it floods the identity provider.
 */

let world: SsoWorld;
beforeAll(async () => {
  world = await startSsoWorld([[{ sub: 'fleet-sub', email: 'fleet@acme.example', password: 'pw-fleet' }]], {}, true);
});
afterAll(async () => world?.close());

describe('SSO login across a fleet', () => {
  it('takes the callback on another instance than the one the login started on', async () => {
    const { orgId, identifier } = await ssoOrganization(world.server, world.idps[0]!);
    const member = await seedAccount(world.server, { email: 'fleet@acme.example' });
    await seedMembership(world.server, { organizationId: orgId, userId: member.userId });
    const other = world.other!;
    expect(other.baseUrl).not.toBe(world.publicUrl);
    // The authorize request goes to the second instance; the IdP sends the browser back to PUBLIC_URL, the first.
    const start = await cliAuthorizeUrl(world, identifier, {}, other.baseUrl);
    const browser = await loginThroughIdp(start.url, { login: 'fleet-sub', password: 'pw-fleet' });
    expect(browser.visited[0]!.startsWith(other.baseUrl)).toBe(true);
    expect(browser.visited.some((url) => url.startsWith(`${world.publicUrl}/sso/oidc-signin`))).toBe(true);
    const code = browser.location?.searchParams.get('code');
    expect(code).toBeTruthy();
    const token = await other.request('POST', '/identity/connect/token', { form: codeGrantForm(code!, start.verifier) });
    expect(token.status, token.text).toBe(200);
  });

  it('cuts off a loop of logins from one address with a 429 page', async () => {
    const { identifier } = await ssoOrganization(world.server, world.idps[0]!);
    const start = await cliAuthorizeUrl(world, identifier);
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) statuses.push((await fetch(start.url, { redirect: 'manual' })).status);
    expect(statuses.slice(0, 10).every((s) => s === 302)).toBe(true);
    expect(statuses.at(-1)).toBe(429);
    const last = await fetch(start.url, { redirect: 'manual' });
    expect(last.headers.get('retry-after')).toBeTruthy();
    expect(await last.text()).toContain('Too many single sign-on attempts');
  });

  it('says at start and at login that an instance has another SECRETS_KEY than the one that sealed the secrets', async () => {
    const { identifier } = await ssoOrganization(world.server, world.idps[0]!);
    const databaseUrl = world.server.config.databaseUrl;
    const env = { PUBLIC_URL: world.publicUrl, SSO_ALLOW_PRIVATE_ADDRESSES: 'true' };
    const stray = await startTestServer({ env: { ...env, SECRETS_KEY: randomBytes(32).toString('base64') }, databaseUrl });
    const same = await startTestServer({ env: { ...env, SECRETS_KEY }, databaseUrl });
    try {
      expect(stray.logs.text()).toMatch(/secrets key cannot open the secrets sealed in the database.*SECRETS_KEY/);
      // An instance with the fleet's key agrees (and leaves the canary the stray one is checked against next time).
      expect(same.logs.text()).not.toMatch(/cannot open the secrets sealed/);
      const start = await cliAuthorizeUrl({ ...world, server: stray }, identifier, {}, stray.baseUrl);
      const res = await fetch(start.url, { redirect: 'manual' });
      expect(res.status).toBe(502);
      expect(await res.text()).toContain('SECRETS_KEY');
      expect(stray.logs.lines.filter((line) => line.includes('cannot open the secrets sealed')).length).toBe(2);
      // Checked against the canary from now on.
      expect(await world.server.database.db.selectFrom('server_keys').select('purpose').where('purpose', '=', 'secrets-key-check').execute()).toHaveLength(1);
      const later = await startTestServer({ env: { ...env, SECRETS_KEY: randomBytes(32).toString('base64') }, databaseUrl });
      await later.close();
      expect(later.logs.text()).toMatch(/cannot open the secrets sealed/);
    } finally {
      await same.close();
      await stray.close();
    }
  });
});
