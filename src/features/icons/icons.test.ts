import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';

/** The icons service through the real HTTP layer, in each of its modes. No test here reaches the internet. */

let cacheDir: string;
let internal: TestServer;
let off: TestServer;
let redirect: TestServer;
let template: TestServer;
let limited: TestServer;

beforeAll(async () => {
  cacheDir = await mkdtemp(join(tmpdir(), 'strongroom-icons-routes-'));
  [internal, off, redirect, template, limited] = await Promise.all([
    startTestServer({ env: { ICONS_CACHE_DIR: cacheDir, ICONS_TIMEOUT_MS: '1500', ICONS_NEGATIVE_TTL_SECONDS: '900' } }),
    startTestServer({ env: { ICONS_SERVICE: 'off' } }),
    startTestServer({ env: { ICONS_SERVICE: 'duckduckgo' } }),
    startTestServer({ env: { ICONS_SERVICE: 'https://icons.example.net/i/{}?s=32', ICONS_REDIRECT_CODE: '308' } }),
    startTestServer({ env: { ICONS_CACHE_DIR: join(cacheDir, 'limited'), ICONS_TIMEOUT_MS: '1500', ICONS_FETCHES_PER_MINUTE: '1' } }),
  ]);
});

afterAll(async () => {
  await Promise.all([internal, off, redirect, template, limited].map((s) => s?.close()));
  await rm(cacheDir, { recursive: true, force: true });
});

describe('GET /icons/{domain}/icon.png', () => {
  it('refuses what is no public host name with a 400 naming the domain, before any lookup', async () => {
    for (const domain of ['localhost', '127.0.0.1', '10.1.2.3', '169.254.169.254', '192.168.0.10', '[::1]', 'example.com:8080', 'a..b', '-bad.com', 'user@example.com', '0x7f.1', '1.2.3']) {
      const res = await internal.request('GET', `/icons/${encodeURIComponent(domain)}/icon.png`);
      expect(res.status, domain).toBe(400);
      expect(res.body.validationErrors?.domain?.[0], domain).toMatch(/domain/i);
    }
  });

  it('answers a generic image, cached by the client, for a site whose icon cannot be had', async () => {
    // The .invalid top-level domain never resolves (RFC 2606).
    const res = await internal.request('GET', '/icons/no-such-site.invalid/icon.png');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/png');
    expect(res.text).toContain('PNG');
    expect(res.headers.get('cache-control')).toBe('public, max-age=900');
    // The miss is remembered: the second answer comes from the negative cache.
    const again = await internal.request('GET', '/icons/NO-SUCH-SITE.invalid/icon.png');
    expect(again.status).toBe(200);
    expect(again.headers.get('content-type')).toBe('image/png');
  });

  it('is anonymous, as the clients fetch icons without a token', async () => {
    const res = await internal.request('GET', '/icons/no-such-site.invalid/icon.png', { token: 'not-a-token' });
    expect(res.status).toBe(200);
  });

  it('answers 429 past the lookups allowed per minute, and still serves what it knows', async () => {
    expect((await limited.request('GET', '/icons/first.invalid/icon.png')).status).toBe(200);
    const refused = await limited.request('GET', '/icons/second.invalid/icon.png');
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('60');
    expect((await limited.request('GET', '/icons/first.invalid/icon.png')).status).toBe(200);
  });

  it('answers 404 when icons are off, without looking anything up', async () => {
    const res = await off.request('GET', '/icons/example.com/icon.png');
    expect(res.status).toBe(404);
    expect((await off.request('GET', '/icons/localhost/icon.png')).status).toBe(400);
  });

  it('redirects to a named public icon service', async () => {
    const res = await fetch(`${redirect.baseUrl}/icons/example.com/icon.png`, { redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('https://icons.duckduckgo.com/ip3/example.com.ico');
    expect(res.headers.get('cache-control')).toMatch(/^public, max-age=\d+$/);
  });

  it('redirects to an operator URL template with the configured status', async () => {
    const res = await fetch(`${template.baseUrl}/icons/b%C3%BCcher.example/icon.png`, { redirect: 'manual' });
    expect(res.status).toBe(308);
    expect(res.headers.get('location')).toBe('https://icons.example.net/i/xn--bcher-kva.example?s=32');
  });
});

describe('GET /icons/change-password-uri', () => {
  it('needs a uri whose host is a public host name', async () => {
    const missing = await internal.request('GET', '/icons/change-password-uri');
    expect(missing.status).toBe(400);
    expect(missing.body.validationErrors.uri[0]).toMatch(/required/);
    for (const uri of ['https://127.0.0.1/login', 'http://[::1]/', 'localhost', 'https://10.0.0.8:8443/']) {
      const res = await internal.request('GET', `/icons/change-password-uri?uri=${encodeURIComponent(uri)}`);
      expect(res.status, uri).toBe(400);
      expect(res.body.validationErrors.uri[0], uri).toMatch(/host/);
    }
  });

  it('answers {uri: null} when the site has no reliable well-known URL (here: it does not resolve)', async () => {
    const res = await internal.request('GET', `/icons/change-password-uri?uri=${encodeURIComponent('https://no-such-site.invalid/login?next=1')}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ uri: null });
  });

  it('answers {uri: null} without any lookup when icons are off or redirected', async () => {
    for (const server of [off, redirect]) {
      const res = await server.request('GET', '/icons/change-password-uri?uri=example.com');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ uri: null });
    }
  });
});
