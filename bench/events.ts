/**
 * Events benchmark: `POST /events/collect` ingest (Cipher_ClientViewed of organization items
 * the caller sees, in requests of 100 and 1,000 events) and event-log page reads with 1,000,000
 * events stored (the organization's log, a deep page of it, one member's events, one item's
 * events, the caller's own), on SQLite and PostgreSQL with the server in its own process. The
 * million events are written straight into the database by SQL (they span the last year). Not a test.
 *
 *   npx tsx bench/events.ts                    # SQLite, and PostgreSQL when BENCH_POSTGRES_URL is set
 *   BENCH_POSTGRES_URL=postgres://postgres@127.0.0.1:55433/strongroom_test npx tsx bench/events.ts
 *
 * Beside each SQLite ingest run, in the same run, its ceiling: bench/collect-ceiling-server.ts,
 * a bare Node server writing the same rows with one prepared insert into a table with the same
 * indexes. Each ingest row also gives the server's CPU time per 1,000 events (/proc), steadier
 * than throughput on a shared machine.
 *
 * Options (environment): BENCH_EVENTS (1000000), BENCH_SECONDS (10), BENCH_ENGINES (sqlite,postgres),
 * BENCH_PROFILE=1 (the ingest server under --cpu-prof: its functions by self time are printed),
 * BENCH_KEEP=1 (the loaded database is kept and its URL printed, e.g. for EXPLAIN ANALYZE).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { openDatabase } from '../src/db/database.js';
import { call, cpuMsOf, foundOrganization, CLIENT_HEADERS, databaseFor, ENGINES, measure, SECONDS, startCeiling, startServer, summary, type Figures, type Running } from './harness.js';
import { printProfile } from './profiling.js';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 1_000_000);
const ITEMS = 1000;
const SERVER_ENV = { DEPLOYMENT: 'cloud' };
const PROFILE = process.env.BENCH_PROFILE === '1';
const KEEP = process.env.BENCH_KEEP === '1';
/** Issue #12's ingest target on SQLite. */
const INGEST_TARGET = 20_000;

interface Row {
  engine: string;
  what: string;
  connections: number;
  figures: Figures;
  /** Events a request carries (ingest rows). */
  perRequest?: number;
  /** Ingest rows: the server's CPU time per 1,000 events. */
  cpuPerThousand?: number;
  /** Ingest rows on SQLite: the ceiling's figures in the same run. */
  ceiling?: Figures;
}
const rows: Row[] = [];


/** ITEMS organization items in the organization's default collection, inserted directly. */
async function seedItems(url: string, orgId: string): Promise<{ items: string[]; ownerUserId: string; ownerMemberId: string }> {
  const database = openDatabase(url);
  try {
    const db = database.db;
    const collection = await db.selectFrom('collections').select('id').where('organization_id', '=', orgId).executeTakeFirstOrThrow();
    const owner = await db.selectFrom('organization_users').select(['id', 'user_id']).where('organization_id', '=', orgId).executeTakeFirstOrThrow();
    const now = new Date().toISOString();
    const items = Array.from({ length: ITEMS }, () => randomUUID());
    for (let i = 0; i < items.length; i += 200) {
      const part = items.slice(i, i + 200);
      await db
        .insertInto('ciphers')
        .values(part.map((id) => ({ id, user_id: null, organization_id: orgId, type: 1, data: '{}', key: null, reprompt: 0, attachments: null, creation_date: now, revision_date: now, deleted_date: null })))
        .execute();
      await db.insertInto('collection_ciphers').values(part.map((cipher_id) => ({ collection_id: collection.id, cipher_id }))).execute();
    }
    return { items, ownerUserId: owner.user_id as string, ownerMemberId: owner.id };
  } finally {
    await database.close();
  }
}

/**
 * EVENTS events over the last 365 days, by SQL: 90% the organization's (acting users among 100,
 * one in 100 the owner; items among ITEMS), 10% the owner's own outside organizations.
 */
