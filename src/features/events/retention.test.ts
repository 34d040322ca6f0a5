import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testClock } from '../../../test/support/clock.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { EventType } from '../../platform/audit/event-type.js';
import { createLease } from '../../db/leases.js';
import { createEventRetention } from './retention.js';

const NOW = new Date('2026-11-22T12:00:00.000Z');
const clock = testClock(NOW);
const DAY = 24 * 60 * 60 * 1000;
let server: TestServer;
const db = () => server.database.db;
const ago = (days: number) => new Date(NOW.getTime() - days * DAY).toISOString();

async function seedEvent(date: string, readSetId: string | null = null): Promise<string> {
  const id = randomUUID();
  await db().insertInto('events').values({ id, type: EventType.Secret_Retrieved, organization_id: randomUUID(), read_set_id: readSetId, date }).execute();
  return id;
}

async function seedReadSet(id: string, created: string): Promise<void> {
  await db().insertInto('secret_read_sets').values({ id, size: 2, creation_date: created }).execute();
  await db()
    .insertInto('secret_read_set_members')
    .values([0, 1].map((position) => ({ read_set_id: id, position, secret_id: randomUUID() })))
    .execute();
}

beforeAll(async () => {
  server = await startTestServer({ clock });
}, 120_000);

afterAll(async () => {
  await server?.close();
});

describe('event retention', () => {
  it('deletes events older than the retention and the read sets no remaining event names, once per fleet', async () => {
    const old = await seedEvent(ago(100));
    const kept = await seedEvent(ago(10));
    // Named only by a pruned event; named by a kept event; named by both.
    await seedReadSet('orphaned', ago(200));
    await seedReadSet('still-named', ago(200));
    await seedReadSet('both', ago(200));
    await seedEvent(ago(150), 'orphaned');
    await seedEvent(ago(150), 'both');
    await seedEvent(ago(5), 'both');
    await seedEvent(ago(5), 'still-named');

    const first = createEventRetention({ db: db(), clock, days: 90, lease: createLease(db(), clock, 'event-retention', 'instance-a') });
    const second = createEventRetention({ db: db(), clock, days: 90, lease: createLease(db(), clock, 'event-retention', 'instance-b') });
    expect(await first.pruneOnce()).toEqual({ events: 3, readSets: 1 });
    // The other instance finds the lease held and does nothing.
    expect(await second.pruneOnce()).toBeNull();

    const ids = (await db().selectFrom('events').select('id').execute()).map((r) => r.id);
    expect(ids).not.toContain(old);
    expect(ids).toContain(kept);
    const sets = (await db().selectFrom('secret_read_sets').select('id').orderBy('id').execute()).map((r) => r.id);
    expect(sets).toEqual(['both', 'still-named']);
    expect(await db().selectFrom('secret_read_set_members').select('read_set_id').where('read_set_id', '=', 'orphaned').execute()).toEqual([]);

    // Once the holder's lease expires, the other instance takes over.
    clock.advance(2 * 60 * 60 * 1000);
    expect(await second.pruneOnce()).toEqual({ events: 0, readSets: 0 });
    expect(await first.pruneOnce()).toBeNull();
  });

  it('keeps everything when retention is 0 (the default)', async () => {
    await seedEvent(ago(3000));
    const before = (await db().selectFrom('events').select('id').execute()).length;
    expect(server.config.eventRetentionDays).toBe(0);
    expect(await createEventRetention({ db: db(), clock, days: 0 }).pruneOnce()).toBeNull();
    expect((await db().selectFrom('events').select('id').execute()).length).toBe(before);
  });
});
