import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freshDatabaseUrl, TEST_ENGINE } from './test-server.js';

/**
 * A fresh database that several test servers can open at once (`startTestServer({ databaseUrl })`),
 * as instances behind one load balancer do: a SQLite file, or a PostgreSQL schema of its own.
 * Start the servers one after the other: the first makes the signing key, the others read it.
 */
export async function sharedDatabaseUrl(): Promise<string> {
  if (TEST_ENGINE === 'sqlite') return `sqlite:${join(mkdtempSync(join(tmpdir(), 'strongroom-shared-')), 'shared.sqlite')}`;
  return (await freshDatabaseUrl()).url;
}
