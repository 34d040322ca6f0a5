import { v7 as timeOrderedUuid } from 'uuid';
import { chunks } from '../../db/chunks.js';
import type { Db } from '../../db/database.js';
import type { Clock } from '../../shared/clock.js';
import { BadRequest } from '../../http/errors.js';
import type { ClientContext, UserCaller } from '../../http/request-context.js';
import { confirmedInEnabledOrganizations } from '../../platform/access/memberships.js';
import { parsePermissions, rightsOf } from '../../platform/access/roles.js';
import { readsEveryItem, visibleCiphers } from '../vault/cipher-access.js';
import type { AuditEvent, AuditLog } from '../../platform/audit/audit-log.js';
import { EventType } from '../../platform/audit/event-type.js';
import { parseDate } from './events.service.js';
import { createWorkQueue, mapInSlices, yieldToLoop } from '../../shared/work-slices.js';

/** One element of a `POST /collect` body (the official EventModel). */
export interface CollectedEvent {
  type: number;
  cipherId?: string | null | undefined;
  organizationId?: string | null | undefined;
  date?: string | null | undefined;
}

/** Most events one request may carry; clients upload their queue every minute, far fewer. */
export const COLLECT_MAX_EVENTS = 10_000;
/** Dates older than this are refused: the read window's longest span. */
export const COLLECT_MAX_AGE_DAYS = 367;
const DAY_MS = 24 * 60 * 60 * 1000;
/** Events written per transaction: a few milliseconds of the database, between which others' requests run. */
const EVENTS_PER_SLICE = 500;

/** Logged for the caller alone, no check. */
const USER_TYPES = new Set<number>([EventType.User_ClientExportedVault]);
/** Logged as an organization-user event: the caller must be a confirmed member of organizationId. */
const MEMBER_TYPES = new Set<number>([
  EventType.Organization_ItemOrganization_Accepted,
  EventType.Organization_ItemOrganization_Declined,
  EventType.OrganizationUser_NotificationBannerActionClicked,
]);
/** Logged as an organization event: the caller must be a confirmed member of organizationId. */
const ORGANIZATION_TYPES = new Set<number>([
  EventType.Organization_ClientExportedVault,
  EventType.Organization_AutoConfirmEnabled_Admin,
  EventType.Organization_AutoConfirmDisabled_Admin,
  EventType.Organization_InviteLinkClientCopied,
]);
/**
 * Client cipher events: 1107–1114, 1117 and 1119–1132 (not 1118, ToggledTOTPSeedVisible, as the
 * official server). Logged only for an item the caller can access: one they see (their own, or
 * through their collections), or an item of organizationId when their role or permissions there
 * let them read every item of it (admins acting on items outside their collections). The
 * official server takes any member of organizationId here; the spec asks for access.
 */
export const CIPHER_CLIENT_TYPES = new Set<number>([
  ...[1107, 1108, 1109, 1110, 1111, 1112, 1113, 1114, 1117],
  ...Array.from({ length: 14 }, (_, i) => 1119 + i),
]);

/** The types `POST /collect` logs; any other type is skipped, as the official server does. */
export function acceptedType(type: number): boolean {
  return USER_TYPES.has(type) || MEMBER_TYPES.has(type) || ORGANIZATION_TYPES.has(type) || CIPHER_CLIENT_TYPES.has(type);
}

const lower = (id: string | null | undefined) => (id ? id.toLowerCase() : null);

