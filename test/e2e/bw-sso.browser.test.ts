/**
 * `bw login --sso` end to end: the official CLI, Chromium, a real OpenID Connect provider
 * (oidc-provider on loopback, test/support/oidc-idp.ts) and Strongroom over HTTPS.
 *
 * An owner configures single sign-on for an organization through the official routes and invites
 * an existing account, which accepts with the mailed token as the web vault does (an SSO login
 * does not accept an existing account's invitation). `bw login --sso` opens Strongroom's SSO start page (no web vault is
 * installed: the landing page stands in for the web vault's `#/sso`) through `xdg-open`, which the
 * test replaces with a script that hands the URL over. Chromium opens it, types the organization's
 * SSO identifier, signs in on the identity provider's own page and lands on bw's callback at
 * http://localhost:8065; bw redeems the code, the login linking the accepted member. The member is confirmed, unlocks with the master
 * password and lists the organization's item. One server, one Chromium, the steps in order.
 *
 * bw listens on port 8065 only (it tries 8065–8070 in a loop, but a busy port crashes it rather
 * than moving on): nothing else in the suite may use it (docs/sso.md, "The clients").
 */
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SSO_IDENTIFIER_STORAGE_KEY } from '../../src/features/web-vault/sso-start.script.js';
import { createUser, type LoggedInUser } from '../support/accounts.js';
import { createBwCli, type BwCli, type BwRunResult } from '../support/bw-cli.js';
import { encryptText, rsaEncryptToEncString, type SymmetricKey } from '../support/bw-crypto.js';
import { startOidcIdp, type OidcIdp } from '../support/oidc-idp.js';
import { invitationFrom, startSmtpSink, type SmtpSink } from '../support/smtp-sink.js';
import { createOrganization } from '../support/org-founding.js';
import { freePort } from '../support/program.js';
import { testService } from '../support/services.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { createTestTls, type TestTls } from '../support/tls.js';
import { CHROMIUM_ARGS } from '../support/virtual-authenticator.js';

const CHROMIUM = testService('chromium');
const SLOW = 120_000;
/** The one port bw login --sso listens on. */
const BW_CALLBACK_PORT = 8065;

const IDENTIFIER = 'acme-sso';
const MEMBER_EMAIL = 'sso-member@example.com';
const IDP_PASSWORD = 'idp-password-of-the-member';
const IDP_CLIENT = { client_id: 'strongroom-e2e', client_secret: randomBytes(24).toString('base64url') };
const ITEM_NAME = 'Deploy key (shared through SSO)';

/** Fails at once, naming the port, when something already listens where bw must. */
async function assertPortFree(port: number): Promise<void> {
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', (error: NodeJS.ErrnoException) =>
      reject(new Error(`port ${port} is in use (${error.code}): bw login --sso listens there and nowhere else; stop what holds it`)),
    );
    probe.listen(port, 'localhost', () => resolve());
  });
  await new Promise((resolve) => probe.close(resolve));
}

/**
 * A folder with an `xdg-open` that appends the URL bw opens to a file, for PATH: bw runs
 * `xdg-open <url>` synchronously on Linux and does not read BROWSER.
 */
async function fakeOpener(): Promise<{ dir: string; opened(): Promise<string[]> }> {
  const dir = await mkdtemp(join(tmpdir(), 'strongroom-xdg-open-'));
  const log = join(dir, 'opened.txt');
  await writeFile(join(dir, 'xdg-open'), `#!/bin/sh\nprintf '%s\\n' "$1" >> '${log}'\n`);
  await chmod(join(dir, 'xdg-open'), 0o755);
  return {
    dir,
    opened: async () => (await readFile(log, 'utf8').catch(() => '')).split('\n').filter(Boolean),
  };
}

/** Waits for the page to reach `where`; a failure says where it stopped and what the page showed. */
async function arrive(page: Page, at: (url: URL) => boolean, where: string): Promise<void> {
  try {
    await page.waitForURL(at, { timeout: 20_000 });
  } catch {
    const shown = await page.evaluate(() => (globalThis as unknown as { document: { body: { innerText: string } } }).document.body.innerText).catch(() => '');
    throw new Error(`the browser did not reach ${where}: it is at ${page.url()}, showing: ${shown.slice(0, 500)}`);
  }
}

