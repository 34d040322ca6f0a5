/**
 * Memory of a large sync: a vault of BENCH_ITEMS (100,000) items, the server in its own
 * process on SQLite, its resident memory (VmRSS) and peak (VmHWM) read from /proc before the
 * first sync, after each of a few syncs (the first after a change of one item), and the sync
 * body's size. The process should grow by at most about one response plus the sync cache's
 * budget (SYNC_CACHE_MEGABYTES, 64 MB unless given), whatever the vault's size. Linux only.
 * SQLITE_CACHE_MEGABYTES, when given, goes to the server too. Two vaults, one after the other
 * (BENCH_VAULT=personal or organization for one): the user's own items, and the same items in an
 * organization's default collection (its owner syncs: the listing by version and the item
 * cache's path), moved there in the database after the import.
 *
 *   npx tsx bench/sync-memory.ts
 */
import { readFileSync } from 'node:fs';
import { itemBody } from './items.js';
import { openDatabase } from '../src/db/database.js';
import { call, CLIENT_HEADERS, databaseFor, foundOrganization, registerAndLogin, startServer, summary } from './harness.js';

const ITEMS = Number(process.env.BENCH_ITEMS ?? 100_000);
const CACHE_MB = Number(process.env.SYNC_CACHE_MEGABYTES ?? 64);
const MB = 1024 * 1024;
const VAULTS = (process.env.BENCH_VAULT ?? 'personal,organization').split(',');

function memory(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) * 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

/** One vault of ITEMS items in a fresh database and server: idle, four syncs, the peak. */
async function measureVault(organization: boolean) {
  const serverEnv = {
    SYNC_CACHE_MEGABYTES: String(CACHE_MB),
    ...(process.env.SQLITE_CACHE_MEGABYTES ? { SQLITE_CACHE_MEGABYTES: process.env.SQLITE_CACHE_MEGABYTES } : {}),
    // The cloud variant, where any account may found an organization; sync is the same code.
    ...(organization ? { DEPLOYMENT: 'cloud' } : {}),
  };
  const database = await databaseFor('sqlite');
  let server = await startServer(database.url, serverEnv);
  try {
    const owner = organization ? await foundOrganization(server.url, 'memory@example.com') : { ...(await registerAndLogin(server.url, 'memory@example.com')), orgId: undefined };
    const { token, account } = owner;
    // Imports of 5,000 items; encrypted once per distinct body, the vault repeats 1,000 of them.
    const bodies = Array.from({ length: 1000 }, (_, i) => itemBody(account, i));
    for (let start = 0; start < ITEMS; start += 5000) {
      const ciphers = Array.from({ length: Math.min(5000, ITEMS - start) }, (_, i) => bodies[(start + i) % bodies.length]);
      await call(server.url, 'POST', '/api/ciphers/import', { token, json: { folders: [], ciphers, folderRelationships: [] } });
    }
    const [first] = (JSON.parse(await call(server.url, 'GET', '/api/ciphers', { token })) as { data: { id: string }[] }).data;

    // A fresh process: the import's own memory is not counted.
    await server.stop();
    if (owner.orgId) {
      // There is no bulk import of organization items: the imported items move to the organization.
      const moving = openDatabase(database.url);
      const db = moving.db;
      const collection = await db.selectFrom('collections').select('id').where('organization_id', '=', owner.orgId).executeTakeFirstOrThrow();
      const user = await db.selectFrom('users').select('id').where('email', '=', 'memory@example.com').executeTakeFirstOrThrow();
      await db.updateTable('ciphers').set({ organization_id: owner.orgId, user_id: null }).where('user_id', '=', user.id).execute();
      await db
        .insertInto('collection_ciphers')
        .columns(['collection_id', 'cipher_id'])
        .expression(db.selectFrom('ciphers').select((eb) => [eb.val(collection.id).as('collection_id'), 'id']).where('organization_id', '=', owner.orgId))
        .execute();
      await moving.close();
    }
    server = await startServer(database.url, serverEnv);
    const pid = server.pid ?? 0;
    const idle = memory(pid);
    console.log(`${ITEMS.toLocaleString('en-US')} ${organization ? 'organization ' : ''}items, sync cache ${CACHE_MB} MB, SQLite's page cache ${process.env.SQLITE_CACHE_MEGABYTES ?? 'the default'} MB, Node ${process.version}`);
    console.log(`idle: rss ${(idle.rss / MB).toFixed(0)} MB`);
    let body = 0;
    for (let round = 1; round <= 4; round++) {
      if (round === 3) await call(server.url, 'PUT', `/api/ciphers/${first?.id ?? ''}`, { token, json: { ...itemBody(account, 7), ...(owner.orgId ? { organizationId: owner.orgId } : {}) } });
      const started = performance.now();
      const res = await fetch(`${server.url}/api/sync?excludeDomains=true`, { headers: { ...CLIENT_HEADERS, authorization: `Bearer ${token}` } });
      body = (await res.arrayBuffer()).byteLength;
      const ms = performance.now() - started;
      const now = memory(pid);
      const what = round === 1 ? 'first sync' : round === 3 ? 'sync after one item changed' : 'sync, vault unchanged';
      console.log(`${what}: rss ${(now.rss / MB).toFixed(0)} MB, peak ${(now.peak / MB).toFixed(0)} MB, body ${(body / MB).toFixed(1)} MB in ${ms.toFixed(0)} ms`);
    }
    const end = memory(pid);
    const growth = (end.peak - idle.rss) / MB;
    const bound = (body + CACHE_MB * MB) / MB;
    console.log(`peak growth over idle ${growth.toFixed(0)} MB; one response plus the cache budget: ${bound.toFixed(0)} MB`);
    summary('sync-memory', {
      what: `sqlite, peak growth of the process over idle through four syncs of a ${ITEMS.toLocaleString('en-US')}-item ${organization ? 'organization ' : ''}vault (the ceiling: one answer, ${(body / MB).toFixed(1)} MB, plus the sync cache, ${CACHE_MB} MB)`,
      strongroom: growth,
      ceiling: bound,
      unit: 'MB',
      better: 'lower',
      target: 'at most one answer plus a bounded cache',
      met: growth <= bound,
    });
  } finally {
    await server.stop();
    await database.drop();
  }
}

for (const vault of VAULTS) await measureVault(vault === 'organization');
