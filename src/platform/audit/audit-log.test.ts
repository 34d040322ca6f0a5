import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freshDatabaseUrl } from '../../../test/support/test-server.js';
import { openDatabase, type Database } from '../../db/database.js';
import { migrateToLatest } from '../../db/migrate.js';
import { counting } from '../../../test/support/query-count.js';
import { createAuditLog, STATEMENT_ROWS, statementSizes } from './audit-log.js';
import { EventType } from './event-type.js';

let database: Database;
let fresh: Awaited<ReturnType<typeof freshDatabaseUrl>>;
const clock = { now: () => new Date('2026-11-22T10:00:00.000Z') };
const client = { ipAddress: `2001:db8::${'a'.repeat(60)}`, deviceType: 25, deviceIdentifier: null, clientVersion: null };

beforeEach(async () => {
  fresh = await freshDatabaseUrl();
  database = openDatabase(fresh.url);
  await migrateToLatest(database);
});
afterEach(async () => {
  await database.close();
  await fresh.drop();
});

describe('audit log', () => {
  it('writes every attribute of the stored event record, with the IP cut to 50 characters', async () => {
    const audit = createAuditLog({ clock });
    await audit.record(database.db, client, { type: EventType.User_LoggedIn, userId: 'u1', actingUserId: 'u1' });
    const [row] = await database.db.selectFrom('events').selectAll().execute();
    expect(row).toMatchObject({ type: 1000, user_id: 'u1', acting_user_id: 'u1', device_type: 25, date: '2026-11-22T10:00:00.000Z' });
    expect(row?.ip_address).toHaveLength(50);
    expect(row?.id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('writes nothing when the transaction that recorded the event rolls back', async () => {
    const audit = createAuditLog({ clock });
    await expect(
      database.db.transaction().execute(async (tx) => {
        await audit.record(tx, client, { type: EventType.Cipher_Created, cipherId: 'c1' });
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    expect(await database.db.selectFrom('events').selectAll().execute()).toEqual([]);
  });

  it('writes large batches in several statements of a few fixed sizes, keeping their order', async () => {
    const audit = createAuditLog({ clock });
    const events = Array.from({ length: 1000 }, (_, i) => ({ type: EventType.Cipher_ClientViewed, cipherId: `c${i}` }));
    const { db, count } = counting(database.db);
    await audit.record(db, null, events);
    // 512 + 256 + 128 + 64 + 32 + 8.
    expect(count()).toBe(6);
    const rows = await database.db.selectFrom('events').select(['cipher_id', 'seq', 'id']).orderBy('seq').execute();
    expect(rows.map((r) => r.cipher_id)).toEqual(events.map((e) => e.cipherId));
    // Ids are time-ordered (UUID version 7): in write order, so each goes at the end of the `id` index.
    expect(rows.every((r) => /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(r.id))).toBe(true);
    expect(rows.map((r) => r.id)).toEqual(rows.map((r) => r.id).sort());
  });

  it('splits a write into statements of at most STATEMENT_ROWS rows, the rest in powers of two', () => {
    expect(statementSizes(0)).toEqual([]);
    expect(statementSizes(1)).toEqual([1]);
    expect(statementSizes(7)).toEqual([4, 2, 1]);
    expect(statementSizes(STATEMENT_ROWS)).toEqual([STATEMENT_ROWS]);
    expect(statementSizes(2 * STATEMENT_ROWS + 3)).toEqual([STATEMENT_ROWS, STATEMENT_ROWS, 2, 1]);
    for (const n of [1, 50, 999, 1000, 10_000]) {
      const sizes = statementSizes(n);
      expect(sizes.reduce((a, b) => a + b, 0)).toBe(n);
      expect(sizes.every((size) => size <= STATEMENT_ROWS && Number.isInteger(Math.log2(size)))).toBe(true);
    }
  });
});
