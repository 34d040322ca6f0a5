/**
 * The ceiling for `/events/collect` ingest on SQLite: a bare Node `http` server that parses the
 * JSON array and writes each element as an `events` row with one prepared single-row insert,
 * all of a request in one transaction, into a SQLite file migrated like Strongroom's (the same
 * table, the same indexes, the same time-ordered ids, WAL, synchronous NORMAL). No authentication, validation or checks:
 * what the machine can do for this I/O. Usage: collect-ceiling-server SQLITE_FILE. Prints the
 * port it listens on.
 */
import { createServer } from 'node:http';
import SqliteDatabase from 'better-sqlite3';
import { v7 as timeOrderedUuid } from 'uuid';
import { openDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';

interface Posted {
  type: number;
  cipherId?: string;
  organizationId?: string;
  date?: string;
}

const file = process.argv[2] ?? '';
const migrated = openDatabase(`sqlite:${file}`);
await migrateToLatest(migrated);
await migrated.close();

const db = new SqliteDatabase(file);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.pragma('wal_autocheckpoint = 10000');
const insert = db.prepare(
  'insert into events (id, type, user_id, organization_id, cipher_id, acting_user_id, device_type, ip_address, date) values (?, ?, ?, ?, ?, ?, ?, ?, ?)',
);
const actingUser = timeOrderedUuid();
const write = db.transaction((events: Posted[]) => {
  const now = new Date().toISOString();
  for (const e of events) insert.run(timeOrderedUuid(), e.type, actingUser, e.organizationId ?? null, e.cipherId ?? null, actingUser, 25, '127.0.0.1', e.date ?? now);
});

const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    write(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Posted[]);
    response.writeHead(200, { 'content-length': 0 });
    response.end();
  });
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`${typeof address === 'object' && address ? address.port : 0}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
