/**
 * Vault benchmark: sync of a 10,000-item vault, item create and update throughput, on SQLite
 * and PostgreSQL, with the server in its own process; and, as the ceiling, a bare Node http
 * server sending the same sync bytes. Not a test: it measures and prints.
 *
 *   npx tsx bench/vault.ts                      # SQLite, and PostgreSQL when BENCH_POSTGRES_URL is set
 *   BENCH_POSTGRES_URL=postgres://postgres@127.0.0.1:55433/strongroom_test npx tsx bench/vault.ts
 *
 * Options (environment): BENCH_ITEMS (10000), BENCH_SECONDS (10), BENCH_ENGINES (sqlite,postgres).
 */
import { itemBody } from './items.js';
import { call, ceilingFor, CLIENT_HEADERS, databaseFor, ENGINES, measure, registerAndLogin, Results, startServer } from './harness.js';
import type { TestAccount } from '../test/support/bw-crypto.js';

const ITEMS = Number(process.env.BENCH_ITEMS ?? 10_000);

async function seed(base: string): Promise<{ token: string; ids: string[]; account: TestAccount }> {
  const { token, account } = await registerAndLogin(base, 'bench@example.com');
  for (let start = 0; start < ITEMS; start += 5000) {
    const ciphers = Array.from({ length: Math.min(5000, ITEMS - start) }, (_, i) => itemBody(account, start + i));
    await call(base, 'POST', '/api/ciphers/import', { token, json: { folders: [], ciphers, folderRelationships: [] } });
  }
  const list = JSON.parse(await call(base, 'GET', '/api/ciphers', { token })) as { data: { id: string }[] };
  return { token, ids: list.data.map((c) => c.id), account };
}

const results = new Results();

async function benchEngine(engine: string) {
  const database = await databaseFor(engine);
  let server = await startServer(database.url);
  try {
    const { token, ids, account } = await seed(server.url);
    const headers = { ...CLIENT_HEADERS, authorization: `Bearer ${token}` };
    const syncPath = '/api/sync?excludeDomains=true';
    const bytes = await call(server.url, 'GET', syncPath, { token });
    console.error(`${engine}: ${ids.length} items, sync body ${bytes.length.toLocaleString('en-US')} bytes`);

    // Sync of the seeded vault, unchanged between syncs (the usual case: several devices,
    // unlocks), and with the sync cache off (every sync reads and writes every item, as the
    // first sync after a change does).
    const ceiling = await ceilingFor(`sync-${engine}`, bytes);
    try {
      for (const [mode, env] of [
        ['vault unchanged', {}],
        ['cache off', { SYNC_CACHE_MEGABYTES: '0' }],
      ] as const) {
        await server.stop();
        server = await startServer(database.url, env);
        await call(server.url, 'GET', syncPath, { token });
        for (const connections of [1, 4]) {
          const ours = await measure({ url: server.url + syncPath, headers, connections });
          const bare = await measure({ url: ceiling.url + syncPath, connections });
          results.row(engine, `sync, ${mode}`, connections, ours);
          results.row(engine, 'sync, bare http ceiling', connections, bare);
          results.ratio(`${engine}, ${mode}, ${connections} connection(s)`, ours, bare);
        }
      }
    } finally {
      await ceiling.stop();
    }

    await server.stop();
    server = await startServer(database.url);
    const create = JSON.stringify(itemBody(account, 1));
    results.row(engine, 'create item', 10, await measure({ url: `${server.url}/api/ciphers`, method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: create, connections: 10 }));
    let next = 0;
    const update = JSON.stringify(itemBody(account, 2));
    results.row(
      engine,
      'update item',
      10,
      await measure({
        url: server.url,
        connections: 10,
        requests: [
          {
            method: 'PUT',
            headers: { ...headers, 'content-type': 'application/json' },
            body: update,
            setupRequest: (request) => ({ ...request, path: `/api/ciphers/${ids[next++ % ids.length] ?? ''}` }),
          },
        ],
      }),
    );
  } finally {
    await server.stop();
    await database.drop();
  }
}

for (const engine of ENGINES) await benchEngine(engine);
results.print(`${ITEMS} items`, 'Sync latency relative to the ceiling (Strongroom / bare http):');
