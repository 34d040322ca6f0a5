import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testConfig } from '../../../test/support/test-server.js';
import { isPrivateAddress, RefusedAddress, type Resolver } from '../../platform/net/outbound-address.js';
import { iconLinks, sniffImage } from './icon-finder.js';
import { createIcons, iconServiceOrigin } from './icons.service.js';
import { createSafeFetch, FetchRefused } from './safe-fetch.js';

/** A PNG as far as the signature goes, told apart from others by its tail. */
const png = (tag: string) => Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from(tag)]);

let server: Server;
let port: number;
const hits: string[] = [];
let secretHits = 0;

/** Names the tests use, resolved without DNS (there is no internet in CI). */
const NAMES: Record<string, string[]> = {
  'site.test': ['127.0.0.1'],
  'nolinks.test': ['127.0.0.1'],
  'types.test': ['127.0.0.1'],
  'large.test': ['127.0.0.1'],
  'loop.test': ['127.0.0.2'],
  'inner.test': ['10.1.2.3'],
  'metadata.test': ['169.254.169.254'],
  'mixed.test': ['93.184.216.34', '192.168.1.1'],
  'mapped.test': ['::ffff:7f00:1'],
};
const resolve: Resolver = async (hostname) => (NAMES[hostname] ?? []).map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
/** Only the test site's own address is let through: every other loopback and private one is refused. */
const allowAddress = (address: string) => address === '127.0.0.1';

