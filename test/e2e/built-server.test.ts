/**
 * The built server (`dist/`, what `npm start` runs) rather than the sources the rest of the suite
 * runs through tsx. The build bundles the npm packages every start loads
 * (scripts/build-if-stale.mjs): this walks one request through each of them, so that a package
 * that does not survive bundling fails here rather than in an operator's first start. Fastify and
 * its form parser (the token endpoint), TypeBox and Ajv (a refused body), jose (the access
 * token), fast-json-stringify (a response schema), ws and MessagePack (the notifications hub),
 * the multipart parser (an attachment), the static files (the web vault) and, left out of the
 * bundle, the API docs.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { passwordGrantForm, TEST_DEVICE } from '../support/accounts.js';
import { encryptText, makeTestAccount, registerFinishBody, type TestAccount } from '../support/bw-crypto.js';
import { connectHub, waitFor } from '../support/hub-client.js';
import { freePort, killPrograms, PROJECT_ROOT, startProgram, type Program } from '../support/program.js';
import { cipherBody } from '../support/vault.js';

const HEADERS = { 'bitwarden-client-version': '2026.9.0', 'device-type': '25' };
const folder = mkdtempSync(join(tmpdir(), 'sr-built-'));
let base = '';
let server: Program;
let account: TestAccount;
let token = '';

beforeAll(async () => {
  // dist/ is current: the suite's global setup (test/global-setup.ts) builds it when src/ changed.
  const webVault = join(folder, 'web-vault');
  mkdirSync(webVault);
  writeFileSync(join(webVault, 'index.html'), '<!doctype html><title>stand-in web vault</title>');
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  server = startProgram(
    { DATA_DIR: join(folder, 'data'), PORT: String(port), WEB_VAULT_DIR: webVault, API_DOCS_ENABLED: 'true', PASSWORD_ITERATIONS: '100000', LOG_LEVEL: 'warn' },
    { program: 'build' },
  );
  const deadline = Date.now() + 60_000;
  while (!(await fetch(`${base}/api/alive`).then((res) => res.ok, () => false))) {
    if (Date.now() > deadline || server.proc.exitCode !== null) throw new Error(`the built server did not start:\n${server.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  account = makeTestAccount({ email: 'built@example.com' });
}, 120_000);

afterAll(() => {
  killPrograms();
  rmSync(folder, { recursive: true, force: true });
});

async function send(method: string, path: string, body?: unknown): Promise<Response> {
  const headers: Record<string, string> = { ...HEADERS, ...(token ? { authorization: `Bearer ${token}` } : {}) };
  if (body === undefined) return fetch(base + path, { method, headers });
  if (body instanceof URLSearchParams || body instanceof FormData) return fetch(base + path, { method, headers, body });
  return fetch(base + path, { method, headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

describe('the built server', () => {
  it('registers and logs in (form bodies, validation, tokens)', async () => {
    const refused = await send('POST', '/identity/accounts/register/finish', { email: 'built@example.com' });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toMatch(/kdf/);

    expect((await send('POST', '/identity/accounts/register/finish', registerFinishBody(account))).status).toBe(200);
    const login = await send('POST', '/identity/connect/token', new URLSearchParams(passwordGrantForm(account, TEST_DEVICE)));
    expect(login.status).toBe(200);
    token = ((await login.json()) as { access_token: string }).access_token;
    expect(token.split('.')).toHaveLength(3);
    const profile = await send('GET', '/api/accounts/profile');
    expect(profile.status).toBe(200);
    expect(await profile.json()).toMatchObject({ email: 'built@example.com', object: 'profile' });
  });

  it('pushes a new item to the notifications hub, syncs it, and takes an attachment', async () => {
    const hub = await connectHub(`${base}/notifications/hub`, { token });
    try {
      const created = await send('POST', '/api/ciphers', cipherBody('login', account.userKey));
      expect(created.status).toBe(200);
      const item = (await created.json()) as { id: string };
      await waitFor(() => hub.received().some((message) => (message.Payload as { Id?: string }).Id === item.id), 10_000, 'the push of the new item');

      const form = new FormData();
      form.append('key', encryptText('an attachment key', account.userKey));
      form.append('data', new Blob([Buffer.alloc(1000, 7)]), encryptText('report.bin', account.userKey));
      const attached = await send('POST', `/api/ciphers/${item.id}/attachment`, form);
      expect(attached.status, await attached.clone().text()).toBe(200);

      const sync = (await (await send('GET', '/api/sync')).json()) as { ciphers: { id: string; attachments: { size: string }[] | null }[] };
      expect(sync.ciphers.map((cipher) => cipher.id)).toEqual([item.id]);
      expect(sync.ciphers[0]!.attachments).toEqual([expect.objectContaining({ size: '1000' })]);
    } finally {
      await hub.stop();
    }
  });

  it('serves the web vault and the API docs', async () => {
    const page = await fetch(`${base}/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('stand-in web vault');
    // Swagger UI's page (its static files come from its own package, left out of the bundle).
    const ui = await fetch(`${base}/docs`);
    expect(ui.status).toBe(200);
    expect(await ui.text()).toContain('swagger');
    const docs = await fetch(`${base}/docs/json`);
    expect(docs.status).toBe(200);
    expect(((await docs.json()) as { paths: Record<string, unknown> }).paths).toHaveProperty('/api/sync');
  });

  // An `import` of one of Node's modules makes Node read every export of it, getters included:
  // node:http's WebSocket getter loads undici on Node 22 and later (scripts/build-if-stale.mjs).
  it('reaches Node\'s own modules through require(), not import (but node:module, for require itself)', () => {
    const dist = join(PROJECT_ROOT, 'dist');
    const imported = readdirSync(dist)
      .filter((file) => file.endsWith('.js'))
      .flatMap((file) => [...readFileSync(join(dist, file), 'utf8').matchAll(/\b(?:import|from)\s*["'](node:[\w/]+)["']/g)].map((found) => `${file}: ${found[1]}`))
      .filter((found) => !found.endsWith(': node:module'));
    expect(imported).toEqual([]);
  });
});
