import type { Db } from '../../db/database.js';
import { createLease, everyInterval, type JobRunResult, type Lease } from '../../db/leases.js';
import { NO_CLIENT, SILENT_LOG } from '../../http/request-context.js';
import type { AuditLog } from '../../platform/audit/audit-log.js';
import { EventType } from '../../platform/audit/event-type.js';
import type { Clock } from '../../shared/clock.js';
import { sendOrLog } from '../mail/delivery.js';
import type { MailLog, Mailer } from '../mail/mailer.js';
import { approvedMail, called, reminderMail, timedOutMail } from './emergency-access-mail.js';
import { approveWaiting, claimReminder, daysPassed, waitingRecoveries, type GrantDetailsRow } from './emergency-access.repository.js';
import { typeName } from './emergency-access.service.js';

const BATCH = 500;
const DAY_MS = 86_400_000;
/**
 * The official jobs run hourly, so a reminder or an approval is at most an hour late; the server
 * passes EMERGENCY_ACCESS_JOB_INTERVAL_SECONDS (default an hour) as `intervalMs`.
 */
const HOURLY = 60 * 60 * 1000;

export interface EmergencyJobDeps {
  db: Db;
  clock: Clock;
  audit: AuditLog;
  mailer: Mailer;
  /** Where the mails are logged when SMTP is off (the server's logger). */
  log?: MailLog;
  /** How often each job runs (EMERGENCY_ACCESS_JOB_INTERVAL_SECONDS); hourly when unset. */
  intervalMs?: number;
  lease?: Lease;
  onRun?: (result: JobRunResult) => void;
}

/** Every recovery still waiting on its grantor, a page at a time. */
async function eachWaiting(db: Db, visit: (grant: GrantDetailsRow) => Promise<boolean>): Promise<number> {
  let done = 0;
  let after = '';
  for (;;) {
    const page = await waitingRecoveries(db, BATCH, after);
    for (const grant of page) if (await visit(grant)) done += 1;
    if (page.length < BATCH) return done;
    after = page[page.length - 1]!.id;
  }
}

const granteeCalled = (grant: GrantDetailsRow) => called({ name: grant.grantee_name, email: grant.grantee_email ?? '' });

/** A scheduled job with its own lease, so one instance of a fleet runs it at a time. */
function leasedJob(deps: EmergencyJobDeps, name: string, work: () => Promise<number>) {
  const intervalMs = deps.intervalMs ?? HOURLY;
  const lease = deps.lease ?? createLease(deps.db, deps.clock, name);
  const job = {
    /** One run if this instance holds the lease: how many grants it moved, or null when another instance holds it. */
    async runOnce(): Promise<number | null> {
      if (!(await lease.acquire(Math.max(intervalMs, 5 * 60 * 1000)))) return null;
      return work();
    },
    start: (onError: (error: unknown) => void) => timer.start(onError),
    stop: () => timer.stop(),
  };
  const timer = everyInterval(intervalMs, () => job.runOnce(), lease, deps.onRun);
  return job;
}

/**
 * Grants the access of every recovery whose wait is over (the official
 * EmergencyAccessTimeoutJob): the grant moves to "recovery approved" with its event, unless the
 * grantor answered first, and both parties are told.
 */
export function createEmergencyTimeoutJob(deps: EmergencyJobDeps) {
  const { db, clock, audit, mailer } = deps;
  const log = deps.log ?? SILENT_LOG;
  return leasedJob(deps, 'emergency-access-timeout', () =>
    eachWaiting(db, async (grant) => {
      const now = clock.now();
      if (!grant.recovery_initiated_date || !daysPassed(grant.recovery_initiated_date, grant.wait_time_days, now)) return false;
      const approved = await db.transaction().execute(async (tx) => {
        if (!(await approveWaiting(tx, grant.id, now.toISOString()))) return false;
        await audit.record(tx, NO_CLIENT, { type: EventType.EmergencyAccess_RecoveryApproved, userId: grant.grantor_id, actingUserId: null });
        return true;
      });
      if (!approved) return false;
      const grantor = called({ name: grant.grantor_name, email: grant.grantor_email });
      if (grant.grantee_email) await sendOrLog(mailer, approvedMail(grant.grantee_email, grantor), log, 'emergency access');
      await sendOrLog(mailer, timedOutMail(grant.grantor_email, granteeCalled(grant), typeName(grant.type)), log, 'emergency access');
      return true;
    }),
  );
}

/**
 * Reminds the grantor of a waiting recovery once a day from the last day of the wait, as the
 * official EmergencyAccess_ReadToNotify selects them (initiated + wait − 1 days, a day since the
 * last mail). The reminder date is claimed before the mail, so no instance mails twice.
 */
export function createEmergencyReminderJob(deps: EmergencyJobDeps) {
  const { db, clock, mailer } = deps;
  const log = deps.log ?? SILENT_LOG;
  return leasedJob(deps, 'emergency-access-reminder', () =>
    eachWaiting(db, async (grant) => {
      const now = clock.now();
      const started = grant.recovery_initiated_date;
      if (!started || !daysPassed(started, grant.wait_time_days - 1, now)) return false;
      // Past the wait the timeout job grants the access and says so; a reminder would come too late.
      if (daysPassed(started, grant.wait_time_days, now)) return false;
      if (grant.last_notification_date && !daysPassed(grant.last_notification_date, 1, now)) return false;
      if (!(await claimReminder(db, grant.id, grant.last_notification_date, now.toISOString()))) return false;
      const left = Math.ceil((new Date(started).getTime() + grant.wait_time_days * DAY_MS - now.getTime()) / DAY_MS);
      await sendOrLog(mailer, reminderMail(grant.grantor_email, granteeCalled(grant), typeName(grant.type), left), log, 'emergency access');
      return true;
    }),
  );
}

export type EmergencyJob = ReturnType<typeof createEmergencyTimeoutJob>;
