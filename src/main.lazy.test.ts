import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { get } from 'node:http';
import { get as getHttps } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { OPTIONAL_PACKAGES } from '../test/support/lazy-packages.js';
import { freePort, killPrograms, PROJECT_ROOT, startProgram } from '../test/support/program.js';
import { createTestTls } from '../test/support/tls.js';

afterEach(() => killPrograms());


// Over HTTPS too: the test's own certificate authority is not what matters here, so it is not checked.
const answers = (url: string) =>
  new Promise<boolean>((resolve) => {
    const asked = (res: { statusCode?: number; resume(): void }) => {
      res.resume();
      resolve(res.statusCode === 200);
    };
    (url.startsWith('https:') ? getHttps(url, { rejectUnauthorized: false }, asked) : get(url, asked)).on('error', () => resolve(false));
  });

/**
 * Starts the server program with `env`, waits for its first answer (and then for an answer to
 * `thenAsk`, if given) and lists the npm packages it loaded by then. `dataDir`: a DATA_DIR an
 * earlier start made (its database exists), or a new one.
 */
async function packagesLoadedBy(env: Record<string, string>, thenAsk?: string, dataDir?: string): Promise<Set<string>> {
  const dir = dataDir ?? mkdtempSync(join(tmpdir(), 'sr-lazy-'));
  const file = join(dir, 'packages.txt');
  rmSync(file, { force: true });
  const port = await freePort();
  const scheme = env.TLS_CERT_FILE ? 'https' : 'http';
  const hooks = pathToFileURL(join(PROJECT_ROOT, 'test/support/loaded-packages.mjs')).href;
  // From source: the build bundles the packages every start loads, so only imports that stay
  // separate modules would be seen resolving there.
  const run = startProgram(
    { DATA_DIR: dir, PORT: String(port), LOG_LEVEL: 'warn', NODE_OPTIONS: `--import ${hooks}`, LOADED_PACKAGES_FILE: file, ...env },
    { program: 'source' },
  );
  const deadline = Date.now() + 30_000;
  while (!(await answers(`${scheme}://127.0.0.1:${port}/api/alive`))) {
    if (Date.now() > deadline) throw new Error(`the server did not answer: ${run.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  if (thenAsk && !(await answers(`${scheme}://127.0.0.1:${port}${thenAsk}`))) throw new Error(`${thenAsk} did not answer 200: ${run.output()}`);
  return new Set(readFileSync(file, 'utf8').split('\n').filter(Boolean));
}

describe('optional dependencies', () => {
  it('are not loaded by a default start on SQLite', async () => {
    const loaded = await packagesLoadedBy({});
    // The record works: what every start needs is in it.
    expect(loaded).toContain('fastify');
    expect(loaded).toContain('better-sqlite3');
    expect(OPTIONAL_PACKAGES.filter((name) => loaded.has(name))).toEqual([]);
    // Nor ICU's data (eslint.config.js refuses locale-aware formatting in src/; this catches packages).
    expect([...loaded].filter((name) => name.startsWith('icu:'))).toEqual([]);
  });

  it('are not loaded, nor ICU\'s data, by a restart on an existing database', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sr-lazy-'));
    await packagesLoadedBy({}, undefined, dir);
    killPrograms();
    // The migrations a start finds applied were applied in the same millisecond: Kysely orders
    // those by name, with localeCompare unless src/db/migrate.ts gives it a comparator.
    const loaded = await packagesLoadedBy({}, undefined, dir);
    expect(loaded).toContain('better-sqlite3');
    expect(OPTIONAL_PACKAGES.filter((name) => loaded.has(name))).toEqual([]);
    expect([...loaded].filter((name) => name.startsWith('icu:'))).toEqual([]);
  });

  it('are not loaded by a start with HTTPS from certificate files (TLS_MODE=files)', async () => {
    const tls = await createTestTls();
    const loaded = await packagesLoadedBy({ TLS_CERT_FILE: tls.certPath, TLS_KEY_FILE: tls.keyPath });
    expect(loaded).toContain('fastify');
    // @peculiar/x509 among them: only TLS_MODE=self-signed makes or checks certificates.
    expect(OPTIONAL_PACKAGES.filter((name) => loaded.has(name))).toEqual([]);
    expect([...loaded].filter((name) => name.startsWith('icu:'))).toEqual([]);
  });

  it('are loaded when their setting asks for them', async () => {
    // Nothing listens on port 1: the clients keep reconnecting in the background, and the server serves.
    // Traces go to a port nothing listens on: only what was loaded matters here.
    const loaded = await packagesLoadedBy({ REDIS_URL: 'redis://127.0.0.1:1', METRICS_ENABLED: 'true', METRICS_TOKEN: 'a-token-of-sixteen-characters', OTEL_ENABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' });
    expect(loaded).toContain('ioredis');
    expect(loaded).toContain('prom-client');
    expect([...loaded]).toEqual(expect.arrayContaining(['@opentelemetry/sdk-trace-node', '@opentelemetry/exporter-trace-otlp-http', '@opentelemetry/resources']));
    expect(loaded).not.toContain('pg');
  });

  it('load the API docs\' plugins on the first request for the docs', async () => {
    const loaded = await packagesLoadedBy({}, '/docs/json');
    expect(loaded).toContain('@fastify/swagger');
    expect(loaded).toContain('@fastify/swagger-ui');
  });
});