async function seedEvents(url: string, orgId: string, ownerUserId: string, items: string[]): Promise<number> {
  const database = openDatabase(url);
  const started = performance.now();
  try {
    const db = database.db;
    const now = Date.now();
    const step = (365 * 24 * 3600 * 1000) / EVENTS;
    await sql`create table bench_items (n integer primary key, id text not null)`.execute(db);
    for (let n = 0; n < items.length; n += 200) {
      const values = sql.join(items.slice(n, n + 200).map((id, k) => sql`(${n + k}, ${id})`));
      await sql`insert into bench_items (n, id) values ${values}`.execute(db);
    }
    const actor = sql`case when i % 100 = 0 then ${ownerUserId} else 'actor-' || (i % 100) end`;
    const org = sql`case when i % 10 = 0 then null else ${orgId} end`;
    const user = sql`case when i % 10 = 0 then ${ownerUserId} else null end`;
    const cipher = sql`(select id from bench_items where n = i % ${ITEMS})`;
    if (database.engine === 'postgres') {
      await sql`insert into events (id, type, organization_id, user_id, acting_user_id, cipher_id, device_type, ip_address, date)
        select gen_random_uuid()::text, 1107, ${org}, ${user}, ${actor}, ${cipher}, 9, '127.0.0.1',
          to_char((to_timestamp(${now / 1000}) - make_interval(secs => i * ${step / 1000}::float8)) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
        from generate_series(1, ${EVENTS}) as i`.execute(db);
      // What autovacuum does to an insert-only table soon after a bulk load.
      await sql`vacuum analyze events`.execute(db);
    } else {
      await sql`with recursive s(i) as (select 1 union all select i + 1 from s where i < ${EVENTS})
        insert into events (id, type, organization_id, user_id, acting_user_id, cipher_id, device_type, ip_address, date)
        select lower(hex(randomblob(16))), 1107, ${org}, ${user}, ${actor}, ${cipher}, 9, '127.0.0.1',
          strftime('%Y-%m-%dT%H:%M:%fZ', ${now / 1000}, 'unixepoch', '-' || (i * ${step / 1000}) || ' seconds')
        from s`.execute(db);
      await sql`analyze`.execute(db);
    }
    await sql`drop table bench_items`.execute(db);
  } finally {
    await database.close();
  }
  return (performance.now() - started) / 1000;
}

/**
 * Waits until the outbox relay's cursor has reached the newest event, answering the seconds it
 * took. After the bulk load the relay reads every seeded event once (none has an integration to
 * go to); the page reads are measured after that, not beside it.
 */