describe.skipIf(!CHROMIUM)('bw login --sso in Chromium, through the SSO start page and a real identity provider', { timeout: SLOW }, () => {
  let tls: TestTls;
  let idp: OidcIdp;
  let server: TestServer;
  let owner: LoggedInUser;
  let member: LoggedInUser;
  let orgId: string;
  let orgKey: SymmetricKey;
  let memberId: string;
  let opener: Awaited<ReturnType<typeof fakeOpener>>;
  let bw: BwCli;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let sink: SmtpSink;

  beforeAll(async () => {
    await assertPortFree(BW_CALLBACK_PORT);
    tls = await createTestTls();
    const port = await freePort();
    const publicUrl = `https://127.0.0.1:${port}`;
    idp = await startOidcIdp({
      clients: [{ ...IDP_CLIENT, redirect_uris: [`${publicUrl}/sso/oidc-signin`] }],
      users: [{ sub: 'idp-user-1', email: MEMBER_EMAIL, name: 'SSO Member', password: IDP_PASSWORD }],
    });
    sink = await startSmtpSink();
    [server, browser, opener] = await Promise.all([
      startTestServer({ tls, port, env: { DEPLOYMENT: 'cloud', ...sink.env, PUBLIC_URL: publicUrl, SECRETS_KEY: randomBytes(32).toString('base64'), SSO_ALLOW_PRIVATE_ADDRESSES: 'true' } }),
      chromium.launch({ executablePath: CHROMIUM ?? '', args: CHROMIUM_ARGS }),
      fakeOpener(),
    ]);
    // The test CA is the CLI's to trust (NODE_EXTRA_CA_CERTS); the browser is told to accept it.
    context = await browser.newContext({ ignoreHTTPSErrors: true });
    page = await context.newPage();

    owner = await createUser(server, { email: 'sso-owner@example.com', name: 'Owner', derivation: 'real' });
    member = await createUser(server, { email: MEMBER_EMAIL, name: 'SSO Member', derivation: 'real' });
    ({ id: orgId, orgKey } = await createOrganization(server, owner, { name: 'Acme SSO' }));
    bw = await createBwCli({ serverUrl: server.baseUrl, caPath: tls.caPath });
    await bw.configServer();
  }, SLOW);

  afterAll(async () => {
    await bw?.dispose();
    await browser?.close();
    await server?.close();
    await idp?.close();
    await sink?.close();
    if (opener) await rm(opener.dir, { recursive: true, force: true });
  });

  /** Sends a request as the owner and expects a 200. */
  async function asOwner(method: 'GET' | 'POST' | 'PUT', path: string, json?: unknown) {
    const res = await server.request(method, path, { token: owner.accessToken, ...(json === undefined ? {} : { json }) });
    expect(res.status, `${method} ${path}: ${res.text}`).toBe(200);
    return res.body as Record<string, unknown>;
  }

  it('logs an invited member in with bw login --sso, and bw unlocks and lists the organization item', async () => {
    // The owner configures OpenID Connect and names the organization's SSO identifier, as the
    // web vault's SSO settings page does.
    await asOwner('POST', `/api/organizations/${orgId}/sso`, {
      enabled: true,
      identifier: IDENTIFIER,
      data: { configType: 1, memberDecryptionType: 0, authority: idp.issuer, clientId: IDP_CLIENT.client_id, clientSecret: IDP_CLIENT.client_secret, redirectBehavior: 0 },
    });

    // An item in the founding collection, and the existing account invited with access to it.
    const collections = (await asOwner('GET', `/api/organizations/${orgId}/collections`)).data as { id: string }[];
    const collectionId = collections[0]?.id ?? '';
    await asOwner('POST', '/api/ciphers/create', {
      cipher: { type: 1, organizationId: orgId, name: encryptText(ITEM_NAME, orgKey), login: { username: encryptText('deploy', orgKey) }, reprompt: 0, favorite: false },
      collectionIds: [collectionId],
    });
    await asOwner('POST', `/api/organizations/${orgId}/users/invite`, {
      emails: [MEMBER_EMAIL],
      type: 2,
      collections: [{ id: collectionId, readOnly: true, hidePasswords: false, manage: false }],
      groups: [],
    });
    // The member accepts with the mailed token (logged in, as the web vault does): an SSO login
    // does not accept an existing account's invitation.
    const invitation = invitationFrom(await sink.waitFor(MEMBER_EMAIL));
    const accept = await server.request('POST', `/api/organizations/${orgId}/users/${invitation.organizationUserId}/accept`, { token: member.accessToken, json: { token: invitation.token } });
    expect(accept.status, accept.text).toBe(200);

    // bw starts: it listens on localhost:8065 and opens the start page with xdg-open.
    // BW_NOINTERACTION must be off: without it bw ignores --sso and asks for an email.
    const login: Promise<BwRunResult> = bw.run(['login', '--sso'], { env: { BW_NOINTERACTION: 'false', PATH: `${opener.dir}:${process.env.PATH ?? ''}` }, timeoutMs: 90_000 });
    let settled = false;
    void login.finally(() => (settled = true));
    let opened: string[] = [];
    const deadline = Date.now() + 30_000;
    while (opened.length === 0 && !settled && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      opened = await opener.opened();
    }
    if (opened.length === 0) throw new Error(`bw opened no URL: ${JSON.stringify(settled ? await login : 'still running')}`);
    const startUrl = new URL(opened[0] ?? '');
    expect(startUrl.origin).toBe(server.baseUrl);
    expect(startUrl.pathname).toBe('/');
    const fragment = new URLSearchParams(startUrl.hash.replace(/^#\/sso\?/, ''));
    expect(startUrl.hash.startsWith('#/sso?')).toBe(true);
    expect(fragment.get('clientId')).toBe('cli');
    expect(fragment.get('redirectUri')).toBe(`http://localhost:${BW_CALLBACK_PORT}`);
    const state = fragment.get('state') ?? '';
    expect(state).toMatch(/^[A-Za-z0-9]{64}$/);

    // Chromium: the start page asks for the identifier, then the IdP's page for the password.
    const authorizeRequests: URL[] = [];
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (url.pathname === '/identity/connect/authorize') authorizeRequests.push(url);
    });
    await page.goto(startUrl.href);
    await expect.poll(() => page.isVisible('#sso-identifier')).toBe(true);
    expect(await page.isVisible('#about')).toBe(false);
    expect(await page.title()).toBe('Log in with SSO · Strongroom');
    await page.fill('#sso-identifier', IDENTIFIER);
    await page.click('#sso-submit');
    await arrive(page, (url) => url.origin === idp.issuer, 'the identity provider');
    await page.fill('#login', 'idp-user-1');
    await page.fill('#password', IDP_PASSWORD);
    await page.click('#submit');
    await arrive(page, (url) => url.host === `localhost:${BW_CALLBACK_PORT}`, "bw's callback");
    expect(await page.textContent('h1')).toBe('Successfully authenticated with the Bitwarden CLI');

    // The authorize request carried the web vault's parameters, the client's state first.
    expect(authorizeRequests).toHaveLength(1);
    const authorize = authorizeRequests[0]!.searchParams;
    expect([...authorize.keys()]).toEqual(['client_id', 'redirect_uri', 'response_type', 'scope', 'state', 'code_challenge', 'code_challenge_method', 'response_mode', 'domain_hint', 'ssoToken']);
    expect(Object.fromEntries(authorize)).toMatchObject({
      client_id: 'cli',
      redirect_uri: `http://localhost:${BW_CALLBACK_PORT}`,
      response_type: 'code',
      scope: 'api offline_access',
      state: `${state}_identifier=${IDENTIFIER}`,
      code_challenge: fragment.get('codeChallenge'),
      code_challenge_method: 'S256',
      response_mode: 'query',
      domain_hint: IDENTIFIER,
    });
    expect(authorize.get('ssoToken')).toBeTruthy();

    const loggedIn = await login;
    expect(loggedIn.code, `${loggedIn.stdout}\n${loggedIn.stderr}`).toBe(0);
    expect(loggedIn.stdout).toContain('You are logged in!');
    expect(loggedIn.stdout).toContain('bw unlock');
    expect(await opener.opened()).toHaveLength(1);

    // The login linked the accepted member's account to the IdP's user: the owner confirms the member.
    const members = (await asOwner('GET', `/api/organizations/${orgId}/users`)).data as { id: string; email: string; status: number }[];
    const invited = members.find((m) => m.email === MEMBER_EMAIL);
    expect(invited?.status).toBe(1);
    memberId = invited?.id ?? '';
    const link = await server.database.db.selectFrom('sso_users').select(['user_id', 'external_id']).where('organization_id', '=', orgId).executeTakeFirstOrThrow();
    expect(link).toEqual({ user_id: member.userId, external_id: 'idp-user-1' });
    await asOwner('POST', `/api/organizations/${orgId}/users/${memberId}/confirm`, { key: rsaEncryptToEncString(orgKey.raw, member.account.publicKeyB64) });

    const unlocked = await bw.unlock(member.account.password);
    expect(unlocked.code, unlocked.stderr).toBe(0);
    const synced = await bw.run(['sync']);
    expect(synced.code, synced.stderr).toBe(0);
    const items = await bw.json<{ name: string; organizationId: string; login?: { username?: string } }[]>(['list', 'items', '--organizationid', orgId]);
    expect(items.map((item) => [item.name, item.organizationId, item.login?.username])).toEqual([[ITEM_NAME, orgId, 'deploy']]);
  });

  it("shows what is wrong on the start page, remembers the last identifier, and starts at once with the client's identifier", async () => {
    const link = `${server.baseUrl}/#/sso?clientId=cli&redirectUri=${encodeURIComponent(`http://localhost:${BW_CALLBACK_PORT}`)}&state=abc&codeChallenge=def`;
    await page.goto(link);
    // The identifier typed in the login above is offered again.
    // (The callback runs in the page: this project's TypeScript has no DOM types.)
    const stored = await page.evaluate((key) => (globalThis as unknown as { localStorage: { getItem(k: string): string | null } }).localStorage.getItem(key), SSO_IDENTIFIER_STORAGE_KEY);
    expect(stored).toBe(IDENTIFIER);
    await expect.poll(() => page.inputValue('#sso-identifier')).toBe(IDENTIFIER);
    await page.fill('#sso-identifier', 'no-such-organization');
    await page.click('#sso-submit');
    // The server's own words from /identity/sso/prevalidate.
    await expect.poll(() => page.textContent('#sso-error')).toBe('Invalid SSO identifier');
    expect(page.url()).toBe(link);
    expect(await page.getAttribute('#sso-identifier', 'aria-invalid')).toBe('true');
    expect(await page.isEnabled('#sso-submit')).toBe(true);

    await page.fill('#sso-identifier', '');
    await page.click('#sso-submit');
    await expect.poll(() => page.textContent('#sso-error')).toBe("Enter your organization's SSO identifier.");

    await page.goto(`${server.baseUrl}/#/sso?clientId=cli&state=abc`);
    await expect.poll(() => page.textContent('#sso-error')).toBe(
      'This page was opened without redirectUri, codeChallenge. Start the login from your Bitwarden app (for the CLI: bw login --sso).',
    );
    expect(await page.isEnabled('#sso-submit')).toBe(false);

    // The browser extension would come back to the web vault's sso-connector.html, which is not here.
    await page.goto(`${server.baseUrl}/#/sso?clientId=browser&redirectUri=${encodeURIComponent(`${server.baseUrl}/sso-connector.html`)}&state=abc&codeChallenge=def`);
    await expect.poll(() => page.textContent('#sso-error')).toContain('finish single sign-on on a page of the web vault, which this server does not have');
    expect(await page.isEnabled('#sso-submit')).toBe(false);

    // With the client's identifier (bw login --sso <identifier>) the page starts at once, as the web
    // vault's does: a browser without the IdP session of the login above stops at its login page.
    const fresh = await browser.newContext({ ignoreHTTPSErrors: true });
    try {
      const other = await fresh.newPage();
      const challenge = randomBytes(32).toString('base64url');
      await other.goto(`${server.baseUrl}/#/sso?clientId=cli&redirectUri=${encodeURIComponent(`http://localhost:${BW_CALLBACK_PORT}`)}&state=xyz&codeChallenge=${challenge}&identifier=${IDENTIFIER}`);
      await arrive(other, (url) => url.origin === idp.issuer, 'the identity provider, without a click');
      expect(await other.isVisible('#password')).toBe(true);
    } finally {
      await fresh.close();
    }

    // Without #/sso the page is the ordinary landing page.
    await page.goto(`${server.baseUrl}/`);
    expect(await page.isVisible('#about')).toBe(true);
    expect(await page.isVisible('#sso')).toBe(false);
  });
});
