import type { Clock } from '../../shared/clock.js';
import { BadRequest, NotFound } from '../../http/errors.js';
import type { Executor } from '../../db/database.js';
import { eventsPerDay, ITEM_COLUMNS, organizationEvents, type EventCursor, type EventFilter, type EventRow, type EventsAbout } from './events.repository.js';
import { readSetMembers } from '../../platform/audit/read-sets.js';
import { yieldToLoop } from '../../shared/work-slices.js';
import { confirmedMembership, type MemberCaller } from '../../platform/access/org-access.js';
import type { UserCaller } from '../../http/request-context.js';
import { toEventResponse } from './events.schemas.js';

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

/** A page of events as the clients read it; the route adds the list envelope. */
export function toEventList(page: EventPage) {
  return { data: page.data.map(toEventResponse), continuationToken: page.continuationToken };
}

export function parseDate(field: string, value: string): Date {
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

/** What a route reads: the filter's leading columns (see EventFilter), without window, cursor and limit. */
type EventScope = Omit<EventFilter, 'start' | 'end' | 'after' | 'limit' | 'about'>;

/** What the admin console filters the instance's events by. */
export type InstanceEventScope = Pick<EventFilter, 'organizationId' | 'actingUserId' | 'types'>;

/** Events per statement of an export. */
const EXPORT_PAGE_SIZE = 1000;

/**
 * Reading the audit log: the organization's log, a member's, the caller's own and an item's,
 * the Secrets Manager event routes, and exports. Every one is a page of `organizationEvents`
 * with read sets shown as one event per secret.
 */
export function createEventQueryService({ db, clock }: { db: Executor; clock: Clock }) {
  async function page(scope: EventScope, query: EventQueryInput, subject: EventsAbout | undefined, size = EVENT_PAGE_SIZE): Promise<EventPage> {
    const window = eventWindow(clock.now(), query.start, query.end);
    const about = subject ? { columns: subject.columns, id: subject.id.toLowerCase() } : undefined;
    const after = query.continuationToken ? decodeCursor(query.continuationToken) : undefined;
    const rows = await organizationEvents(db, {
      ...scope,
      ...window,
      ...(about ? { about } : {}),
      ...(after ? { after } : {}),
      limit: size + 1,
    });
    // One more than a page tells whether another follows.
    const shown = await shownEvents(db, rows, size + 1, about, after);
    const data = shown.slice(0, size);
    const last = data[data.length - 1];
    return { data: data.map((event) => event.row), continuationToken: shown.length > size && last ? encodeCursor(last) : null };
  }

  /** The organization's plan includes event logs (the official `useEvents`). */
  async function usesEvents(organizationId: string): Promise<boolean> {
    const row = await db.selectFrom('organizations').select('use_events').where('id', '=', organizationId).executeTakeFirst();
    return Boolean(row?.use_events);
  }

  /** Every event of a filtered window, newest first, read sets expanded, EXPORT_PAGE_SIZE a query: the exports. */
  async function* exportEvents(scope: InstanceEventScope, query: Pick<EventQueryInput, 'start' | 'end'>): AsyncGenerator<EventRow> {
    let continuationToken: string | null = null;
    do {
      const next: EventPage = await page(scope, { ...query, ...(continuationToken ? { continuationToken } : {}) }, undefined, EXPORT_PAGE_SIZE);
      yield* next.data;
      continuationToken = next.continuationToken;
      // A client reading fast never makes the answer wait, and on SQLite the reads never do: let
      // other requests run between pages, or a large log's export holds the loop from end to end.
      if (continuationToken) await yieldToLoop();
    } while (continuationToken);
  }

  /** The user of a member of the organization, or null (no such member, or not linked to a user yet). */
  async function memberUser(organizationId: string, memberId: string): Promise<string | null> {
    const row = await db.selectFrom('organization_users').select('user_id').where('id', '=', memberId.toLowerCase()).where('organization_id', '=', organizationId).executeTakeFirst();
    return row?.user_id ?? null;
  }

  /**
   * The item whose events the user may read, or null: an organization item for a confirmed
   * member holding accessEventLogs on a plan with useEvents, a personal item for its owner.
   */
  async function readableCipher(userId: string, cipherId: string): Promise<{ id: string; organization_id: string | null; user_id: string | null } | null> {
    const cipher = await db.selectFrom('ciphers').select(['id', 'organization_id', 'user_id']).where('id', '=', cipherId.toLowerCase()).executeTakeFirst();
    if (!cipher) return null;
    if (!cipher.organization_id) return cipher.user_id === userId ? cipher : null;
    const membership = await confirmedMembership(db, cipher.organization_id, userId);
    return membership?.rights.has('accessEventLogs') && (await usesEvents(cipher.organization_id)) ? cipher : null;
  }

  /**
   * One page of the organization's events. `only` keeps those naming one resource in the
   * given columns (the Secrets Manager routes); otherwise `itemId` keeps those naming it in any.
   */
  async function organizationPage(organizationId: string, query: EventQueryInput, only?: EventsAbout): Promise<EventPage> {
    const subject = only ?? (query.itemId ? { columns: ITEM_COLUMNS, id: query.itemId } : undefined);
    return page({ organizationId, ...(query.actingUserId ? { actingUserId: query.actingUserId.toLowerCase() } : {}) }, query, subject);
  }

  return {
    usesEvents,

    organizationEvents: organizationPage,

    /** `GET /organizations/{orgId}/events`: a page of the organization's log, as the clients read it. */
    async organizationLog({ membership }: MemberCaller, query: EventQueryInput) {
      return toEventList(await organizationPage(membership.organizationId, query));
    },

    /** The caller's own events outside any organization (the official GET /events). */
    async userEvents({ userId }: UserCaller, query: EventQueryInput) {
      return toEventList(await page({ organizationId: null, actingUserId: userId }, query, undefined));
    },

    /** What one member did in the organization (the official GET /organizations/{orgId}/users/{id}/events); 404 for a member not linked to a user. */
    async memberEvents({ membership }: MemberCaller, memberId: string, query: EventQueryInput) {
      const { organizationId } = membership;
      const memberUserId = await memberUser(organizationId, memberId);
      if (!memberUserId) throw new NotFound();
      return toEventList(await page({ organizationId, actingUserId: memberUserId }, query, undefined));
    },

    /** An item's events: an organization item's within its organization, a personal item's within its owner's; 404 for an item the caller may not read. */
    async cipherEvents({ userId }: UserCaller, cipherId: string, query: EventQueryInput) {
      const cipher = await readableCipher(userId, cipherId);
      if (!cipher) throw new NotFound();
      const scope: EventScope = cipher.organization_id
        ? { organizationId: cipher.organization_id, cipherId: cipher.id }
        : { organizationId: null, cipherId: cipher.id, ...(cipher.user_id ? { userId: cipher.user_id } : {}) };
      return toEventList(await page(scope, query, undefined));
    },

    /**
     * The instance's events across organizations (the admin console): filtered by
     * organization, acting user and type range, paged like every other log.
     */
    async instanceEvents(scope: InstanceEventScope, query: EventQueryInput): Promise<EventPage> {
      return page(scope, query, undefined);
    },

    /** Events per UTC day and category of the same filter and window, for the console's chart. */
    async instanceEventsPerDay(scope: InstanceEventScope, query: Pick<EventQueryInput, 'start' | 'end'>) {
      return eventsPerDay(db, { ...scope, ...eventWindow(clock.now(), query.start, query.end) });
    },

    /** Every event of the instance's filtered window, newest first, read sets expanded: the console's CSV export. */
    exportInstanceEvents: exportEvents,

    /**
     * Every event of the organization's window, newest first, as the log shows them (read sets
     * expanded), read 1,000 at a time: for exports.
     */
    exportOrganizationEvents(organizationId: string, query: Pick<EventQueryInput, 'start' | 'end'>): AsyncGenerator<EventRow> {
      return exportEvents({ organizationId }, query);
    },
  };
}

export type EventQueryService = ReturnType<typeof createEventQueryService>;
