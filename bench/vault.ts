/**
 * Vault benchmark: sync of a 10,000-item vault, item create and update throughput, on SQLite
 * and PostgreSQL, with the server in its own process; and, as the ceiling, a bare Node http
 * server sending the same sync bytes. Not a test: it measures and prints.
 *
 *   npx tsx bench/vault.ts                      # SQLite, and PostgreSQL when BENCH_POSTGRES_URL is set
 *   BENCH_POSTGRES_URL=postgres://postgres@127.0.0.1:55433/strongroom_test npx tsx bench/vault.ts
 *
 * Options (environment): BENCH_ITEMS (10000), BENCH_SECONDS (10), BENCH_ENGINES (sqlite,postgres),
 * BENCH_SCENARIOS (sync,changes,organization,writes: which parts run), BENCH_BASELINE (the path
 * of another checkout with its node_modules, e.g. main's: its server is measured beside this
 * one in the organization scenario, on its own database, in the same run).
 *
 *   BENCH_SCENARIOS=organization BENCH_BASELINE=/tmp/main npx tsx bench/vault.ts
 */
import { Pool } from 'undici';
import { itemBody } from './items.js';
import { call, ceilingFor, CLIENT_HEADERS, databaseFor, ENGINES, foundOrganization, measure, registerAndLogin, Results, SECONDS, startServer, type Figures } from './harness.js';
import type { TestAccount } from '../test/support/bw-crypto.js';

const ITEMS = Number(process.env.BENCH_ITEMS ?? 10_000);
const SCENARIOS = (process.env.BENCH_SCENARIOS ?? 'sync,changes,organization,writes').split(',');
const BASELINE = process.env.BENCH_BASELINE;

async function seed(base: string): Promise<{ token: string; ids: string[]; account: TestAccount }> {
  const { token, account } = await registerAndLogin(base, 'bench@example.com');
  for (let start = 0; start < ITEMS; start += 5000) {
    const ciphers = Array.from({ length: Math.min(5000, ITEMS - start) }, (_, i) => itemBody(account, start + i));
    await call(base, 'POST', '/api/ciphers/import', { token, json: { folders: [], ciphers, folderRelationships: [] } });
  }
  const list = JSON.parse(await call(base, 'GET', '/api/ciphers', { token })) as { data: { id: string }[] };
  return { token, ids: list.data.map((c) => c.id), account };
}

/**
 * An organization of ITEMS items in its default collection, synced by its owner (who reaches
 * them through that collection): the vault of a member with organization collections.
 */
async function seedOrganization(base: string): Promise<{ token: string; ids: string[]; edit: (server: string, id: string) => Promise<void> }> {
  const { orgId, token, account } = await foundOrganization(base, 'org-owner@example.com');
  const collections = JSON.parse(await call(base, 'GET', '/api/collections', { token })) as { data: { id: string }[] };
  const collectionIds = [collections.data[0]?.id];
  const headers = { ...CLIENT_HEADERS, authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const ids: string[] = [];
  // Ten at a time (there is no bulk import of organization items here).
  for (let start = 0; start < ITEMS; start += 10) {
    const made = await Promise.all(
      Array.from({ length: Math.min(10, ITEMS - start) }, (_, i) =>
        call(base, 'POST', '/api/ciphers/create', { token, json: { cipher: { ...itemBody(account, start + i), organizationId: orgId }, collectionIds } }),
      ),
    );
    ids.push(...made.map((text) => (JSON.parse(text) as { id: string }).id));
  }
  const body = JSON.stringify({ ...itemBody(account, 3), organizationId: orgId });
  const edit = async (server: string, id: string) => {
    const res = await fetch(`${server}/api/ciphers/${id}`, { method: 'PUT', headers, body });
    if (!res.ok) throw new Error(`edit: ${res.status} ${await res.text()}`);
    await res.arrayBuffer();
  };
  return { token, ids, edit };
}

const results = new Results();

/**
 * The first sync after a change, on `connections` connections for SECONDS: each connection in
 * turn changes one item with `change` (not timed) and syncs (timed, the whole body read). Without
 * `change`, the same loop of syncs alone: the ceiling's run, with the same client.
 */
async function syncAfterChange(base: string, path: string, headers: Record<string, string>, connections: number, change?: (connection: number, round: number) => Promise<void>): Promise<Figures> {
  const latencies: number[] = [];
  let bytes = 0;
  let errors = 0;
  const until = performance.now() + SECONDS * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async (_, connection) => {
      const pool = new Pool(base, { connections: 1 });
      for (let round = 0; performance.now() < until; round++) {
        if (change) await change(connection, round);
        const t = performance.now();
        const res = await pool.request({ method: 'GET', path, headers });
        const body = Buffer.from(await res.body.arrayBuffer());
        latencies.push(performance.now() - t);
        bytes = body.length;
        if (res.statusCode !== 200) errors++;
      }
      await pool.close();
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0);
  return {
    mean: latencies.reduce((a, b) => a + b, 0) / Math.max(latencies.length, 1),
    p50: at(0.5),
    p90: at(0.9),
    p99: at(0.99),
    max: at(1),
    rps: latencies.length / elapsed,
    bytes,
    errors,
  };
}

async function benchEngine(engine: string) {
  if (SCENARIOS.includes('organization')) await benchOrganization(engine);
  if (!SCENARIOS.some((s) => ['sync', 'changes', 'writes'].includes(s))) return;
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
    if (SCENARIOS.includes('sync')) {
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
    }

    // The first sync after a change: each round edits one item (each connection its own),
    // then syncs. The item's encoded part and the vault section are stale; the other items'
    // encoded parts are current (see src/features/vault/item-json-cache.ts).
    if (SCENARIOS.includes('changes')) {
      await server.stop();
      server = await startServer(database.url);
      await call(server.url, 'GET', syncPath, { token });
      const edit = JSON.stringify(itemBody(account, 3));
      const change = async (connection: number, round: number) => {
        const res = await fetch(`${server.url}/api/ciphers/${ids[(connection * 997 + round) % ids.length] ?? ''}`, {
          method: 'PUT',
          headers: { ...headers, 'content-type': 'application/json' },
          body: edit,
        });
        if (!res.ok) throw new Error(`edit: ${res.status} ${await res.text()}`);
        await res.arrayBuffer();
      };
      const afterChangeCeiling = await ceilingFor(`sync-${engine}`, bytes);
      try {
        for (const connections of [1, 4]) {
          const ours = await syncAfterChange(server.url, syncPath, headers, connections, change);
          const bare = await syncAfterChange(afterChangeCeiling.url, syncPath, {}, connections);
          results.row(engine, 'first sync after one item changed', connections, ours);
          results.row(engine, 'sync, bare http ceiling (same client)', connections, bare);
          results.ratio(`${engine}, first sync after one item changed, ${connections} connection(s)`, ours, bare);
        }
      } finally {
        await afterChangeCeiling.stop();
      }
    }

    if (SCENARIOS.includes('writes')) {
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
    }
  } finally {
    await server.stop();
    await database.drop();
  }
}

