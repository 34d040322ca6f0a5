import type { Clock } from '../../clock.js';
import { BadRequest } from '../../http/errors.js';
import type { Executor } from './audit-log.js';
import { ITEM_COLUMNS, organizationEvents, type EventCursor, type EventRow, type EventsAbout } from './events.repository.js';
import { readSetMembers } from './read-sets.js';

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

/** An event as the log shows it; `position` places a read set's secret within its set. */
interface ShownEvent {
  row: EventRow;
  position?: number;
}

function encodeCursor({ row, position }: ShownEvent): string {
  return Buffer.from(position === undefined ? `${row.date}|${row.seq}` : `${row.date}|${row.seq}|${position}`).toString('base64url');
}

function decodeCursor(token: string): EventCursor {
  const [date, seq, position, extra] = Buffer.from(token, 'base64url').toString('utf8').split('|');
  const n = Number(seq);
  const p = position === undefined ? undefined : Number(position);
  if (
    extra !== undefined ||
    !date ||
    Number.isNaN(Date.parse(date)) ||
    !Number.isSafeInteger(n) ||
    n < 0 ||
    (p !== undefined && (!Number.isSafeInteger(p) || p < 0))
  ) {
    throw BadRequest.field('continuationToken', 'The continuation token is not one this server gave out.');
  }
  return p === undefined ? { date, seq: n } : { date, seq: n, position: p };
}

/**
 * The events as the log shows them, up to `limit`: an event standing for a read set (see
 * read-sets.ts) becomes one Secret_Retrieved per secret of the set, or only the secret the
 * query is about when it matched through the set. A page cut inside a set resumes there.
 */
async function shownEvents(db: Executor, rows: readonly EventRow[], limit: number, about: EventsAbout | undefined, after: EventCursor | undefined): Promise<ShownEvent[]> {
  const shown: ShownEvent[] = [];
  for (const row of rows) {
    if (shown.length >= limit) break;
    const setId = row.read_set_id;
    if (!setId) {
      shown.push({ row });
      continue;
    }
    const matchedOwnColumn = about && about.columns.some((column) => column !== 'secret_id' && row[column] === about.id);
    if (about?.columns.includes('secret_id') && !matchedOwnColumn) {
      shown.push({ row: { ...row, secret_id: about.id, read_set_id: null } });
      continue;
    }
    // PostgreSQL answers bigserial as text.
    const from = after?.position !== undefined && Number(row.seq) === after.seq && row.date === after.date ? after.position + 1 : 0;
    for (const member of await readSetMembers(db, setId, from, limit - shown.length)) {
      shown.push({ row: { ...row, secret_id: member.secret_id, read_set_id: null }, position: member.position });
    }
  }
  return shown;
}

/** Reading the audit log: `GET /organizations/{orgId}/events`, and the Secrets Manager event routes. */
export function createEventQueryService({ db, clock }: { db: Executor; clock: Clock }) {
  return {
    /**
     * One page of the organization's events. `only` keeps those naming one resource in the
     * given columns (the Secrets Manager routes); otherwise `itemId` keeps those naming it in any.
     */
    async organizationEvents(organizationId: string, query: EventQueryInput, only?: EventsAbout): Promise<EventPage> {
      const window = eventWindow(clock.now(), query.start, query.end);
      const subject = only ?? (query.itemId ? { columns: ITEM_COLUMNS, id: query.itemId } : undefined);
      const about = subject ? { columns: subject.columns, id: subject.id.toLowerCase() } : undefined;
      const after = query.continuationToken ? decodeCursor(query.continuationToken) : undefined;
      const rows = await organizationEvents(db, {
        organizationId,
        ...window,
        ...(query.actingUserId ? { actingUserId: query.actingUserId.toLowerCase() } : {}),
        ...(about ? { about } : {}),
        ...(after ? { after } : {}),
        limit: EVENT_PAGE_SIZE + 1,
      });
      // One more than a page tells whether another follows.
      const shown = await shownEvents(db, rows, EVENT_PAGE_SIZE + 1, about, after);
      const data = shown.slice(0, EVENT_PAGE_SIZE);
      const last = data[data.length - 1];
      return { data: data.map((event) => event.row), continuationToken: shown.length > EVENT_PAGE_SIZE && last ? encodeCursor(last) : null };
    },
  };
}

export type EventQueryService = ReturnType<typeof createEventQueryService>;
