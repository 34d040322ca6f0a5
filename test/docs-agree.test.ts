import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isStrongroomName } from '../src/config/env-names.js';
import { adminTokenHash } from './support/admin-console.js';
import { ALL_ROUTES_ENV, openApiDocument } from './support/openapi.js';
import { startTestServer, type TestServer } from './support/test-server.js';

/**
 * The README, docs/*.md and .env.example name settings and HTTP paths; each must exist, so that
 * a renamed setting or route fails here rather than on an operator's machine.
 */
const ROOT = resolve(import.meta.dirname, '..');
const DOCUMENTS = ['README.md', '.env.example', ...readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];

/** Names in backticks that look like settings but are someone else's, each with why it is documented. */
const OTHER_NAMES: Record<string, string> = {
  NODE_EXTRA_CA_CERTS: "Node's: trusting a private CA for the bw client and the server",
  NODE_OPTIONS: "Node's: flags for the server process",
  UV_THREADPOOL_SIZE: "libuv's thread pool, which password hashing shares",
  MALLOC_MMAP_THRESHOLD_: "glibc's, a memory tuning of the process",
  SSL_CERT_FILE: "OpenSSL's, for clients that trust a CA file",
  // The clients' own variables, which the command-line docs name beside the settings.
  BW_CLIENTID: "the bw client's, for logging in with an API key",
  BW_CLIENTSECRET: "the bw client's, for logging in with an API key",
  BW_SESSION: "the bw client's session key",
  BWS_ACCESS_TOKEN: "the bws client's access token",
  BWS_SERVER_URL: "the bws client's server",
  MALLOC_ARENA_MAX: "glibc's, measured in the benchmarks",
  MALLOC_TRIM_THRESHOLD_: "glibc's, measured in the benchmarks",
  SQLITE_DEFAULT_CACHE_SIZE: "SQLite's compile-time default, compared with SQLITE_CACHE_MEGABYTES",
  TLS_MOD: 'the mistyped name in the quoted refusal of an unknown .env name (docs/operating.md)',
  PR_SET_MDWE: "Linux's, behind systemd's MemoryDenyWriteExecute, which docs/install.md says the unit leaves off",
};

/** Paths the docs name to say they are not served. */
const NOT_SERVED: Record<string, string> = {
  '/api/accounts/key': 'docs/key-rotation.md: the older rotation route, refused on purpose',
  '/api/accounts/key-management/rotate-user-keys': 'docs/key-rotation.md: rotation without the account keys, refused on purpose',
};

/**
 * Upper-case names the code itself uses (constants, the benchmark's and the tests' variables,
 * error codes): the developer docs name them, and the type checker, not this test, keeps them true.
 */
function codeNames(): Set<string> {
  const names = new Set<string>();
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (/\.test\.ts$/.test(entry.name)) {
        // From a test only the variables it reads: a name a test merely mentions (a mistyped
        // setting it feeds the server, a setting since renamed) must not count as real.
        for (const match of readFileSync(join(ROOT, path), 'utf8').matchAll(/process\.env\.([A-Z][A-Z0-9_]*)/g)) names.add(match[1]!);
      } else if (/\.(ts|mjs|js|sh)$/.test(entry.name)) {
        for (const match of readFileSync(join(ROOT, path), 'utf8').matchAll(/\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+_?\b/g)) names.add(match[0]);
      }
    }
  };
  for (const dir of ['src', 'test', 'scripts', 'bench']) if (existsSync(join(ROOT, dir))) walk(dir);
  // The tools' configurations at the top (vitest.config.ts, eslint.config.js).
  for (const file of readdirSync(ROOT).filter((name) => /\.config\.(ts|js|mjs)$/.test(name))) {
    for (const match of readFileSync(join(ROOT, file), 'utf8').matchAll(/\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+_?\b/g)) names.add(match[0]);
  }
  // The image's build arguments (docs/install.md names them for `--build-arg`).
  for (const match of readFileSync(join(ROOT, 'Dockerfile'), 'utf8').matchAll(/^ARG ([A-Z][A-Z0-9_]*)/gm)) names.add(match[1]!);
  // compose.yaml's own variables (`${STRONGROOM_PORT:-8080}`) and the unit's values (AF_INET…).
  for (const match of readFileSync(join(ROOT, 'compose.yaml'), 'utf8').matchAll(/\$\{([A-Z][A-Z0-9_]*)/g)) names.add(match[1]!);
  for (const match of readFileSync(join(ROOT, 'deploy/strongroom.service'), 'utf8').matchAll(/\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b/g)) names.add(match[0]);
  return names;
}

