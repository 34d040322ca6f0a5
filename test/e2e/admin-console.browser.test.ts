import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventType } from '../../src/platform/audit/event-type.js';
import { ADMIN_TOKEN, adminTokenHash } from '../support/admin-console.js';
import { seedUser } from '../support/admin.js';
import { seedMembership, seedOrganization } from '../support/orgs.js';
import { testService } from '../support/services.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { CHROMIUM_ARGS } from '../support/virtual-authenticator.js';
import { OrganizationUserType } from '../../src/platform/access/roles.js';

/**
 * The admin console in a real browser (Debian's Chromium through playwright-core): sign-in,
 * an invitation, disabling and enabling an account, the events chart drawn by the bundled
 * uPlot under the console's CSP, keyboard use, labels and contrast; screenshots of every page
 * at a phone's and a desktop's width go to test-artifacts/admin-console (not committed).
 */
const CHROMIUM = testService('chromium');
const ARTIFACTS = resolve(import.meta.dirname, '../../test-artifacts/admin-console');
const WIDTHS = { phone: { width: 390, height: 844 }, desktop: { width: 1280, height: 900 } } as const;

let server: TestServer;
let browser: Browser;
let page: Page;
const cspViolations: string[] = [];

/**
 * Code run inside the page (plain JavaScript: this project's TypeScript has no DOM types).
 * LOW_CONTRAST lists visible text below WCAG AA (4.5:1, 3:1 for large text) against its
 * nearest opaque background; UNLABELLED lists form fields no label names.
 */
const LOW_CONTRAST = `(() => {
  const rgb = (text) => (text.match(/[\\d.]+/g) || []).map(Number);
  const luminance = ([r = 0, g = 0, b = 0]) => {
    const f = (c) => { const v = c / 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const background = (el) => {
    for (let node = el; node; node = node.parentElement) {
      const color = rgb(getComputedStyle(node).backgroundColor);
      if (color.length === 3 || (color[3] || 0) > 0.99) return color.slice(0, 3);
    }
    return [255, 255, 255];
  };
  const problems = [];
  for (const el of document.querySelectorAll('body *')) {
    const own = Array.from(el.childNodes).some((n) => n.nodeType === Node.TEXT_NODE && (n.textContent || '').trim() !== '');
    if (!own) continue;
    const style = getComputedStyle(el);
    const box = el.getBoundingClientRect();
    if (style.visibility === 'hidden' || style.display === 'none' || box.width === 0 || box.right < 0) continue;
    const a = luminance(rgb(style.color));
    const b = luminance(background(el));
    const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    const size = parseFloat(style.fontSize);
    const large = size >= 24 || (size >= 18.66 && Number(style.fontWeight) >= 700);
    if (ratio < (large ? 3 : 4.5)) problems.push(el.tagName.toLowerCase() + ' "' + (el.textContent || '').trim().slice(0, 30) + '": ' + ratio.toFixed(2));
  }
  return problems;
})()`;

const UNLABELLED = `Array.from(document.querySelectorAll('input:not([type=hidden]), select, textarea'))
  .filter((el) => !(el.labels && el.labels.length) && !el.getAttribute('aria-label'))
  .map((el) => el.name)`;

const FOCUSED_NAME = '(document.activeElement && document.activeElement.name) || null';
const FOCUSED_TEXT = '(document.activeElement && document.activeElement.textContent) || null';
const PAGE_WIDTH = 'document.documentElement.scrollWidth';

const lowContrast = (p: Page) => p.evaluate<string[]>(LOW_CONTRAST);
const unlabelled = (p: Page) => p.evaluate<string[]>(UNLABELLED);

async function screenshots(name: string): Promise<void> {
  for (const [label, size] of Object.entries(WIDTHS)) {
    await page.setViewportSize(size);
    await page.screenshot({ path: resolve(ARTIFACTS, `${name}-${label}.png`), fullPage: true });
    // Nothing wider than the screen at a phone's width, but for the tables' own scrolling regions.
    if (label === 'phone') expect(await page.evaluate<number>(PAGE_WIDTH), `${name} fits 390px`).toBeLessThanOrEqual(390);
  }
  expect(await unlabelled(page), `${name}: fields without labels`).toEqual([]);
  expect(await lowContrast(page), `${name}: text below WCAG AA contrast`).toEqual([]);
}

