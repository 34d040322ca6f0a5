/**
 * What stamping costs a write of an organization's item on SQLite, against a personal item's
 * (migration 0021: an organization item is stamped from the `change_clock` counter, and a
 * trigger raises a stale stamp and moves the counter; a personal item is stamped from its
 * owner's vault revision, migration 0020). One statement at a time, as the repository writes
 * them (insertCiphers, an update with rowChange), in-process, without HTTP; personal and
 * organization rounds alternate so that the machine's drift falls on both.
 *   npx tsx bench/item-stamps.ts [rows per round]
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { openDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { insertCiphers, rowChange } from '../src/features/vault/ciphers.repository.js';
import { summary } from './harness.js';

const ROWS = Number(process.argv[2] ?? 5000);
const ROUNDS = 4;
const database = openDatabase(`sqlite:${join(mkdtempSync(join(tmpdir(), 'sr-stamps-')), 'db.sqlite')}`);
await migrateToLatest(database);
const db = database.db;
// Only the rows' own writes are measured: the owner and organization they name do not exist.
await sql`pragma foreign_keys = off`.execute(db);

const now = new Date().toISOString();
let next = 0;
const row = (organization: boolean) => ({
  id: `00000000-0000-4000-8000-${String(next++).padStart(12, '0')}`,
  user_id: organization ? null : 'owner',
  organization_id: organization ? 'organization' : null,
  type: 1,
  data: '{"name":"2.aaaa|bbbb|cccc"}',
  key: null,
  reprompt: 0,
  attachments: null,
  creation_date: now,
  revision_date: now,
  deleted_date: null,
});

/** Microseconds a statement: `ROWS` inserts one row at a time, then `ROWS` updates of them. */
async function round(organization: boolean): Promise<{ insert: number; update: number }> {
  const ids: string[] = [];
  let started = process.hrtime.bigint();
  for (let i = 0; i < ROWS; i++) {
    const r = row(organization);
    ids.push(r.id);
    await insertCiphers(db, [r]);
  }
  const insert = Number(process.hrtime.bigint() - started) / 1000 / ROWS;
  started = process.hrtime.bigint();
  for (const [i, id] of ids.entries()) {
    await db
      .updateTable('ciphers')
      .set({ data: `{"name":"2.${i}|bbbb|cccc"}`, ...rowChange })
      .where('id', '=', id)
      .execute();
  }
  const update = Number(process.hrtime.bigint() - started) / 1000 / ROWS;
  return { insert, update };
}

const kinds = { personal: { insert: [] as number[], update: [] as number[] }, organization: { insert: [] as number[], update: [] as number[] } };
await round(false); // warm-up
for (let i = 0; i < ROUNDS; i++) {
  for (const organization of [false, true]) {
    const figures = await round(organization);
    const kind = kinds[organization ? 'organization' : 'personal'];
    kind.insert.push(figures.insert);
    kind.update.push(figures.update);
  }
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

console.log(`SQLite, ${ROWS} rows a round, ${ROUNDS} rounds of each kind alternating, Node ${process.version}\n`);
console.log('| item | insert µs (median) | update µs (median) | inserts, each round | updates, each round |');
console.log('|---|---|---|---|---|');
for (const [name, kind] of Object.entries(kinds)) {
  const list = (values: number[]) => values.map((v) => v.toFixed(1)).join(', ');
  console.log(`| ${name} | ${median(kind.insert).toFixed(1)} | ${median(kind.update).toFixed(1)} | ${list(kind.insert)} | ${list(kind.update)} |`);
  for (const what of ['insert', 'update'] as const) {
    summary('item-stamps', { what: `sqlite, ${name} item ${what}, one statement`, strongroom: median(kind[what]), unit: 'µs', better: 'lower' });
  }
}
await database.db.destroy();
