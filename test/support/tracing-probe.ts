/**
 * Run as a process of its own (src/features/operations/tracing.test.ts): builds the server as
 * `strongroom serve` does, with traces on (`on`) or off (no argument), answers a request, and
 * prints which OpenTelemetry packages the process loaded.
 */
import { createRequire } from 'node:module';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/config.js';
import { openDatabase } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { startTracing } from '../../src/features/operations/tracing-setup.js';

const on = process.argv[2] === 'on';
// Traces on go to a port nothing listens on: the probe only looks at what was loaded.
const config = loadConfig({
  DATABASE_URL: 'sqlite::memory:',
  LOG_LEVEL: 'silent',
  PASSWORD_ITERATIONS: '100000',
  ...(on ? { OTEL_ENABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' } : {}),
});
const tracing = await startTracing(config);
const database = openDatabase(config.databaseUrl, tracing ? { queryObserver: tracing.queries } : {});
await migrateToLatest(database);
const app = await buildApp({ config, database, tracing });
const answer = await app.inject({ method: 'POST', url: '/identity/accounts/prelogin', payload: { email: 'probe@example.com' } });
const packages = new Set<string>();
for (const path of Object.keys(createRequire(import.meta.url).cache)) {
  const match = /node_modules\/(@opentelemetry\/[^/]+)\//.exec(path);
  if (match?.[1]) packages.add(match[1]);
}
process.stdout.write(`${JSON.stringify({ status: answer.statusCode, tracing: tracing !== null, packages: [...packages].sort() })}\n`);
process.exit(0);
