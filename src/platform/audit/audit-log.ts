import { v7 as timeOrderedUuid } from 'uuid';
import type { Clock } from '../../shared/clock.js';
import { sendAhead } from '../../db/postgres-driver.js';
import type { Executor } from '../../db/database.js';
import type { ClientContext } from '../../http/request-context.js';
import type { EventType } from './event-type.js';
import { saveReadSet, type ReadSet } from './read-sets.js';


/** One audit event as a service states it; ids it does not concern stay undefined. */
export interface AuditEvent {
  /** The row's id when the writer needs it beforehand (to undo a sliced write); a new one otherwise. */
  id?: string;
  type: EventType;
  userId?: string | null;
  organizationId?: string | null;
  cipherId?: string | null;
  collectionId?: string | null;
  policyId?: string | null;
  groupId?: string | null;
  organizationUserId?: string | null;
  actingUserId?: string | null;
  secretId?: string | null;
  projectId?: string | null;
  /** The acting machine account. */
  serviceAccountId?: string | null;
  /** The machine account the event is about. */
  grantedServiceAccountId?: string | null;
  /** The Send an event is about (Send_* events, 0015-files). */
  sendId?: string | null;
  systemUser?: number | null;
  /** The read set the event stands for (one event per secret of it); see read-sets.ts. */
  readSetId?: string | null;
  /** When the client says the event happened (client events); defaults to now. */
  date?: string;
}

export interface AuditLog {
  /**
   * Writes events with the executor the caller passes: inside the service's transaction, so
   * an event exists exactly when the change it records was committed.
   */
  record(executor: Executor, client: ClientContext | null, events: AuditEvent | readonly AuditEvent[]): Promise<void>;
  /**
   * `event` for each secret of `set`, in the same way: a row naming the secret for a read of
   * one, one row naming the read set for a read of several (see read-sets.ts).
   */
  recordReads(executor: Executor, client: ClientContext | null, event: Omit<AuditEvent, 'secretId' | 'readSetId'>, set: ReadSet): Promise<void>;
}

export const IP_ADDRESS_MAX = 50;
/**
 * Most rows an insert statement writes: 20 columns a row keeps 512 rows (10,240 bound
 * parameters) under SQLite's 32,766 and PostgreSQL's 65,535.
 */
export const STATEMENT_ROWS = 512;

/**
 * The rows of each insert statement writing `total` events: as many of STATEMENT_ROWS as fit,
 * then the rest as powers of two (1,000 is 512 + 256 + 128 + 64 + 32 + 8). A write of any size
 * thus runs statements of ten shapes at most, each compiled once and then kept by the
 * statement cache (db/dialect.ts) rather than compiled anew for every remainder's length.
 */
export function statementSizes(total: number): number[] {
  const sizes: number[] = [];
  let left = total;
  for (let size = STATEMENT_ROWS; left > 0; size >>= 1) {
    while (left >= size) {
      sizes.push(size);
      left -= size;
    }
  }
  return sizes;
}

export function createAuditLog({ clock }: { clock: Clock }): AuditLog {
  const log: AuditLog = {
    async record(executor, client, input) {
      const events = Array.isArray(input) ? (input as readonly AuditEvent[]) : [input as AuditEvent];
      if (events.length === 0) return;
      const now = clock.now().toISOString();
      const rows = events.map((e) => ({
        // Time-ordered (UUID version 7): each new id goes at the end of the unique index on
        // `id`, as `seq` does in the table, instead of a random page of it (a random version 4
        // id dirtied one index page per event once the log outgrew the cache: the event
        // writes ran twice as slow at 200,000 events, see docs/benchmarks.md).
        id: e.id ?? timeOrderedUuid(),
        type: e.type,
        user_id: e.userId ?? null,
        organization_id: e.organizationId ?? null,
        cipher_id: e.cipherId ?? null,
        collection_id: e.collectionId ?? null,
        policy_id: e.policyId ?? null,
        group_id: e.groupId ?? null,
        organization_user_id: e.organizationUserId ?? null,
        acting_user_id: e.actingUserId ?? null,
        secret_id: e.secretId ?? null,
        project_id: e.projectId ?? null,
        service_account_id: e.serviceAccountId ?? null,
        granted_service_account_id: e.grantedServiceAccountId ?? null,
        device_type: client?.deviceType ?? null,
        ip_address: client?.ipAddress ? client.ipAddress.slice(0, IP_ADDRESS_MAX) : null,
        system_user: e.systemUser ?? null,
        read_set_id: e.readSetId ?? null,
        send_id: e.sendId ?? null,
        date: e.date ?? now,
      }));
      let at = 0;
      for (const size of statementSizes(rows.length)) {
        await sendAhead(executor, executor.insertInto('events').values(rows.slice(at, at + size)));
        at += size;
      }
    },

    async recordReads(executor, client, event, set) {
      const [only] = set.secretIds;
      if (only === undefined) return;
      if (set.secretIds.length === 1) return log.record(executor, client, { ...event, secretId: only });
      await saveReadSet(executor, set, clock.now().toISOString());
      await log.record(executor, client, { ...event, readSetId: set.id });
    },
  };
  return log;
}
