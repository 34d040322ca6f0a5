import { sql, type Selectable } from 'kysely';
import type { EventsTable } from '../../db/schema.js';
import type { Executor } from '../../db/database.js';

export type EventRow = Selectable<EventsTable>;

/**
 * Where a page starts: just after (older than) this event; for an event standing for a read
 * set (see read-sets.ts), just after the set's secret at `position`, the rest of the set first.
 */
export interface EventCursor {
  date: string;
  seq: number;
  position?: number;
}

/** Every resource column of an event: an event is about an item when one of them names it. */
export const ITEM_COLUMNS = ['cipher_id', 'collection_id', 'group_id', 'policy_id', 'organization_user_id', 'secret_id', 'project_id', 'service_account_id', 'granted_service_account_id'] as const;

type EventIdColumn = (typeof ITEM_COLUMNS)[number];

/** The events naming `id` in one of `columns`. */
export interface EventsAbout {
  columns: readonly EventIdColumn[];
  id: string;
}

/**
 * Which events a page reads. Each reading route sets the columns its index leads with:
 * the organization's log `organizationId`; a member's events `organizationId` and
 * `actingUserId`; the caller's own `actingUserId` with `organizationId: null` (events outside
 * any organization); an item's `cipherId` with its owner (`organizationId`, or `userId` with
 * `organizationId: null`).
 */
export interface EventFilter {
  /** null: only events of no organization. */
  organizationId?: string | null;
  userId?: string;
  cipherId?: string;
  /** Inclusive ISO bounds. */
  start: string;
  end: string;
  actingUserId?: string;
  /** Event types from `from` up to and not including `to` (a category: 1100–1200 items...). */
  types?: { from: number; to: number };
  about?: EventsAbout;
  after?: EventCursor;
  limit: number;
}

/** The filter of the organization's log (kept for the Secrets Manager routes). */
export type OrganizationEventFilter = EventFilter & { organizationId: string };

/**
 * One page of events, newest first (date, then write order). The page is a backward range
 * scan of one index of 0012-events-and-tasks: (date, seq) compared as a row value.
 */
export async function organizationEvents(db: Executor, filter: EventFilter): Promise<EventRow[]> {
  let query = db.selectFrom('events').selectAll().where('date', '>=', filter.start).where('date', '<=', filter.end);
  if (filter.organizationId === null) query = query.where('organization_id', 'is', null);
  else if (filter.organizationId !== undefined) query = query.where('organization_id', '=', filter.organizationId);
  if (filter.userId) query = query.where('user_id', '=', filter.userId);
  if (filter.cipherId) query = query.where('cipher_id', '=', filter.cipherId);
  if (filter.actingUserId) query = query.where('acting_user_id', '=', filter.actingUserId);
  if (filter.types) query = query.where('type', '>=', filter.types.from).where('type', '<', filter.types.to);
  const about = filter.about;
  if (about) {
    query = query.where((eb) =>
      eb.or([
        ...about.columns.map((column) => eb(column, '=', about.id)),
        // Reads of several secrets name them through their read set.
        ...(about.columns.includes('secret_id')
          ? [eb('read_set_id', 'in', eb.selectFrom('secret_read_set_members').select('read_set_id').where('secret_id', '=', about.id))]
          : []),
      ]),
    );
  }
  const after = filter.after;
  if (after) {
    // A cursor inside a read set starts at that event again: the rest of its set comes first.
    const op = after.position === undefined ? '<' : '<=';
    query = query.where((eb) => eb(eb.refTuple('date', 'seq'), op, eb.tuple(after.date, after.seq)));
  }
  // PostgreSQL does not count `organization_id IS NULL` as fixing that column for ordering: name
  // the index's leading columns in the order so the caller's own page is a backward scan of
  // events_acting_user_page, not a sort of all their events.
  if (filter.organizationId === null && filter.actingUserId) query = query.orderBy('acting_user_id', 'desc').orderBy('organization_id', 'desc');
  return query.orderBy('date', 'desc').orderBy('seq', 'desc').limit(filter.limit).execute();
}

/** Events of the window per UTC day and category (type / 100): the admin console's chart. */
export async function eventsPerDay(db: Executor, filter: Pick<EventFilter, 'organizationId' | 'actingUserId' | 'types' | 'start' | 'end'>) {
  let query = db
    .selectFrom('events')
    .select((eb) => [sql<string>`substr(date, 1, 10)`.as('day'), sql<number>`(type / 100)`.as('category'), eb.fn.countAll<number | string>().as('n')])
    .where('date', '>=', filter.start)
    .where('date', '<=', filter.end);
  if (filter.organizationId) query = query.where('organization_id', '=', filter.organizationId);
  if (filter.actingUserId) query = query.where('acting_user_id', '=', filter.actingUserId);
  if (filter.types) query = query.where('type', '>=', filter.types.from).where('type', '<', filter.types.to);
  const rows = await query.groupBy([sql`substr(date, 1, 10)`, sql`(type / 100)`]).execute();
  return rows.map((row) => ({ day: row.day, category: Number(row.category), count: Number(row.n) }));
}