/** Client-reported events (`POST {events_url}/collect`). */
export function createEventCollector({ db, clock, audit }: { db: Db; clock: Clock; audit: AuditLog }) {
  /**
   * The date each event is stored with: the client's, no later than now (a client clock ahead
   * of the server's is clamped to the time of receipt); none means now. A date that is not ISO
   * 8601, or older than 367 days, is refused with 400 for the whole request (nothing is written).
   */
  function datesOf(events: readonly CollectedEvent[]): Promise<string[]> {
    const now = clock.now();
    const oldest = now.getTime() - COLLECT_MAX_AGE_DAYS * DAY_MS;
    return mapInSlices(events, (event, index) => {
      if (event.date === undefined || event.date === null) return now.toISOString();
      const field = `[${index}].date`;
      const date = parseDate(field, event.date);
      if (date.getTime() < oldest) throw BadRequest.field(field, `The event's date is more than ${COLLECT_MAX_AGE_DAYS} days old.`);
      return (date > now ? now : date).toISOString();
    });
  }

  /** Big uploads of one caller run one after another, and at most two callers' side by side. */
  const queue = createWorkQueue({ concurrency: 2, queueLimit: 32, busy: 'The server is busy with other event uploads. Try again in a moment.' });

  /**
   * The events of `accepted` the caller may log, as rows. The reads (which items the caller sees,
   * their memberships) are one slice of ids at a time with the event loop let go between them.
   */
  async function rowsOf(userId: string, accepted: readonly { event: CollectedEvent; date: string }[]): Promise<AuditEvent[]> {
    const cipherIds = [...new Set(accepted.filter(({ event }) => CIPHER_CLIENT_TYPES.has(event.type) && event.cipherId).map(({ event }) => lower(event.cipherId) as string))];
    const organizationIds = [...new Set(accepted.map(({ event }) => lower(event.organizationId)).filter((id): id is string => id !== null))];
    const visible = new Map<string, string | null>();
    for (const part of chunks(cipherIds)) {
      for (const row of await visibleCiphers(db, userId, part)) visible.set(row.id, row.organization_id);
      await yieldToLoop();
    }
    const memberships = new Map<string, { id: string; readsEveryItem: boolean }>();
    for (const part of chunks(organizationIds)) {
      const rows = await confirmedInEnabledOrganizations(db)
        .select(['ou.id', 'ou.organization_id', 'ou.type', 'ou.permissions'])
        .where('ou.user_id', '=', userId)
        .where('ou.organization_id', 'in', part)
        .execute();
      for (const row of rows) memberships.set(row.organization_id, { id: row.id, readsEveryItem: readsEveryItem(rightsOf(row.type, parsePermissions(row.permissions))) });
    }
    // Items the caller does not see but may read as an admin of their organization.
    const unseen = cipherIds.filter((id) => !visible.has(id));
    const readable = [...memberships].filter(([, m]) => m.readsEveryItem).map(([organizationId]) => organizationId);
    const inTheirOrganizations = new Map<string, string>();
    if (unseen.length > 0 && readable.length > 0) {
      for (const part of chunks(unseen)) {
        const rows = await db.selectFrom('ciphers').select(['id', 'organization_id']).where('id', 'in', part).where('organization_id', 'in', readable).execute();
        for (const row of rows) if (row.organization_id) inTheirOrganizations.set(row.id, row.organization_id);
        await yieldToLoop();
      }
    }

    const rows: AuditEvent[] = [];
    for (const { event, date } of accepted) {
      const organizationId = lower(event.organizationId);
      if (USER_TYPES.has(event.type)) {
        rows.push({ type: event.type, userId, actingUserId: userId, date });
      } else if (MEMBER_TYPES.has(event.type) || ORGANIZATION_TYPES.has(event.type)) {
        const membership = organizationId ? memberships.get(organizationId) : undefined;
        if (!organizationId || !membership) continue;
        rows.push(
          MEMBER_TYPES.has(event.type)
            ? { type: event.type, organizationId, organizationUserId: membership.id, userId, actingUserId: userId, date }
            : { type: event.type, organizationId, actingUserId: userId, date },
        );
      } else {
        const cipherId = lower(event.cipherId);
        if (!cipherId) continue;
        let owner: string | null | undefined = visible.get(cipherId);
        if (owner === undefined) {
          const viaOrganization = inTheirOrganizations.get(cipherId);
          if (!viaOrganization || viaOrganization !== organizationId) continue;
          owner = viaOrganization;
        }
        rows.push({ type: event.type, userId, organizationId: owner, cipherId, actingUserId: userId, date });
      }
    }
    return rows;
  }

  /**
   * Writes the rows EVENTS_PER_SLICE to a transaction with the event loop let go between them;
   * should a later slice fail, the slices already written are deleted again, so a client that
   * sends its queue again after the error does not log its events twice.
   */
  async function write(client: ClientContext, rows: readonly AuditEvent[]): Promise<void> {
    const written: string[] = [];
    try {
      for (const slice of chunks(rows, EVENTS_PER_SLICE)) {
        const withIds = slice.map((row) => ({ ...row, id: timeOrderedUuid() }));
        await db.transaction().execute((tx) => audit.record(tx, client, withIds));
        written.push(...withIds.map((row) => row.id));
        await yieldToLoop();
      }
    } catch (error) {
      for (const part of chunks(written)) await db.deleteFrom('events').where('id', 'in', part).execute();
      throw error;
    }
  }

  return {
    /**
     * Logs the events the caller may log and skips the others (unknown types, items the caller
     * cannot see, organizations they are not a member of). Reads are per slice of ids, not per
     * event. Work that grows with the upload is cut into slices (docs/security.md): the dates are
     * checked, and the reads and writes done, a few milliseconds at a time, so 10,000 events
     * never hold the server for everyone else; uploads of more than one slice of one caller run
     * one after another. Answers how many events were written.
     */
    async collect({ userId, client }: UserCaller, events: readonly CollectedEvent[]): Promise<number> {
      const dates = await datesOf(events);
      const accepted = events.map((event, index) => ({ event, date: dates[index] as string })).filter(({ event }) => acceptedType(event.type));
      if (accepted.length === 0) return 0;
      const run = async () => {
        const rows = await rowsOf(userId, accepted);
        await write(client, rows);
        return rows.length;
      };
      return accepted.length > EVENTS_PER_SLICE ? queue(userId, run) : run();
    },
  };
}

export type EventCollector = ReturnType<typeof createEventCollector>;
