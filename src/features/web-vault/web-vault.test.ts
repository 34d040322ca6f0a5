import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Script } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../config/config.js';
import { rawGet } from '../../../test/support/raw-request.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';

/** A stand-in web vault made by the test: a few files with the shapes of a real build. */
function makeStandIn(root: string): string {
  const dir = join(root, 'web-vault');
  mkdirSync(join(dir, 'app'), { recursive: true });
  mkdirSync(join(dir, 'locales', 'en'), { recursive: true });
  mkdirSync(join(dir, 'api'), { recursive: true });
  mkdirSync(join(dir, 'notifications'), { recursive: true });
  mkdirSync(join(dir, 'docs'), { recursive: true });
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>stand-in vault</title>');
  writeFileSync(join(dir, 'app', 'main.1a2b3c4d.js'), 'console.log("stand-in");');
  writeFileSync(join(dir, 'webauthn-connector.html'), '<!doctype html><title>connector</title>');
  writeFileSync(join(dir, 'sdk_bg.9f8e7d6c5b.wasm'), Buffer.from([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]));
  writeFileSync(join(dir, 'locales', 'en', 'messages.json'), '{}');
  writeFileSync(join(dir, 'app-id.json'), '{"shipped":true}');
  writeFileSync(join(dir, '.secret'), 'hidden');
  // A file under a service prefix must never shadow the service.
  writeFileSync(join(dir, 'api', 'config'), 'shadow');
  writeFileSync(join(dir, 'api', 'shadow.js'), 'shadow');
  writeFileSync(join(dir, 'notifications', 'hub'), 'shadow');
  writeFileSync(join(dir, 'docs', 'json'), 'shadow');
  writeFileSync(join(root, 'outside.txt'), 'outside the web vault');
  mkdirSync(join(root, 'outside-dir'));
  writeFileSync(join(root, 'outside-dir', 'db.sqlite'), 'outside the web vault');
  // Links an archive could carry: out of the folder (to a file, a folder, nowhere) and within it.
  symlinkSync('../outside.txt', join(dir, 'linked.txt'));
  symlinkSync(join(root, 'outside-dir'), join(dir, 'linked-dir'));
  symlinkSync('../../outside.txt', join(dir, 'app', 'deep-link.js'));
  symlinkSync('missing.js', join(dir, 'broken.js'));
  symlinkSync('app/main.1a2b3c4d.js', join(dir, 'main-alias.js'));
  // A link that stays inside, to a folder holding a link that leaves.
  mkdirSync(join(dir, 'inner'));
  symlinkSync(join(root, 'outside-dir'), join(dir, 'inner', 'escape'));
  symlinkSync('inner', join(dir, 'inner-alias'));
  return dir;
}

