import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { seedAccount } from '../support/accounts.js';
import { seedMembership } from '../support/orgs.js';
import { testService } from '../support/services.js';
import { cliAuthorizeUrl, codeGrantForm, ssoOrganization, startSsoWorld, type SsoWorld } from '../support/sso-login.js';
import { CHROMIUM_ARGS } from '../support/virtual-authenticator.js';

/**
 * An SSO login in a real browser (Debian's Chromium through playwright-core), as `bw login --sso`
 * has it walk: Strongroom's authorize URL, the IdP's own login page typed into, the callback, and
 * the browser sent on to the CLI's local port with the code; and the error page under its CSP.
 */
const CHROMIUM = testService('chromium');

let world: SsoWorld;
let browser: Browser;
let page: Page;
const cspViolations: string[] = [];

describe.skipIf(!CHROMIUM)('an SSO login in Chromium', { timeout: 120_000 }, () => {
  beforeAll(async () => {
    world = await startSsoWorld([[{ sub: 'grace-sub', email: 'grace@acme.example', name: 'Grace', password: 'pw-grace' }]]);
    // localhost:8065 never resolves in this browser: bw-sso.browser.test.ts may have the real bw
    // waiting on that port at the same time, and a foreign code would end its login. (page.route
    // does not see requests a redirect leads to, so it cannot keep them off the port.)
    browser = await chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS, '--host-resolver-rules=MAP localhost:8065 ~NOTFOUND'] });
  }, 120_000);

  // Each test in a fresh browser context: the IdP's session cookie would skip its login page.
  beforeEach(async () => {
    await page?.close();
    page = await browser.newPage();
    page.setDefaultTimeout(10_000);
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
    });
  });

  afterAll(async () => {
    await browser?.close();
    await world?.close();
  });

  it('walks the IdP login page and lands on the CLI port with a code the token endpoint takes', async () => {
    const { orgId, identifier } = await ssoOrganization(world.server, world.idps[0]!);
    const grace = await seedAccount(world.server, { email: 'grace@acme.example' });
    await seedMembership(world.server, { organizationId: orgId, userId: grace.userId });
    const start = await cliAuthorizeUrl(world, identifier);
    await page.goto(start.url);
    await page.fill('#login', 'grace@acme.example');
    await page.fill('#password', 'pw-grace');
    // The browser is sent to the CLI's local port; the request is what the CLI would take (it goes
    // no further: see the launch above).
    const [toCli] = await Promise.all([page.waitForRequest((request) => request.url().startsWith('http://localhost:8065/')), page.click('#submit')]);
    const landed = new URL(toCli.url());
    expect(landed.searchParams.get('state')).toBe(start.state);
    const token = await world.server.request('POST', '/identity/connect/token', { form: codeGrantForm(landed.searchParams.get('code')!, start.verifier) });
    expect(token.status, token.text).toBe(200);
  });

  it('shows a plain error page, under its CSP, for a login that cannot go on', async () => {
    const { identifier } = await ssoOrganization(world.server, world.idps[0]!);
    world.idps[0]!.idp.misbehave({ omitClaims: ['email'] });
    try {
      const start = await cliAuthorizeUrl(world, identifier);
      await page.goto(start.url);
      await page.fill('#login', 'grace-sub');
      await page.fill('#password', 'pw-grace');
      await Promise.all([page.waitForURL(/\/sso\/oidc-signin/), page.click('#submit')]);
      await expect.poll(() => page.textContent('#problem')).toContain('Cannot find email claim');
      expect(await page.textContent('h1')).toBe('Single sign-on failed');
      expect(cspViolations).toEqual([]);
    } finally {
      world.idps[0]!.idp.misbehave({});
    }
  });
});
