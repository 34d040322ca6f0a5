/**
 * Self-test for the test harness (./tls.ts, ./bw-cli.ts), independent of the
 * Strongroom server: a tiny HTTPS stub stands in for it, so a failure here means
 * the harness (certificates, CLI spawning) is broken, not the server.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer, request } from 'node:https';
import type { Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createBwCli } from './bw-cli.js';
import type { BwCli } from './bw-cli.js';
import { createTestTls } from './tls.js';
import type { TestTls } from './tls.js';

const execFileAsync = promisify(execFile);
// Each bw invocation costs ~1-4 s of start-up (WASM load), so be generous.
const SLOW = 60_000;

let tls: TestTls;
let server: Server;
let baseUrl: string;
const requests: string[] = [];

beforeAll(async () => {
  tls = await createTestTls();
  server = createServer({ cert: tls.certPem, key: tls.keyPem }, (req, res) => {
    requests.push(`${req.method ?? '?'} ${req.url ?? '?'}`);
    const ok = req.method === 'GET' && req.url === '/api/config';
    res.writeHead(ok ? 200 : 404, { 'content-type': 'application/json' });
    res.end(JSON.stringify(ok ? { version: '2026.8.0', object: 'config' } : { message: 'Not found', object: 'error' }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  baseUrl = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, SLOW);

afterAll(async () => {
  if (server === undefined) return;
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function get(path: string, ca: string | undefined): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    // An empty-ish agent config: `ca` replaces the default trust store when given,
    // and agent: false avoids reusing a socket verified under different options.
    const req = request(`${baseUrl}${path}`, { method: 'GET', agent: false, ...(ca ? { ca } : {}) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('createTestTls', () => {
  it('memoises one CA + leaf per process and writes the PEM files', async () => {
    const again = await createTestTls();
    expect(again).toBe(tls);
    for (const p of [tls.caPath, tls.certPath, tls.keyPath]) expect(existsSync(p)).toBe(true);
    expect(await readFile(tls.caPath, 'utf8')).toBe(tls.caPem);
    expect(tls.caPem).toMatch(/^-----BEGIN CERTIFICATE-----\n/);
    expect(tls.certPem).toMatch(/^-----BEGIN CERTIFICATE-----\n/);
    expect(tls.keyPem).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
    expect(tls.caPem).not.toBe(tls.certPem);
  });

  it('a Node HTTPS client trusts the leaf only when given the CA', async () => {
    const ok = await get('/api/config', tls.caPem);
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.body)).toEqual({ version: '2026.8.0', object: 'config' });

    const notFound = await get('/nope', tls.caPem);
    expect(notFound.status).toBe(404);

    // Without the CA the default trust store must reject it with a certificate error.
    const err: unknown = await get('/api/config', undefined).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(Error);
    expect((err as NodeJS.ErrnoException).code).toMatch(
      /UNABLE_TO_GET_ISSUER_CERT_LOCALLY|UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED_CERT_IN_CHAIN|DEPTH_ZERO_SELF_SIGNED_CERT/,
    );
  });

  it('openssl verifies the chain (strict, TLS server purpose)', async () => {
    const { stdout } = await execFileAsync('/usr/bin/openssl', [
      'verify',
      '-x509_strict',
      '-purpose',
      'sslserver',
      '-CAfile',
      tls.caPath,
      tls.certPath,
    ]);
    expect(stdout.trim()).toBe(`${tls.certPath}: OK`);

    // The leaf must not be a CA (rustls rejects CaUsedAsEndEntity) and must carry the SANs.
    const { stdout: text } = await execFileAsync('/usr/bin/openssl', ['x509', '-in', tls.certPath, '-noout', '-text']);
    expect(text).toContain('CA:FALSE');
    expect(text).toContain('IP Address:127.0.0.1');
    expect(text).toContain('DNS:localhost');
    expect(text).toContain('TLS Web Server Authentication');

    // And the key really belongs to the leaf certificate.
    const { stdout: certPub } = await execFileAsync('/usr/bin/openssl', ['x509', '-in', tls.certPath, '-noout', '-pubkey']);
    const { stdout: keyPub } = await execFileAsync('/usr/bin/openssl', ['pkey', '-in', tls.keyPath, '-pubout']);
    expect(keyPub).toBe(certPub);
  });
});

describe('createBwCli', () => {
  let bw: BwCli;

  beforeAll(async () => {
    bw = await createBwCli({ serverUrl: baseUrl, caPath: tls.caPath });
  });

  afterAll(async () => {
    const dir = bw?.appDataDir;
    await bw?.dispose();
    if (dir !== undefined) expect(existsSync(dir)).toBe(false);
  });

  it('starts unauthenticated with no server configured', async () => {
    expect(await bw.status()).toEqual({ serverUrl: null, lastSync: null, status: 'unauthenticated' });
  }, SLOW);

  it('bw config server + bw status report the configured server', async () => {
    const r = await bw.configServer();
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('Saved setting `config`.');

    const status = await bw.status();
    expect(status).toEqual({ serverUrl: baseUrl, lastSync: null, status: 'unauthenticated' });
    expect(await readFile(`${bw.appDataDir}/data.json`, 'utf8')).toContain(baseUrl);
  }, SLOW);

  it('reports failures as exit code 1 with the message on stderr, without throwing', async () => {
    const r = await bw.lock();
    expect(r).toMatchObject({ code: 1, stdout: '', timedOut: false });
    expect(r.stderr).toContain('You are not logged in.');
    expect(bw.session).toBeUndefined();
  }, SLOW);

  it('login over TLS reaches the stub server (which then rejects the prelogin)', async () => {
    // Configured here too, so the test does not lean on the one above having run.
    expect((await bw.configServer()).code).toBe(0);
    const before = requests.length;
    const r = await bw.login('nobody@example.com', 'wrong password');
    expect(r.code).toBe(1);
    expect(bw.session).toBeUndefined();
    // The CLI fetched /api/config over HTTPS, i.e. it trusted the test CA; the stub
    // has no prelogin endpoint, so the login itself fails.
    const seen = requests.slice(before);
    expect(seen).toContain('GET /api/config');
    expect(seen).toContain('POST /identity/accounts/prelogin/password');
    expect(r.stderr).not.toMatch(/certificate|UNABLE_TO|self.signed/i);
  }, SLOW);

  it('kills a command that exceeds its timeout', async () => {
    const r = await bw.run(['status'], { timeoutMs: 1 });
    expect(r.timedOut).toBe(true);
    expect(r.code).toBe(-1);
    expect(r.signal).toBe('SIGKILL');
  }, SLOW);
});