/** Prefixes of names that are not settings: the test suite's own variables. */
const OTHER_PREFIXES = ['STRONGROOM_TEST_'];

/** The inline code spans of a document (`.env.example` has none: its lines are the text). */
function spansOf(file: string, text: string): string[] {
  if (file === '.env.example') return text.split('\n');
  const withoutFences = text.replace(/```[\s\S]*?```/g, '');
  return [...withoutFences.matchAll(/`([^`\n]+)`/g)].map((match) => match[1]!);
}

function documented(pattern: RegExp): { file: string; value: string }[] {
  const found: { file: string; value: string }[] = [];
  for (const file of DOCUMENTS) {
    for (const span of spansOf(file, readFileSync(join(ROOT, file), 'utf8'))) {
      for (const match of span.matchAll(pattern)) found.push({ file, value: match[1] ?? match[0] });
    }
  }
  return found;
}

/** `/api/ciphers/{id}`, `/api/ciphers/:id` and `/api/ciphers/<id>` alike; a query string dropped. */
function normalized(path: string): string {
  return path
    .replace(/[?#].*$/, '')
    .replace(/[.,;:)]+$/, '')
    .split('/')
    .map((segment) => (/^(\{.*\}|:.+|<.*>)$/.test(segment) ? '{}' : segment))
    .join('/')
    .replace(/\/+$/, '');
}

const servers: TestServer[] = [];
let routes: string[] = [];

beforeAll(async () => {
  // The routes of both variants (cloud has its billing routes), with the admin console on.
  const env = { ...ALL_ROUTES_ENV, ADMIN_TOKEN: await adminTokenHash() };
  for (const variant of [env, { ...env, DEPLOYMENT: 'cloud' }]) {
    const server = await startTestServer({ env: variant });
    servers.push(server);
    routes = [...routes, ...Object.keys((await openApiDocument(server)).paths).map(normalized)];
  }
}, 120_000);

afterAll(async () => {
  for (const server of servers) await server.close();
});

describe('the docs name only what exists', () => {
  it('every setting named in backticks is a setting, or a name of another program listed with its reason', () => {
    const names = documented(/\b([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+_?)(?![a-z0-9])/g);
    const inCode = codeNames();
    const unknown = names.filter(({ value }) => !isStrongroomName(value) && !(value in OTHER_NAMES) && !inCode.has(value) && !OTHER_PREFIXES.some((prefix) => value.startsWith(prefix)));
    expect(names.length).toBeGreaterThan(100);
    expect(unknown.map(({ file, value }) => `${file}: ${value}`)).toEqual([]);
  });

  it('every path under /api, /identity, /events, /notifications or /admin is a route (a prefix of routes counts)', () => {
    const paths = documented(/(?:^|[\s(=`"'])((?:\/api|\/identity|\/events|\/notifications|\/admin)(?:\/[^\s`"'*…]*)?)/g);
    const missing = paths.filter(({ value }) => {
      const path = normalized(value);
      if (path in NOT_SERVED) return false;
      return !routes.some((route) => route === path || route.startsWith(`${path}/`) || matches(route, path));
    });
    expect(paths.length).toBeGreaterThan(50);
    expect(missing.map(({ file, value }) => `${file}: ${value}`)).toEqual([]);
  });
});

/** A documented concrete path (`/api/ciphers/123`) against a route with parameters. */
function matches(route: string, path: string): boolean {
  const a = route.split('/');
  const b = path.split('/');
  return a.length === b.length && a.every((segment, i) => segment === b[i] || segment === '{}');
}
