import { execFile } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { createUser } from '../../test/support/accounts.js';
import { encryptText } from '../../test/support/bw-crypto.js';
import { sharedDatabaseUrl } from '../../test/support/shared-database.js';
import { NEXT } from '../../test/support/next-release.js';
import { startTestServer, type TestServer } from '../../test/support/test-server.js';
import { openDatabase, type Database } from './database.js';
import { migrateToLatest } from './migrate.js';
import { migrations } from './migrations/index.js';

const run = promisify(execFile);

/**
 * The migration compatibility rule (docs/operations.md, Upgrades): a release's migrations leave a
 * schema the previous release still runs on. Here "the previous release" is this code, and "the
 * next release" is this code's migrations plus one that expands the schema as the rule allows
 * (test/support/next-release.ts). It is applied by another process while an instance keeps
 * serving a steady stream of reads and writes; afterwards an instance of the previous release
 * still (re)starts on the new schema.
 */

/** The next release's two instances migrating, in a process of their own: what each applied. */
async function migrateElsewhere(databaseUrl: string): Promise<unknown> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', 'test/support/migrate-next-release.ts', databaseUrl]);
  return JSON.parse(stdout);
}

const servers: TestServer[] = [];
const handles: Database[] = [];
afterAll(async () => {
  for (const server of servers) await server.close().catch(() => undefined);
  for (const handle of handles) await handle.close().catch(() => undefined);
});

describe('a newer release migrating under an older one', () => {
  it('keeps the older instance serving every request while the migration applies, once; an older instance still starts afterwards', async () => {
    const databaseUrl = await sharedDatabaseUrl();
    const old = await startTestServer({ databaseUrl });
    servers.push(old);
    const user = await createUser(old);
    const name = () => encryptText('folder', user.account.userKey);

    // A steady stream of reads and writes on the older instance, two at a time.
    const statuses: number[] = [];
    let stop = false;
    const worker = async () => {
      while (!stop) {
        const created = await old.request('POST', '/api/folders', { token: user.accessToken, json: { name: name() } });
        statuses.push(created.status);
        statuses.push((await old.request('PUT', `/api/folders/${created.body?.id}`, { token: user.accessToken, json: { name: name() } })).status);
        statuses.push((await old.request('GET', '/api/sync', { token: user.accessToken })).status);
      }
    };
    const workers = [worker(), worker()];
    // However slow the machine: some requests before the migration, and some after it.
    const served = async (n: number) => {
      while (statuses.length < n) await sleep(20);
    };
    await served(6);

    // The new release's first instance migrates; a second one finds nothing left to do.
    expect(await migrateElsewhere(databaseUrl)).toEqual([
      { applied: [NEXT], newer: [] },
      { applied: [], newer: [] },
    ]);
    const next = openDatabase(databaseUrl, { poolSize: 2 });
    handles.push(next);
    const migrated = statuses.length;
    await served(migrated + 9);
    stop = true;
    await Promise.all(workers);

    expect(statuses.filter((s) => s !== 200)).toEqual([]);

    // The older code's writes fill the new columns with their defaults; the new code reads them.
    const rows = await sql<{ color: string | null }>`select color from folders`.execute(next.db);
    // Folders the older code created after the migration, among them.
    expect(rows.rows.length).toBeGreaterThanOrEqual(4);
    expect(rows.rows.every((r) => r.color === null)).toBe(true);
    const flags = await sql<{ next_flags: number }>`select next_flags from folders`.execute(next.db);
    expect(new Set(flags.rows.map((r) => Number(r.next_flags)))).toEqual(new Set([0]));

    // An older instance restarting mid-upgrade starts on the newer schema and serves.
    const restarted = await startTestServer({ databaseUrl });
    servers.push(restarted);
    const other = await createUser(restarted);
    expect((await restarted.request('POST', '/api/folders', { token: other.accessToken, json: { name: encryptText('after', other.account.userKey) } })).status).toBe(200);
    expect((await restarted.request('GET', '/api/sync', { token: user.accessToken })).status).toBe(200);
    expect(await migrateToLatest(restarted.database)).toEqual({ applied: [], newer: [NEXT] });
  }, 60_000);

  it('refuses a database with migrations it does not know while its own are still pending', async () => {
    const databaseUrl = await sharedDatabaseUrl();
    const database = openDatabase(databaseUrl, { poolSize: 2 });
    handles.push(database);
    const all = migrations(database.engine);
    const names = Object.keys(all);
    const last = names[names.length - 1] ?? '';
    // A database of another line of releases: all but this code's last migration, plus one of its own.
    const elsewhere = Object.fromEntries([...Object.entries(all).filter(([n]) => n !== last), ['8999-elsewhere', { up: async () => undefined }]]);
    await migrateToLatest(database, { migrations: elsewhere });
    await expect(migrateToLatest(database)).rejects.toThrow(`does not know (8999-elsewhere) while its own ${last} are not applied`);
  }, 60_000);
});
