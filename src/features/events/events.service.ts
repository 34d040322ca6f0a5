import type { Clock } from '../../clock.js';
import { BadRequest } from '../../http/errors.js';
import type { Executor } from './audit-log.js';
import { ITEM_COLUMNS, organizationEvents, type EventCursor, type EventRow, type EventsAbout } from './events.repository.js';

/** Events per page, as the official server pages them. */
const EVENT_PAGE_SIZE = 50;
const DAY_MS = 24 * 60 * 60 * 1000;
const MAX_RANGE_DAYS = 367;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,7})?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;

export interface EventQueryInput {
  start?: string;
  end?: string;
  actingUserId?: string;
  itemId?: string;
  continuationToken?: string;
}

export interface EventPage {
  data: EventRow[];
  continuationToken: string | null;
}

function parseDate(field: string, value: string): Date {
  const hasZone = /(Z|[+-]\d{2}:?\d{2})$/i.test(value);
  // A time without a zone is UTC, as stored event dates are.
  const date = ISO_DATE.test(value) ? new Date(value.includes('T') && !hasZone ? `${value}Z` : value) : new Date(NaN);
  if (Number.isNaN(date.getTime())) throw BadRequest.field(field, `${field} must be an ISO 8601 date, e.g. 2026-01-31T00:00:00Z.`);
  return date;
}

/**
 * The window to read. Without both bounds it is the last 30 days (from midnight UTC 30 days
 * ago to the end of today); reversed bounds are swapped; more than 367 days is refused.
 */
export function eventWindow(now: Date, start?: string, end?: string): { start: string; end: string } {
  if (start === undefined || end === undefined) {
    const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
    return { start: new Date(today - 30 * DAY_MS).toISOString(), end: new Date(today + DAY_MS - 1).toISOString() };
  }
  let from = parseDate('start', start);
  let to = parseDate('end', end);
  if (from > to) [from, to] = [to, from];
  if (to.getTime() - from.getTime() > MAX_RANGE_DAYS * DAY_MS) throw BadRequest.field('end', 'Range too large.');
  return { start: from.toISOString(), end: to.toISOString() };
}

function encodeCursor(row: EventRow): string {
  return Buffer.from(`${row.date}|${row.seq}`).toString('base64url');
}

function decodeCursor(token: string): EventCursor {
  const [date, seq, extra] = Buffer.from(token, 'base64url').toString('utf8').split('|');
  const n = Number(seq);
  if (extra !== undefined || !date || Number.isNaN(Date.parse(date)) || !Number.isSafeInteger(n) || n < 0) {
    throw BadRequest.field('continuationToken', 'The continuation token is not one this server gave out.');
  }
  return { date, seq: n };
}

function page(rows: EventRow[]): EventPage {
  const data = rows.slice(0, EVENT_PAGE_SIZE);
  const last = data[data.length - 1];
  return { data, continuationToken: rows.length > EVENT_PAGE_SIZE && last ? encodeCursor(last) : null };
}

/** Reading the audit log: `GET /organizations/{orgId}/events`, and the Secrets Manager event routes. */
export function createEventQueryService({ db, clock }: { db: Executor; clock: Clock }) {
  return {
    /**
     * One page of the organization's events. `about` keeps those naming one resource in the
     * given columns (the Secrets Manager routes); otherwise `itemId` keeps those naming it in any.
     */
    async organizationEvents(organizationId: string, query: EventQueryInput, about?: EventsAbout): Promise<EventPage> {
      const window = eventWindow(clock.now(), query.start, query.end);
      const subject = about ?? (query.itemId ? { columns: ITEM_COLUMNS, id: query.itemId } : undefined);
      const rows = await organizationEvents(db, {
        organizationId,
        ...window,
        ...(query.actingUserId ? { actingUserId: query.actingUserId.toLowerCase() } : {}),
        ...(subject ? { about: { columns: subject.columns, id: subject.id.toLowerCase() } } : {}),
        ...(query.continuationToken ? { after: decodeCursor(query.continuationToken) } : {}),
        limit: EVENT_PAGE_SIZE + 1,
      });
      return page(rows);
    },
  };
}

export type EventQueryService = ReturnType<typeof createEventQueryService>;