describe('the web vault folder', () => {
  let root: string;
  let server: TestServer;
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'strongroom-webvault-'));
    makeStandIn(root);
    server = await startTestServer({ env: { DATA_DIR: root, PUBLIC_URL: 'https://vault.example.com:8443/' } });
  });
  afterAll(async () => {
    await server.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('is found under DATA_DIR/web-vault and serves index.html at / without caching', async () => {
    expect(server.config.webVaultDir).toBe(join(root, 'web-vault'));
    const res = await server.request('GET', '/');
    expect(res.status).toBe(200);
    expect(res.text).toContain('stand-in vault');
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('cache-control')).toBe('no-cache, no-store, max-age=0');
    expect(res.headers.get('x-frame-options')).toBe('SAMEORIGIN');
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self' 'wasm-unsafe-eval'");
    expect(csp).toContain("frame-ancestors 'self'");
    expect(csp).toContain('wss://vault.example.com:8443');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('referrer-policy')).toBe('same-origin');
    const index = await server.request('GET', '/index.html');
    expect(index.status).toBe(200);
    expect(index.headers.get('cache-control')).toBe('no-cache, no-store, max-age=0');
    const head = await server.request('HEAD', '/');
    expect(head.status).toBe(200);
    // The web vault's own #/sso page starts single sign-on: no stand-in script beside it.
    expect((await server.request('GET', '/sso-start.js')).status).toBe(404);
  });

  it('caches hashed assets for a year as immutable, and revalidates the others', async () => {
    const js = await server.request('GET', '/app/main.1a2b3c4d.js');
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toMatch(/^(application|text)\/javascript/);
    expect(js.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(js.headers.get('x-frame-options')).toBe('SAMEORIGIN');
    const locale = await server.request('GET', '/locales/en/messages.json');
    expect(locale.headers.get('content-type')).toMatch(/^application\/json/);
    expect(locale.headers.get('cache-control')).toBe('no-cache');
  });

  it('serves WebAssembly as application/wasm', async () => {
    const res = await server.request('GET', '/sdk_bg.9f8e7d6c5b.wasm');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/wasm');
  });

  it('serves connector pages without X-Frame-Options or the vault frame-ancestors', async () => {
    const res = await server.request('GET', '/webauthn-connector.html');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-frame-options')).toBeNull();
    expect(res.headers.get('content-security-policy')).toBeNull();
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('generates app-id.json naming the PUBLIC_URL origin, not the copy in the folder', async () => {
    const res = await server.request('GET', '/app-id.json');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/fido\.trusted-apps\+json/);
    expect(res.body).toEqual({
      trustedFacets: [
        {
          version: { major: 1, minor: 0 },
          ids: [
            'https://vault.example.com:8443',
            'ios:bundle-id:com.8bit.bitwarden',
            'android:apk-key-hash:dUGFzUzf3lmHSLBDBIv+WaFyZMI',
            'android:apk-key-hash:pSCbprJwYtwCZOPOpmU6YuPBs/g',
          ],
        },
      ],
    });
  });

  it('answers 404 for unknown paths instead of index.html', async () => {
    for (const path of ['/vault', '/app/missing.js', '/locales/', '/.secret']) {
      const res = await server.request('GET', path);
      expect(res.status, path).toBe(404);
      expect(res.text, path).not.toContain('stand-in vault');
    }
  });

  it('refuses to leave the folder', async () => {
    for (const path of ['/../outside.txt', '/app/../../outside.txt', '/%2e%2e/outside.txt', '/app/%2e%2e%2f%2e%2e%2foutside.txt', '/..%2foutside.txt']) {
      const answer = await rawGet(server.baseUrl, path);
      expect(answer, path).not.toContain('outside the web vault');
      expect(answer.split(' ')[1], path).toMatch(/^4\d\d$/);
    }
  });

  it('serves no symbolic link that leads out of the folder, and follows those within it', async () => {
    for (const path of ['/linked.txt', '/linked-dir/db.sqlite', '/app/deep-link.js', '/broken.js', '/inner/escape/db.sqlite', '/inner-alias/escape/db.sqlite']) {
      const res = await server.request('GET', path);
      expect(res.status, path).toBe(404);
      expect(res.text, path).not.toContain('outside the web vault');
    }
    const alias = await server.request('GET', '/main-alias.js');
    expect(alias.status).toBe(200);
    expect(alias.text).toContain('stand-in');
  });

  it('does not shadow the services or the API documentation', async () => {
    const config = await server.request('GET', '/api/config');
    expect(config.status).toBe(200);
    expect(config.text).not.toBe('shadow');
    expect((await server.request('GET', '/api/unknown')).body).toMatchObject({ object: 'error' });
    expect((await server.request('GET', '/identity/.well-known/openid-configuration')).status).toBe(200);
    expect((await server.request('GET', '/events/alive')).status).toBe(200);
    const docs = await server.request('GET', '/docs/json');
    expect(docs.status).toBe(200);
    expect(docs.text).not.toBe('shadow');
    for (const path of ['/api/shadow.js', '/notifications/hub']) {
      const res = await server.request('GET', path);
      expect(res.status, path).toBe(404);
      expect(res.text, path).not.toBe('shadow');
    }
  });
});