async function relayCaughtUp(url: string): Promise<number> {
  const database = openDatabase(url);
  const started = performance.now();
  try {
    const newest = await database.db.selectFrom('events').select((eb) => eb.fn.max('seq').as('seq')).executeTakeFirstOrThrow();
    for (;;) {
      const relay = await database.db.selectFrom('integration_relay').select('cursor_seq').executeTakeFirst();
      if (relay && Number(relay.cursor_seq) >= Number(newest.seq)) break;
      if (performance.now() - started > 300_000) throw new Error('the relay did not catch up within 5 minutes');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  } finally {
    await database.close();
  }
  return (performance.now() - started) / 1000;
}

/** One ingest run: throughput, and the CPU time `server` spent per 1,000 events meanwhile. */
async function ingest(server: Running, headers: Record<string, string>, body: string, connections: number, perRequest: number): Promise<{ figures: Figures; cpuPerThousand: number }> {
  const before = server.pid ? cpuMsOf(server.pid) : 0;
  const figures = await measure({ url: `${server.url}/events/collect`, method: 'POST', headers, body, connections });
  const events = figures.rps * SECONDS * perRequest;
  return { figures, cpuPerThousand: server.pid && events > 0 ? ((cpuMsOf(server.pid) - before) * 1000) / events : NaN };
}

async function benchEngine(engine: string): Promise<void> {
  const database = await databaseFor(engine);
  const profileDir = PROFILE ? mkdtempSync(join(tmpdir(), 'sr-prof-events-')) : null;
  let server = await startServer(database.url, SERVER_ENV, profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []);
  const ceilingDir = mkdtempSync(join(tmpdir(), 'sr-ceiling-events-'));
  const ceiling = engine === 'sqlite' ? await startCeiling(join(ceilingDir, 'ceiling.sqlite'), 'bench/collect-ceiling-server.ts') : null;
  let keep = false;
  try {
    const { orgId, token } = await foundOrganization(server.url, 'events-bench@example.com');
    const { items, ownerUserId, ownerMemberId } = await seedItems(database.url, orgId);
    const headers = { ...CLIENT_HEADERS, authorization: `Bearer ${token}`, 'content-type': 'application/json' };

    for (const perRequest of [100, 1000]) {
      const body = JSON.stringify(
        Array.from({ length: perRequest }, (_, i) => ({ type: 1107, cipherId: items[i % 50], organizationId: orgId, date: new Date().toISOString() })),
      );
      for (const connections of [1, 4]) {
        const { figures, cpuPerThousand } = await ingest(server, headers, body, connections, perRequest);
        const bare = ceiling ? await ingest(ceiling, headers, body, connections, perRequest) : null;
        rows.push({ engine, what: `POST /events/collect, ${perRequest} events a request`, connections, figures, perRequest, cpuPerThousand, ...(bare ? { ceiling: bare.figures } : {}) });
        console.error(
          `${engine} ingest ${perRequest}x${connections}: ${(figures.rps * perRequest).toFixed(0)} events/s, server CPU ${cpuPerThousand.toFixed(1)} ms per 1,000 events` +
            (bare ? `; ceiling ${(bare.figures.rps * perRequest).toFixed(0)} events/s, ${bare.cpuPerThousand.toFixed(1)} ms per 1,000` : ''),
        );
      }
    }

    // The million events are written with the server stopped, as a restore would.
    await server.stop();
    if (profileDir) printProfile(profileDir);
    const seconds = await seedEvents(database.url, orgId, ownerUserId, items);
    console.error(`${engine}: ${EVENTS} events seeded in ${seconds.toFixed(1)} s`);
    server = await startServer(database.url, SERVER_ENV);
    console.error(`${engine}: the outbox relay passed over the seeded events in ${(await relayCaughtUp(database.url)).toFixed(1)} s`);
    const relogin = token;
    const auth = { ...CLIENT_HEADERS, authorization: `Bearer ${relogin}` };

    const year = `start=${new Date(Date.now() - 360 * 24 * 3600 * 1000).toISOString()}&end=${new Date().toISOString()}`;
    const first = JSON.parse(await call(server.url, 'GET', `/api/organizations/${orgId}/events?${year}`, { token: relogin })) as { continuationToken: string };
    // A page about half a year back: follow tokens from a window starting there.
    const half = new Date(Date.now() - 180 * 24 * 3600 * 1000).toISOString();
    const deep = JSON.parse(
      await call(server.url, 'GET', `/api/organizations/${orgId}/events?start=${new Date(Date.now() - 360 * 24 * 3600 * 1000).toISOString()}&end=${half}`, { token: relogin }),
    ) as { continuationToken: string };
    const reads: [string, string][] = [
      ["organization's log, first page (default 30 days)", `/api/organizations/${orgId}/events`],
      ["organization's log, second page of a year", `/api/organizations/${orgId}/events?${year}&continuationToken=${encodeURIComponent(first.continuationToken)}`],
      ["organization's log, a page half a year back", `/api/organizations/${orgId}/events?${year}&continuationToken=${encodeURIComponent(deep.continuationToken)}`],
      ["one member's events (a year)", `/api/organizations/${orgId}/users/${ownerMemberId}/events?${year}`],
      ["one item's events (a year)", `/api/ciphers/${items[7]}/events?${year}`],
      ["the caller's own events (a year)", `/api/events?${year}`],
    ];
    for (const [what, path] of reads) {
      await call(server.url, 'GET', path, { token: relogin });
      for (const connections of [1, 4]) {
        const figures = await measure({ url: server.url + path, headers: auth, connections });
        rows.push({ engine, what: `GET ${what}, ${EVENTS.toLocaleString('en-US')} events stored`, connections, figures });
      }
    }
    keep = KEEP;
  } finally {
    await server.stop();
    await ceiling?.stop();
    rmSync(ceilingDir, { recursive: true, force: true });
    if (keep) console.error(`${engine}: the loaded database is kept: ${database.url}`);
    else await database.drop();
  }
}

for (const engine of ENGINES) await benchEngine(engine);

console.log(`Events: ingest and page reads, ${SECONDS} s per run, Node ${process.version}\n`);
console.log('| engine | what | connections | mean ms | p50 ms | p99 ms | req/s | events/s | server CPU ms per 1,000 events | ceiling events/s | errors |');
console.log('|---|---|---|---|---|---|---|---|---|---|---|');
const thousands = (n: number) => Math.round(n).toLocaleString('en-US');
for (const r of rows) {
  const f = r.figures;
  const events = r.perRequest ? thousands(f.rps * r.perRequest) : '';
  const cpu = r.cpuPerThousand === undefined ? '' : r.cpuPerThousand.toFixed(1);
  const bare = r.ceiling && r.perRequest ? thousands(r.ceiling.rps * r.perRequest) : '';
  console.log(`| ${r.engine} | ${r.what} | ${r.connections} | ${f.mean.toFixed(1)} | ${f.p50} | ${f.p99} | ${f.rps.toFixed(1)} | ${events} | ${cpu} | ${bare} | ${f.errors} |`);
  if (r.perRequest) {
    const eventsPerSecond = f.rps * r.perRequest;
    summary('events', {
      what: `${r.engine}, ${r.what}, ${r.connections} connection(s)`,
      strongroom: eventsPerSecond,
      ...(r.ceiling ? { ceiling: r.ceiling.rps * r.perRequest } : {}),
      unit: 'events/s',
      better: 'higher',
      ...(r.engine === 'sqlite' ? { target: `≥ ${INGEST_TARGET.toLocaleString('en-US')} events/s`, met: eventsPerSecond >= INGEST_TARGET } : {}),
    });
  } else {
    summary('events', { what: `${r.engine}, ${r.what}, ${r.connections} connection(s), mean latency`, strongroom: f.mean, unit: 'ms', better: 'lower', target: '< 20 ms a page', met: f.mean < 20 });
  }
}