describe.skipIf(!CHROMIUM)('the admin console in Chromium', { timeout: 120_000 }, () => {
  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    server = await startTestServer({ env: { ADMIN_TOKEN: await adminTokenHash() } });
    const orgId = await seedOrganization(server, { name: 'Family Vault' });
    const owner = await seedUser(server, 'parent@example.com');
    await seedUser(server, 'teen@example.com');
    await seedMembership(server, { organizationId: orgId, userId: owner, email: 'parent@example.com', type: OrganizationUserType.Owner });
    const day = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString();
    for (const [type, ago] of [
      [EventType.User_LoggedIn, 2],
      [EventType.User_LoggedIn, 1],
      [EventType.Cipher_Created, 1],
      [EventType.Cipher_Updated, 0],
      [EventType.OrganizationUser_Invited, 0],
    ] as const) {
      await server.app.features.audit.record(server.database.db, null, { type, organizationId: Number(type) >= 1100 ? orgId : null, actingUserId: owner, date: day(ago) });
    }
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: CHROMIUM_ARGS,
    });
    page = await browser.newPage({ viewport: WIDTHS.desktop });
    page.setDefaultTimeout(10_000);
    // Keeps each chart uPlot makes, so a test can read the scales it drew (they are on a canvas).
    await page.addInitScript(`(() => {
      let made;
      window.__plots = [];
      Object.defineProperty(window, 'uPlot', { configurable: true, get: () => made, set: (real) => {
        made = function (...args) { const plot = new real(...args); window.__plots.push(plot); return plot; };
      } });
    })()`);
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('signs in with the keyboard after refusing a wrong token', async () => {
    await page.goto(`${server.baseUrl}/admin/users`);
    expect(new URL(page.url()).pathname).toBe('/admin/login');
    await screenshots('sign-in');
    // The token field has focus from the start; the only thing before it is the skip link.
    expect(await page.evaluate<string | null>(FOCUSED_NAME)).toBe('token');
    await page.keyboard.press('Shift+Tab');
    expect(await page.evaluate<string | null>(FOCUSED_TEXT)).toBe('Skip to content');
    await page.keyboard.press('Tab');
    await page.getByLabel('Admin token').fill('not the token');
    await page.getByLabel('Admin token').press('Enter');
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('That is not the admin token.');
    await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
    await page.getByLabel('Admin token').press('Enter');
    await page.waitForURL(/\/admin\/users$/);
    await screenshots('users');
  });

  it('invites a user', async () => {
    await page.getByLabel('Email', { exact: true }).fill('new.member@example.com');
    await page.getByRole('button', { name: 'Send invitation' }).click();
    await page.waitForURL(/\/admin\/users\/invite$/);
    expect(await page.getByRole('status').textContent()).toContain('new.member@example.com');
    expect(await page.locator('pre').textContent()).toMatch(/#\/finish-signup\?token=/);
    await screenshots('invitation');
  });

  it('disables an account and enables it again', async () => {
    await page.goto(`${server.baseUrl}/admin/users`);
    await page.getByRole('button', { name: 'Disable teen@example.com' }).click();
    await page.waitForURL(/notice=disabled/);
    expect(await page.getByRole('status').textContent()).toContain('The account is disabled');
    const row = page.getByRole('row').filter({ hasText: 'teen@example.com' });
    expect(await row.locator('td[data-label="Status"]').textContent()).toBe('disabled');
    // Keyboard: focus the enable button and press Enter.
    await page.getByRole('button', { name: 'Enable teen@example.com' }).focus();
    await page.keyboard.press('Enter');
    await page.waitForURL(/notice=enabled/);
    expect(await page.getByRole('row').filter({ hasText: 'teen@example.com' }).locator('td[data-label="Status"]').textContent()).toBe('enabled');
  });

  it('reads the events page and draws its chart with the bundled uPlot', async () => {
    await page.getByRole('link', { name: 'Events' }).click();
    await page.waitForURL(/\/admin\/events$/);
    await page.locator('#events-chart[data-drawn="true"] canvas').waitFor();
    const legend = await page.locator('#events-chart .u-legend').textContent();
    expect(legend).toContain('Users');
    expect(legend).toContain('Items');
    expect(await page.locator('td[data-label="Type"]').allTextContents()).toEqual(expect.arrayContaining(['Cipher_Updated', 'User_LoggedIn']));
    await screenshots('events');
  });

  it('spans the chart axis over the one day shown, not years past it', async () => {
    // Member invitations (category 15) happened today only.
    await page.goto(`${server.baseUrl}/admin/events?category=15`);
    await page.locator('#events-chart[data-drawn="true"] canvas').waitFor();
    const scale = '(() => { const x = window.__plots[window.__plots.length - 1].scales.x; return x.max > 0 ? [x.min, x.max] : null; })()';
    const [min, max] = (await (await page.waitForFunction(scale)).jsonValue()) as [number, number];
    const today = Date.parse(`${new Date().toISOString().slice(0, 10)}T00:00:00Z`) / 1000;
    expect([min, max]).toEqual([today - 43_200, today + 43_200]);
    await page.goto(`${server.baseUrl}/admin/events`);
  });

  it('shows organizations, an organization, diagnostics and the admin log at both widths', async () => {
    await page.getByRole('link', { name: 'Organizations' }).click();
    await screenshots('organizations');
    await page.getByRole('link', { name: 'Family Vault' }).click();
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Family Vault');
    await screenshots('organization');
    await page.getByRole('link', { name: 'Diagnostics' }).click();
    await screenshots('diagnostics');
    await page.getByRole('link', { name: 'Admin log' }).click();
    expect(await page.locator('td[data-label="Action"]').allTextContents()).toEqual(expect.arrayContaining(['user-invited', 'user-disabled', 'user-enabled', 'sign-in-refused']));
    await screenshots('admin-log');
    expect(cspViolations).toEqual([]);
  });
});