describe('without a web vault', () => {
  let server: TestServer;
  let root: string;
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'strongroom-nowebvault-'));
    server = await startTestServer({ env: { DATA_DIR: root, PUBLIC_URL: 'https://vault.example.com/<b>"x"' } });
  });
  afterAll(async () => {
    await server.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('answers / with a landing page that explains how to add the web vault and create an account', async () => {
    expect(server.config.webVaultDir).toBeNull();
    const res = await server.request('GET', '/');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.text).toContain('WEB_VAULT_DIR');
    expect(res.text).toContain(join(root, 'web-vault'));
    expect(res.text).toContain('strongroom users create --email you@example.com');
    expect(res.text).toContain('strongroom web-vault install');
    expect(res.text).toContain('NODE_EXTRA_CA_CERTS');
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toMatch(/^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/=]+'/);
    expect(csp).not.toContain('unsafe');
    expect(res.headers.get('x-frame-options')).toBe('SAMEORIGIN');
    expect(res.headers.get('cache-control')).toBe('no-store');
    // One script, Strongroom's own file (the SSO start page); nothing inline, nothing remote.
    expect([...res.text.matchAll(/<script[^>]*>/gi)].map((m) => m[0])).toEqual(['<script src="/sso-start.js" defer>']);
    expect(res.text).not.toMatch(/https?:\/\/cdn/i);
    expect(csp).toContain("script-src 'self'; connect-src 'self'");
    expect(csp).toContain("form-action 'none'");
    // The browser applies the inline style only if its exact text hashes to the one the policy names.
    const style = /<style>([\s\S]*?)<\/style>/.exec(res.text)?.[1] ?? '';
    expect(style.length).toBeGreaterThan(0);
    expect(csp).toContain(`'sha256-${createHash('sha256').update(style).digest('base64')}'`);
  });

  it('escapes what it interpolates', async () => {
    const res = await server.request('GET', '/');
    expect(res.text).toContain('bw config server https://vault.example.com/&lt;b&gt;&quot;x&quot;\nbw login you@example.com');
    expect(res.text).not.toContain('<b>"x"');
  });

  it('serves the SSO start script the page loads, and the page holds the form it drives', async () => {
    const script = await server.request('GET', '/sso-start.js');
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(script.headers.get('cache-control')).toBe('no-cache');
    expect(script.text).toContain("'identity/sso/prevalidate'");
    expect(script.text).toContain("'identity/connect/authorize'");
    // It parses as a script (vm compiles without running it).
    expect(() => new Script(script.text)).not.toThrow();
    const page = await server.request('GET', '/');
    for (const id of ['about', 'sso', 'sso-form', 'sso-identifier', 'sso-submit', 'sso-error', 'sso-status']) expect(page.text).toContain(`id="${id}"`);
    expect(page.text).toMatch(/<label for="sso-identifier">/);
  });

  it('serves no app-id.json and 404s other paths', async () => {
    expect((await server.request('GET', '/app-id.json')).status).toBe(404);
    expect((await server.request('GET', '/index.html')).status).toBe(404);
  });
});

describe('WEB_VAULT_DIR', () => {
  it('names any folder, or reports a missing folder or one without index.html', () => {
    const root = mkdtempSync(join(tmpdir(), 'strongroom-badwebvault-'));
    try {
      mkdirSync(join(root, 'custom'));
      writeFileSync(join(root, 'custom', 'index.html'), '');
      expect(loadConfig({ WEB_VAULT_DIR: join(root, 'custom'), DATA_DIR: join(root, 'data') }).webVaultDir).toBe(join(root, 'custom'));
      expect(loadConfig({ DATA_DIR: join(root, 'data') }).webVaultDir).toBeNull();
      expect(() => loadConfig({ WEB_VAULT_DIR: join(root, 'nope') })).toThrow(/WEB_VAULT_DIR: .*nope does not exist; unpack a web vault there/);
      mkdirSync(join(root, 'web-vault', 'web-vault'), { recursive: true });
      const error = (() => {
        try {
          loadConfig({ DATA_DIR: root });
        } catch (e) {
          return e;
        }
        return null;
      })();
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).problems).toEqual([`WEB_VAULT_DIR: ${join(root, 'web-vault')} has no index.html (unpack the web vault so that index.html is at its top)`]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('is not served by a service running alone at the root', async () => {
    const root = mkdtempSync(join(tmpdir(), 'strongroom-alone-'));
    makeStandIn(root);
    const server = await startTestServer({ env: { DATA_DIR: root, SERVICES: 'api' } });
    try {
      expect((await server.request('GET', '/')).status).toBe(404);
      expect((await server.request('GET', '/app/main.1a2b3c4d.js')).status).toBe(404);
      expect((await server.request('GET', '/config')).status).toBe(200);
    } finally {
      await server.close();
      rmSync(root, { recursive: true, force: true });
    }
  });
});