beforeAll(async () => {
  server = createServer((request, response) => {
    const path = request.url ?? '/';
    const host = (request.headers.host ?? '').split(':')[0]!;
    hits.push(`${host}${path}`);
    if (path === '/secret') {
      secretHits++;
      response.end('secret');
    } else if (path === '/' && host === 'site.test') {
      response.setHeader('content-type', 'text/html; charset=utf-8');
      response.end('<!doctype html><html><head><title>x</title><link rel="stylesheet" href="/s.css"><link rel="shortcut icon" href="/img/fav.png"></head><body>hi</body></html>');
    } else if (path === '/' && host === 'types.test') {
      response.setHeader('content-type', 'text/html');
      response.end('<link rel="icon" href="/page.html"><link rel="icon" href="/svg">');
    } else if (path === '/' && host === 'large.test') {
      response.setHeader('content-type', 'text/html');
      response.end('<link rel="icon" href="/big.png">');
    } else if (path === '/') {
      response.setHeader('content-type', 'text/html');
      response.end('<html><head></head></html>');
    } else if (path === '/img/fav.png') {
      response.setHeader('content-type', 'image/png');
      response.end(png('site'));
    } else if (path === '/favicon.ico' && host === 'nolinks.test') {
      response.setHeader('content-type', 'image/x-icon');
      response.end(Buffer.from([0, 0, 1, 0, 1, 0, 16, 16]));
    } else if (path === '/big.png') {
      response.setHeader('content-type', 'image/png');
      response.end(Buffer.concat([png('big'), Buffer.alloc(64 * 1024)]));
    } else if (path === '/slow') {
      // Never answers.
    } else if (path === '/page.html') {
      response.setHeader('content-type', 'text/html');
      response.end(png('html'));
    } else if (path === '/svg') {
      response.setHeader('content-type', 'image/svg+xml');
      response.end('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');
    } else if (path.startsWith('/go?')) {
      response.statusCode = 302;
      response.setHeader('location', decodeURIComponent(path.slice(4)));
      response.end();
    } else if (path === '/loop') {
      response.statusCode = 302;
      response.setHeader('location', '/loop');
      response.end();
    } else if (path === '/.well-known/change-password' && host === 'site.test') {
      response.statusCode = 302;
      response.setHeader('location', '/account/password');
      response.end();
    } else if (path === '/account/password') {
      response.end('change it here');
    } else if (path.startsWith('/.well-known/') && host === 'nolinks.test') {
      // Answers 200 to everything: no reliable well-known URL.
      response.end('ok');
    } else {
      response.statusCode = 404;
      response.end('no');
    }
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  port = (server.address() as AddressInfo).port;
});

afterAll(() => new Promise<void>((done) => server.close(() => done())));

const url = (path: string, host = 'site.test') => new URL(`http://${host}:${port}${path}`);
const opts = { deadline: 0, maxBytes: 16 * 1024, accept: '*/*' };
const soon = () => ({ ...opts, deadline: Date.now() + 2000 });

describe('the icon fetcher never reaches private addresses unless the operator allows it', () => {
  const fetcher = createSafeFetch({ allowPrivateAddresses: false, allowAddress, resolve });
  afterAll(() => fetcher.close());

  it('classifies loopback, private, link-local and IPv4-in-IPv6 addresses, in either notation', () => {
    for (const a of ['127.0.0.1', '10.0.0.1', '172.16.5.4', '192.168.0.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:a9fe:a9fe']) {
      expect(isPrivateAddress(a), a).toBe(true);
    }
    for (const a of ['93.184.216.34', '2606:4700:4700::1111', '::ffff:5db8:d822']) expect(isPrivateAddress(a), a).toBe(false);
  });

  it('reaches the one address the test allows, so the refusals below are the guard', async () => {
    const answer = await fetcher.get(url('/secret'), soon());
    expect(answer.body.toString()).toBe('secret');
  });

  it('refuses literal loopback, private and link-local targets without connecting', async () => {
    const before = secretHits;
    for (const target of [`http://127.0.0.2:${port}/secret`, 'http://10.0.0.1/secret', 'http://169.254.169.254/latest/meta-data/', `http://[::1]:${port}/secret`, `http://[::ffff:7f00:2]:${port}/secret`]) {
      await expect(fetcher.get(new URL(target), soon()), target).rejects.toBeInstanceOf(RefusedAddress);
    }
    expect(secretHits).toBe(before);
  });

  it('refuses names that resolve to private addresses, any one of them, in any notation', async () => {
    const before = secretHits;
    for (const host of ['loop.test', 'inner.test', 'metadata.test', 'mixed.test', 'mapped.test']) {
      await expect(fetcher.get(url('/secret', host), soon()), host).rejects.toThrow(/private, loopback or link-local/);
    }
    expect(secretHits).toBe(before);
  });

  it('checks every hop of a redirect: to a private literal, to a name resolving privately', async () => {
    const before = secretHits;
    for (const target of [`http://127.0.0.2:${port}/secret`, `http://inner.test:${port}/secret`, `http://loop.test:${port}/secret`]) {
      await expect(fetcher.get(url(`/go?${encodeURIComponent(target)}`), soon()), target).rejects.toThrow(/private, loopback or link-local/);
    }
    expect(secretHits).toBe(before);
  });

  it('refuses other schemes, credentials in URLs and endless redirects', async () => {
    await expect(fetcher.get(url(`/go?${encodeURIComponent('file:///etc/passwd')}`), soon())).rejects.toBeInstanceOf(FetchRefused);
    await expect(fetcher.get(new URL(`http://user:pw@site.test:${port}/`), soon())).rejects.toBeInstanceOf(FetchRefused);
    await expect(fetcher.get(url('/loop'), soon())).rejects.toThrow(/redirects/);
  });

  it('stops at the size limit, or keeps the first bytes of a page', async () => {
    await expect(fetcher.get(url('/big.png'), { ...soon(), maxBytes: 1024 })).rejects.toThrow(/over the limit/);
    const page = await fetcher.get(url('/big.png'), { ...soon(), maxBytes: 1024, truncate: true });
    expect(page.body.length).toBe(1024);
  });

  it('stops at the time limit', async () => {
    const started = Date.now();
    await expect(fetcher.get(url('/slow'), { ...opts, deadline: Date.now() + 300 })).rejects.toThrow(/time limit/);
    expect(Date.now() - started).toBeLessThan(2000);
  });
});

describe('finding the icon in a page', () => {
  it('takes icon links first, then apple-touch-icon, never SVG or data:, against <base href>', async () => {
    const html = `<html><head><base href="https://cdn.example.com/assets/"><link rel="apple-touch-icon" href="touch.png">
      <link rel="icon" type="image/svg+xml" href="a.svg"><link rel="icon" href="data:image/png;base64,AA=="><link rel="ICON" href="fav.png"></head></html>`;
    expect((await iconLinks(html, new URL('https://example.com/'))).map(String)).toEqual(['https://cdn.example.com/assets/fav.png', 'https://cdn.example.com/assets/touch.png']);
  });

  it('knows raster images by their bytes, and nothing else', () => {
    expect(sniffImage(png('x'))).toBe('image/png');
    expect(sniffImage(Buffer.from([0, 0, 1, 0, 1]))).toBe('image/x-icon');
    expect(sniffImage(Buffer.from('<svg></svg>'))).toBeNull();
    expect(sniffImage(Buffer.from('<html>'))).toBeNull();
  });
});

describe('the icons service over a local site', () => {
  let cacheDir: string;
  // The disk cache's ages are file times, so the test clock starts at the real time.
  let now = Date.now();
  const clock = { now: () => new Date(now) };
  const make = (env: Record<string, string> = {}) =>
    createIcons({
      config: testConfig({ ICONS_CACHE_DIR: cacheDir, ICONS_NEGATIVE_TTL_SECONDS: '600', ICONS_TIMEOUT_MS: '2000', ...env }),
      clock,
      resolve,
      allowAddress,
      origins: (domain) => [`http://${domain}:${port}`],
    });

  beforeAll(async () => {
    cacheDir = await mkdtemp(join(tmpdir(), 'strongroom-icons-'));
  });
  afterAll(() => rm(cacheDir, { recursive: true, force: true }));

  it('fetches the linked icon once, then serves it from the disk cache', async () => {
    const icons = make();
    const first = await icons.icon('site.test');
    expect(first).toMatchObject({ kind: 'icon', contentType: 'image/png' });
    expect(first.kind === 'icon' && first.body.equals(png('site'))).toBe(true);
    const fetched = hits.filter((h) => h === 'site.test/img/fav.png').length;
    // A new instance over the same folder (a restart) reads the cache too.
    const again = await make().icon('site.test');
    expect(again.kind === 'icon' && again.body.equals(png('site'))).toBe(true);
    expect(hits.filter((h) => h === 'site.test/img/fav.png').length).toBe(fetched);
    expect(await readdir(cacheDir)).toContain('site.test.icon');
    icons.close();
  });

  it('falls back to /favicon.ico', async () => {
    const answer = await make().icon('nolinks.test');
    expect(answer).toMatchObject({ kind: 'icon', contentType: 'image/x-icon' });
  });

  it('remembers a site without an icon, and does not ask it again until the negative TTL passes', async () => {
    const icons = make();
    expect(await icons.icon('inner.test')).toMatchObject({ kind: 'none' });
    const asked = hits.length;
    expect(await icons.icon('inner.test')).toMatchObject({ kind: 'none' });
    expect(await readdir(cacheDir)).toContain('inner.test.miss');
    expect(hits.length).toBe(asked);
    now += 601_000;
    expect(await icons.icon('inner.test')).toMatchObject({ kind: 'none' });
    expect(await readdir(cacheDir)).toContain('inner.test.miss');
  });

  it('expires icons after the TTL', async () => {
    const icons = make({ ICONS_CACHE_TTL_SECONDS: '60' });
    const fetched = () => hits.filter((h) => h === 'site.test/img/fav.png').length;
    await icons.icon('site.test');
    const before = fetched();
    now += 61_000;
    expect(await icons.icon('site.test')).toMatchObject({ kind: 'icon' });
    expect(fetched()).toBe(before + 1);
  });

  it('keeps the cache under its size limit, dropping the oldest first', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'strongroom-icons-small-'));
    const icons = createIcons({ config: testConfig({ ICONS_CACHE_DIR: dir, ICONS_CACHE_MB: '1' }), clock, resolve, allowAddress, origins: (d) => [`http://${d}:${port}`] });
    await icons.icon('site.test');
    expect(await icons.cacheBytes()).toBeLessThanOrEqual(1024 * 1024);
    await rm(dir, { recursive: true, force: true });
  });

  it('limits lookups per minute, all domains together, and per domain', async () => {
    const icons = make({ ICONS_FETCHES_PER_MINUTE: '1' });
    now += 3600_000;
    expect(await icons.icon('unknown-a.test')).toMatchObject({ kind: 'none' });
    expect(await icons.icon('unknown-b.test')).toMatchObject({ kind: 'busy' });
    // Cached answers are still served.
    expect(await icons.icon('unknown-a.test')).toMatchObject({ kind: 'none' });
    now += 60_000;
    expect(await icons.icon('unknown-b.test')).toMatchObject({ kind: 'none' });
  });

  it('keeps only raster images: not HTML dressed as an icon, not SVG, not one over the size limit', async () => {
    const icons = make({ ICONS_MAX_KB: '16' });
    expect(await icons.icon('types.test')).toMatchObject({ kind: 'none' });
    expect(hits).toEqual(expect.arrayContaining(['types.test/page.html', 'types.test/svg']));
    expect(await icons.icon('large.test')).toMatchObject({ kind: 'none' });
    expect(hits).toContain('large.test/big.png');
  });

  it('reaches a site on a private address only when ICONS_ALLOW_PRIVATE_ADDRESSES is on', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'strongroom-icons-private-'));
    const withSetting = (allow: string) =>
      createIcons({ config: testConfig({ ICONS_CACHE_DIR: join(dir, allow), ICONS_ALLOW_PRIVATE_ADDRESSES: allow }), clock, resolve, origins: (d) => [`http://${d}:${port}`] });
    const refused = withSetting('false');
    const before = hits.length;
    expect(await refused.icon('site.test')).toMatchObject({ kind: 'none' });
    expect(hits.length).toBe(before);
    expect(await withSetting('true').icon('site.test')).toMatchObject({ kind: 'icon', contentType: 'image/png' });
    await rm(dir, { recursive: true, force: true });
  });

  it('finds a reliable /.well-known/change-password, and only a reliable one', async () => {
    const icons = make();
    expect(await icons.changePasswordUri('site.test')).toBe(`http://site.test:${port}/.well-known/change-password`);
    expect(await icons.changePasswordUri('nolinks.test')).toBeNull();
    expect(await icons.changePasswordUri('inner.test')).toBeNull();
  });
});

describe('the origin the web vault must let icons load from', () => {
  it('is the redirect target, or none when icons are not redirected', () => {
    expect(iconServiceOrigin('internal')).toBeNull();
    expect(iconServiceOrigin('off')).toBeNull();
    expect(iconServiceOrigin('bitwarden')).toBe('https://icons.bitwarden.net');
    expect(iconServiceOrigin('google')).toBe('https://www.google.com');
    expect(iconServiceOrigin('https://icons.example.net:8443/i/{}?s=32')).toBe('https://icons.example.net:8443');
    expect(iconServiceOrigin('https://{}.icons.example.net/favicon')).toBe('https://*.icons.example.net');
  });
});