/**
 * A member with organization collections: the owner of an organization whose ITEMS items sit in
 * its default collection, one organization item edited before each sync. The cloud variant,
 * where any account may found an organization; sync is the same code. With BENCH_BASELINE, the
 * other checkout's server is seeded the same way on its own database and measured in turn.
 */
async function benchOrganization(engine: string) {
  const servers: { label: string; root?: string }[] = [{ label: 'organization vault' }, ...(BASELINE ? [{ label: 'organization vault (baseline)', root: BASELINE }] : [])];
  const running: { label: string; database: { url: string; drop(): Promise<void> }; server: Awaited<ReturnType<typeof startServer>>; org: Awaited<ReturnType<typeof seedOrganization>> }[] = [];
  try {
    for (const { label, root } of servers) {
      const database = await databaseFor(engine);
      let server = await startServer(database.url, { DEPLOYMENT: 'cloud' }, [], 'src/main.ts', root);
      const org = await seedOrganization(server.url);
      await server.stop();
      // Restarted: its caches empty, as after a deployment.
      server = await startServer(database.url, { DEPLOYMENT: 'cloud' }, [], 'src/main.ts', root);
      running.push({ label, database, server, org });
    }
    const syncPath = '/api/sync?excludeDomains=true';
    const orgBytes = await call(running[0]!.server.url, 'GET', syncPath, { token: running[0]!.org.token });
    for (const { server, org } of running.slice(1)) await call(server.url, 'GET', syncPath, { token: org.token });
    console.error(`${engine}: organization vault of ${running[0]!.org.ids.length} items, sync body ${orgBytes.length.toLocaleString('en-US')} bytes`);
    const orgCeiling = await ceilingFor(`org-sync-${engine}`, orgBytes);
    try {
      // Unchanged between syncs: the member's section served as it is, after reading that
      // nothing is stamped above its marks.
      for (const connections of [1, 4]) {
        const bare = await measure({ url: orgCeiling.url + syncPath, connections });
        // Its row before the ratios, which take it out of the summary's standalone rows.
        results.row(engine, 'organization vault: sync, bare http ceiling', connections, bare);
        for (const { label, server, org } of running) {
          const ours = await measure({ url: server.url + syncPath, headers: { ...CLIENT_HEADERS, authorization: `Bearer ${org.token}` }, connections });
          results.row(engine, `${label}: sync, vault unchanged`, connections, ours);
          results.ratio(`${engine}, ${label} (one collection), vault unchanged, ${connections} connection(s)`, ours, bare);
        }
      }
      for (const connections of [1, 4]) {
        const bare = await syncAfterChange(orgCeiling.url, syncPath, {}, connections);
        results.row(engine, 'organization vault: bare http ceiling (same client)', connections, bare);
        for (const { label, server, org } of running) {
          const orgHeaders = { ...CLIENT_HEADERS, authorization: `Bearer ${org.token}` };
          const ours = await syncAfterChange(server.url, syncPath, orgHeaders, connections, (connection, round) => org.edit(server.url, org.ids[(connection * 997 + round) % org.ids.length] ?? ''));
          results.row(engine, `${label}: first sync after one item changed`, connections, ours);
          results.ratio(`${engine}, ${label} (one collection), first sync after one item changed, ${connections} connection(s)`, ours, bare);
        }
      }
    } finally {
      await orgCeiling.stop();
    }
  } finally {
    for (const { server, database } of running) {
      await server.stop();
      await database.drop();
    }
  }
}

for (const engine of ENGINES) await benchEngine(engine);
results.print(`${ITEMS} items`, 'Sync latency relative to the ceiling (Strongroom / bare http):');
