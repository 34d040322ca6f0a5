import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Selectable } from 'kysely';
import { assertCleanLog, remember } from './log-audit.js';
import { createSchema } from './pg-schema.js';
import { Agent, fetch as undiciFetch, type Dispatcher } from 'undici';
import { buildApp } from '../../src/app.js';
import { systemClock, type Clock } from '../../src/shared/clock.js';
import { loadConfig, type Config } from '../../src/config/config.js';
import { openDatabase, type Database } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { prepareHttps } from '../../src/tls/https-options.js';
import type { ServerKeysTable } from '../../src/db/schema.js';
import type { Pushes } from '../../src/platform/push/pushes.js';
import type { Outbox } from '../../src/features/push-delivery/channel.js';
import { startTracing } from '../../src/features/operations/tracing-setup.js';
import type { SpanExporter } from '@opentelemetry/sdk-trace-node';

/**
 * The engine under test: `DATABASE_URL=postgres://… npm test` runs the suite on PostgreSQL,
 * each test server in a schema of its own; otherwise an in-memory SQLite database.
 */
export const TEST_DATABASE_URL = process.env.DATABASE_URL ?? 'sqlite::memory:';
export const TEST_ENGINE = TEST_DATABASE_URL.startsWith('postgres') ? 'postgres' : 'sqlite';

/** A fresh, empty database for one test server; `drop` removes it. */
export async function freshDatabaseUrl(): Promise<{ url: string; drop(): Promise<void> }> {
  if (TEST_ENGINE === 'sqlite') return { url: 'sqlite::memory:', drop: async () => undefined };
  // The run's name (test/global-setup.ts) lets its teardown drop exactly its own schemas.
  const schema = `t_${process.env.STRONGROOM_TEST_RUN ?? 'norun'}_${randomBytes(6).toString('hex')}`;
  const url = await createSchema(TEST_DATABASE_URL, schema);
  // Schemas are dropped once, after the whole run (test/global-setup.ts), not as each server
  // closes.
  return { url, drop: async () => undefined };
}

/** The per-caller limits of the expensive routes, off: their own test turns them on. */
export const CALLER_LIMITS_OFF = { RATE_LIMIT_COLLECT: '0', RATE_LIMIT_COLLECT_EVENTS: '0', RATE_LIMIT_IMPORT: '0', RATE_LIMIT_EXPORT: '0', RATE_LIMIT_BULK: '0', RATE_LIMIT_HIBP: '0', RATE_LIMIT_DEVICE_APPROVAL: '0' };

/**
 * The secrets key of every test server that names none: without it, the first secret sealed (the
 * Web Push VAPID key, made on the first GET /config) would write DATA_DIR/secrets.key into the
 * working directory.
 */
const TEST_SECRETS_KEY = randomBytes(32).toString('base64');

/** Config as the server would load it from these environment variables. */
export function testConfig(env: Record<string, string> = {}): Config {
  // Tests send many requests from 127.0.0.1, some on hundreds of connections at once, and many to
  // one organization's public API: the limits' and the connection cap's own tests turn them on.
  // Keep-alive outlasts a test's own slow work (the clients' SDK derives keys in WASM for seconds,
  // holding the event loop): otherwise the server's idle timer and the next request race, and
  // the request meets a closed socket (ECONNRESET).
  return loadConfig({ LOG_LEVEL: 'warn', PASSWORD_ITERATIONS: '100000', IP_RATE_LIMITING: 'false', MAX_CONNECTIONS_PER_IP: '0', PUBLIC_API_RATE_LIMIT: '0', KEEP_ALIVE_TIMEOUT_SECONDS: '120', SECRETS_KEY: TEST_SECRETS_KEY, ...CALLER_LIMITS_OFF, ...env });
}

/** Collects log lines so tests can check what was (and was not) logged. */
export class LogCapture extends Writable {
  readonly lines: string[] = [];
  override _write(chunk: Buffer, _encoding: string, callback: () => void): void {
    this.lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    callback();
  }
  text(): string {
    return this.lines.join('\n');
  }
}

export interface TestServer {
  app: FastifyInstance;
  config: Config;
  database: Database;
  logs: LogCapture;
  /** The server's time source (the test's own clock, when it gave one). */
  clock: Clock;
  /** http(s)://127.0.0.1:port — the server listens on a real socket. */
  baseUrl: string;
  /** Where this server keeps attachment and Send files: a fresh folder removed on close, unless `FILES_DIR` was given. */
  filesDir: string;
  request(method: string, path: string, options?: RequestOptions): Promise<TestResponse>;
  close(): Promise<void>;
}

export interface RequestOptions {
  json?: unknown;
  form?: Record<string, string>;
  body?: string;
  headers?: Record<string, string>;
  token?: string;
}

