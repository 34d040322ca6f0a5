import { randomUUID } from 'node:crypto';
import type { Selectable } from 'kysely';
import type { Clock } from '../../shared/clock.js';
import type { Db } from '../../db/database.js';
import type { AdminEventsTable } from '../../db/schema.js';
import type { Executor } from '../../db/database.js';

/** What an operator did in the console; the names are this log's own (the official EventType has none). */
export type AdminAction =
  | 'signed-in'
  | 'sign-in-refused'
  | 'signed-out'
  | 'user-invited'
  | 'user-verification-sent'
  | 'user-disabled'
  | 'user-enabled'
  | 'user-sessions-ended'
  | 'user-two-step-login-removed'
  | 'user-deleted'
  | 'organization-disabled'
  | 'organization-enabled'
  | 'organization-deleted'
  | 'license-issued'
  | 'test-mail-sent';

export interface AdminEventInput {
  action: AdminAction;
  targetType?: 'user' | 'organization' | null;
  targetId?: string | null;
  /** A short human text (an email, an organization name) kept with the row: the target may be deleted. */
  detail?: string | null;
  ipAddress: string | null;
}

export type AdminEventRow = Selectable<AdminEventsTable>;

/**
 * The instance audit log of the admin console. The console's actions call the features'
 * services, which own their transactions, so a row is written right after the action's commit;
 * an action that fails writes none (a refused sign-in is itself a row).
 */
export function createAdminAudit(deps: { db: Db; clock: Clock }) {
  return {
    async record(input: AdminEventInput, executor: Executor = deps.db): Promise<void> {
      await executor
        .insertInto('admin_events')
        .values({
          id: randomUUID(),
          date: deps.clock.now().toISOString(),
          action: input.action,
          target_type: input.targetType ?? null,
          target_id: input.targetId ?? null,
          detail: input.detail ?? null,
          ip_address: input.ipAddress,
        })
        .execute();
    },

    /** Newest first. */
    async list(page: { offset: number; limit: number }): Promise<{ rows: AdminEventRow[]; total: number }> {
      const rows = await deps.db.selectFrom('admin_events').selectAll().orderBy('date', 'desc').orderBy('id', 'desc').offset(page.offset).limit(page.limit).execute();
      const total = await deps.db.selectFrom('admin_events').select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
      return { rows, total: Number(total.n) };
    },
  };
}

export type AdminAudit = ReturnType<typeof createAdminAudit>;
