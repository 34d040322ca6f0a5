import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Engine } from '../../db/dialect.js';
import type { Db } from '../../db/database.js';
import type { EventRow } from '../events/events.repository.js';
import { expandRow } from './messages.js';
import type { ForwardedEvent } from './templates.js';
import type { Transport } from './transports.js';

const NAME = 'events';

interface Cursor {
  seq: number;
  /** PostgreSQL: the transaction id of the last event relayed (migration 0013). */
  tx: string | null;
}

type RelayRow = EventRow & { tx_text?: string };

interface Log {
  warn(obj: object, msg: string): void;
}

/**
 * The outbox relay: committed events leave through here, in order, from a stored cursor.
 * One instance of a fleet relays at a time, holding a lease row it renews; another takes over
 * when the lease runs out. The cursor moves only after the transport has taken a batch
 * safely, so a crash, a broker outage or a lost lease resends, never skips (at least once).
 * Events of organizations without integrations are passed over without leaving.
 */
export function createRelay({
  db,
  engine,
  transport,
  pollMs,
  log,
  batchSize = 500,
  leaseMs = 15_000,
}: {
  db: Db;
  engine: Engine;
  transport: Transport;
  pollMs: number;
  log: Log;
  batchSize?: number;
  leaseMs?: number;
}) {
  const owner = randomUUID();
  const stopper = new AbortController();
  let leader = false;
  let cursor: Cursor | undefined;
  let lastError: string | null = null;
  let relayed = 0;
  let running: Promise<void> | undefined;
  let wake: (() => void) | undefined;

  async function head(): Promise<Cursor> {
    if (engine === 'postgres') {
      const { rows } = await sql<{ seq: string; tx: string }>`select seq, tx::text as tx from events where tx < pg_snapshot_xmin(pg_current_snapshot()) order by tx desc, seq desc limit 1`.execute(db);
      return rows[0] ? { seq: Number(rows[0].seq), tx: rows[0].tx } : { seq: 0, tx: '0' };
    }
    const row = await db.selectFrom('events').select((eb) => eb.fn.max('seq').as('seq')).executeTakeFirst();
    return { seq: Number(row?.seq ?? 0), tx: null };
  }

  /** Takes or renews the lease; true while this instance holds it. */
  async function holdLease(): Promise<boolean> {
    const now = new Date();
    const until = new Date(now.getTime() + leaseMs).toISOString();
    const existing = await db.selectFrom('integration_relay').selectAll().where('name', '=', NAME).executeTakeFirst();
    if (!existing) {
      // The first relay starts at the head: events written before forwarding existed stay home.
      const start = await head();
      await db
        .insertInto('integration_relay')
        .values({ name: NAME, cursor_seq: start.seq, cursor_tx: start.tx, lease_owner: null, lease_until: null })
        .onConflict((oc) => oc.column('name').doNothing())
        .execute();
    }
    const result = await db
      .updateTable('integration_relay')
      .set({ lease_owner: owner, lease_until: until })
      .where('name', '=', NAME)
      .where((eb) => eb.or([eb('lease_owner', '=', owner), eb('lease_owner', 'is', null), eb('lease_until', '<', now.toISOString())]))
      .executeTakeFirst();
    const held = Number(result.numUpdatedRows) > 0;
    if (held && !leader) {
      const row = await db.selectFrom('integration_relay').select(['cursor_seq', 'cursor_tx']).where('name', '=', NAME).executeTakeFirstOrThrow();
      cursor = { seq: Number(row.cursor_seq), tx: row.cursor_tx };
    }
    leader = held;
    return held;
  }

  async function readBatch(after: Cursor): Promise<RelayRow[]> {
    if (engine === 'postgres') {
      // Only events of finished transactions, in (tx, seq) order: see migration 0013.
      const { rows } = await sql<RelayRow>`select *, tx::text as tx_text from events
        where tx < pg_snapshot_xmin(pg_current_snapshot()) and (tx, seq) > (${after.tx ?? '0'}::xid8, ${after.seq})
        order by tx, seq limit ${batchSize}`.execute(db);
      return rows;
    }
    return db.selectFrom('events').selectAll().where('seq', '>', after.seq).orderBy('seq').limit(batchSize).execute();
  }

  /** The events of these rows that some integration may want: their organization has one. */
  async function forwardable(rows: readonly RelayRow[]): Promise<ForwardedEvent[]> {
    const orgIds = [...new Set(rows.map((r) => r.organization_id).filter((id): id is string => !!id))];
    if (orgIds.length === 0) return [];
    const withIntegrations = new Set(
      (await db.selectFrom('organization_integrations').select('organization_id').distinct().where('organization_id', 'in', orgIds).execute()).map((r) => r.organization_id),
    );
    const events: ForwardedEvent[] = [];
    for (const row of rows) {
      if (row.organization_id && withIntegrations.has(row.organization_id)) events.push(...(await expandRow(db, row)));
    }
    return events;
  }

  async function saveCursor(next: Cursor): Promise<boolean> {
    const result = await db
      .updateTable('integration_relay')
      .set({ cursor_seq: next.seq, cursor_tx: next.tx })
      .where('name', '=', NAME)
      .where('lease_owner', '=', owner)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** One step: returns whether there may be more to do at once. */
  async function step(): Promise<boolean> {
    if (!(await holdLease()) || !cursor) return false;
    const rows = await readBatch(cursor);
    if (rows.length === 0) return false;
    const events = await forwardable(rows);
    // Throws while the transport cannot take them (a broker away): the same batch is tried again.
    // In process, a batch waits for its retries: the lease is renewed meanwhile.
    const renew = setInterval(() => void holdLease().catch(() => undefined), leaseMs / 3);
    try {
      await transport.publishEvents(events);
    } finally {
      clearInterval(renew);
    }
    const last = rows[rows.length - 1]!;
    const next = { seq: Number(last.seq), tx: engine === 'postgres' ? (last.tx_text ?? null) : null };
    if (!(await saveCursor(next))) {
      leader = false;
      return false;
    }
    cursor = next;
    relayed += events.length;
    return rows.length === batchSize;
  }

  function pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        wake = undefined;
        stopper.signal.removeEventListener('abort', done);
        resolve();
      }
      wake = done;
      stopper.signal.addEventListener('abort', done, { once: true });
    });
  }

  async function loop(): Promise<void> {
    let failures = 0;
    while (!stopper.signal.aborted) {
      try {
        const more = await step();
        failures = 0;
        lastError = null;
        if (!more) await pause(leader ? pollMs : Math.max(pollMs, leaseMs / 3));
      } catch (error) {
        if (stopper.signal.aborted) break;
        failures++;
        lastError = (error as Error).message;
        if (failures === 1 || failures % 20 === 0) log.warn({ error: lastError, failures }, 'integrations: the event relay could not hand events over; it will try again from its cursor');
        await pause(Math.min(pollMs * 2 ** Math.min(failures, 6), 10_000));
      }
    }
  }

  return {
    start() {
      running ??= loop();
    },
    /** Look now instead of at the next poll (tests, and after a write this instance knows of). */
    poke() {
      wake?.();
    },
    state: () => ({ leader, cursor: cursor?.seq ?? null, relayed, lastError }),
    async stop() {
      stopper.abort();
      await running;
      if (leader) {
        await db.updateTable('integration_relay').set({ lease_owner: null, lease_until: null }).where('name', '=', NAME).where('lease_owner', '=', owner).execute().catch(() => undefined);
      }
    },
  };
}

export type Relay = ReturnType<typeof createRelay>;
