/**
 * A Chromium page on a test server's own origin with a CDP virtual authenticator: how the
 * WebAuthn tests stand in for a client's page. The page is answered by the browser (route), so
 * its fetches go to the server, and the relying party is the server's PUBLIC_URL.
 */
import { chromium, type Browser, type CDPSession, type Page } from 'playwright-core';
import { freePort } from './program.js';
import { startTestServer, type TestServer } from './test-server.js';

/** Chromium switches for a quiet headless run in CI (as root, no GPU, no background traffic). */
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

export interface StandIn {
  server: TestServer;
  origin: string;
  browser: Browser;
  page: Page;
  cdp: CDPSession;
  authenticatorId: string;
  close(): Promise<void>;
}

/**
 * Starts a server on `http://localhost:<port>`, opens `html` as `/<name>` on that origin and adds
 * a resident-key, user-verifying CTAP2 authenticator (`options` adds to it, e.g. `hasPrf`).
 */
export async function openStandIn(executablePath: string, name: string, html: string, options: Record<string, unknown> = {}): Promise<StandIn> {
  const port = await freePort();
  const origin = `http://localhost:${port}`;
  const server = await startTestServer({ port, env: { PUBLIC_URL: origin } });
  const browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
  const page = await browser.newPage();
  await page.route(`${origin}/${name}`, (route) => route.fulfill({ status: 200, contentType: 'text/html', body: html }));
  await page.goto(`${origin}/${name}`);
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  const added = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true, ...options },
  });
  return {
    server,
    origin,
    browser,
    page,
    cdp,
    authenticatorId: added.authenticatorId,
    close: async () => {
      await browser.close();
      await server.close();
    },
  };
}