export interface TestResponse {
  status: number;
  headers: { get(name: string): string | null };
  text: string;
  // Tests read arbitrary response fields.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

export interface StartOptions {
  env?: Record<string, string>;
  clock?: Clock;
  /** Serve on an existing database instead of a fresh one (for multi-instance tests). */
  databaseUrl?: string;
  /** Serve HTTPS with this certificate; the test's own requests trust its CA. */
  tls?: { certPath: string; keyPath: string; caPem: string };
  /** Listen on this port (default: a free one). */
  port?: number;
  /** Where the server's pushes go (see test/support/pushes.ts); the app's own by default. */
  pushes?: Pushes;
  /** Where the channels' other messages are queued (relay registrations): a recording outbox. */
  outbox?: Outbox;
  /** With OTEL_ENABLED in `env`: where the spans go (the SDK's InMemorySpanExporter) instead of OTLP. */
  traceExporter?: SpanExporter;
}

/**
 * The token signing key the first fresh test server of this process generated, handed to every
 * later fresh database: generating a 2048-bit RSA key costs about 0.3 s a server. Servers on a
 * database they were given (`databaseUrl`) make or read their own, as in production.
 */
let signingKey: Selectable<ServerKeysTable> | undefined;
const SIGNING_KEY = 'jwt-signing';

export async function startTestServer(options: StartOptions = {}): Promise<TestServer> {
  const fresh = options.databaseUrl ? { url: options.databaseUrl, drop: async () => undefined } : await freshDatabaseUrl();
  const tlsEnv: Record<string, string> = options.tls ? { TLS_CERT_FILE: options.tls.certPath, TLS_KEY_FILE: options.tls.keyPath } : {};
  // Each server stores files (and its icon cache) in a folder of its own, never the project's DATA_DIR.
  const ownFilesDir = options.env?.FILES_DIR ? undefined : await mkdtemp(join(tmpdir(), 'strongroom-files-'));
  // Every request line is logged, so the log audit sees what production would write.
  const config = testConfig({ DATABASE_URL: fresh.url, PORT: '0', LOG_LEVEL: 'info', ...(ownFilesDir ? { FILES_DIR: ownFilesDir, ICONS_CACHE_DIR: join(ownFilesDir, 'icon_cache') } : {}), ...tlsEnv, ...options.env });
  const https = await prepareHttps(config);
  const caPem = options.tls?.caPem ?? https?.selfSigned?.caPem;
  const dispatcher = caPem ? new Agent({ connect: { ca: caPem } }) : undefined;
  // Nothing of OpenTelemetry is loaded unless OTEL_ENABLED is in `env`.
  const tracing = await startTracing(config, options.traceExporter ? { exporter: options.traceExporter } : {});
  const database = openDatabase(config.databaseUrl, { poolSize: 4, ...(tracing ? { queryObserver: tracing.queries } : {}) });
  await migrateToLatest(database);
  if (!options.databaseUrl && signingKey) await database.db.insertInto('server_keys').values(signingKey).execute();
  const logs = new LogCapture();
  const app = await buildApp({ config, database, logStream: logs, ...(https ? { https } : {}), ...(options.clock ? { clock: options.clock } : {}), ...(options.pushes ? { pushes: options.pushes } : {}), ...(options.outbox ? { outbox: options.outbox } : {}), tracing });
  await app.listen({ host: '127.0.0.1', port: options.port ?? 0 });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const baseUrl = `${https ? 'https' : 'http'}://127.0.0.1:${port}`;

  return {
    app,
    config,
    database,
    logs,
    clock: options.clock ?? systemClock,
    baseUrl,
    filesDir: config.filesDir as string,
    request: (method, path, requestOptions) => httpRequest(baseUrl, method, path, requestOptions, dispatcher),
    async close() {
      // A close that hangs fails as a hook time-out naming only the test file: say which step.
      let step = 'the app (requests in flight, background work)';
      const watchdog = setInterval(() => console.warn(`test server ${baseUrl}: still closing ${step}`), 30_000).unref();
      try {
        await app.close();
        if (!options.databaseUrl && !signingKey) {
          signingKey = await database.db.selectFrom('server_keys').selectAll().where('purpose', '=', SIGNING_KEY).executeTakeFirst();
        }
        await dispatcher?.close();
        step = 'the database pool';
        await database.close();
        await tracing?.shutdown();
        step = 'the database schema (drop)';
        await fresh.drop();
      } finally {
        clearInterval(watchdog);
      }
      if (ownFilesDir) await rm(ownFilesDir, { recursive: true, force: true });
      // The log audit: a server that logged a secret fails the test that owned it.
      assertCleanLog(logs.lines, `the test server at ${baseUrl}`);
    },
  };
}

export async function httpRequest(
  baseUrl: string,
  method: string,
  path: string,
  options: RequestOptions = {},
  dispatcher?: Dispatcher,
): Promise<TestResponse> {
  const headers: Record<string, string> = { ...options.headers };
  let body: string | undefined = options.body;
  if (options.json !== undefined) {
    headers['content-type'] ??= 'application/json; charset=utf-8';
    body = JSON.stringify(options.json);
  } else if (options.form) {
    headers['content-type'] ??= 'application/x-www-form-urlencoded; charset=utf-8';
    body = new URLSearchParams(options.form).toString();
  }
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  remember(options.json);
  remember(options.form);
  remember({ token: options.token });
  const response = await undiciFetch(new URL(path, baseUrl), {
    method,
    headers,
    ...(body !== undefined ? { body } : {}),
    ...(dispatcher ? { dispatcher } : {}),
  });
  const text = await response.text();
  let parsed: unknown = undefined;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  remember(parsed);
  return { status: response.status, headers: response.headers, text, body: parsed };
}
