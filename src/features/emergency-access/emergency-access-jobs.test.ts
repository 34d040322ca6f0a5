import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventsOf, seedUser } from '../../../test/support/admin.js';
import { testClock } from '../../../test/support/clock.js';
import { sharedDatabaseUrl } from '../../../test/support/shared-database.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { createLease } from '../../db/leases.js';
import { EventType } from '../../platform/audit/event-type.js';
import type { Mailer, MailMessage } from '../mail/mailer.js';
import { createEmergencyReminderJob, createEmergencyTimeoutJob } from './emergency-access-jobs.js';

/** The timeout and reminder jobs on a controllable clock, and the lease that lets one instance of a fleet run each. */
const DAY = 86_400_000;
const HOUR = 3_600_000;
const clock = testClock();
let server: TestServer;
const sent: MailMessage[] = [];
const mailer: Mailer = {
  enabled: true,
  send: async (message) => {
    sent.push(message);
  },
  check: async () => undefined,
};

beforeAll(async () => {
  server = await startTestServer({ clock });
});
afterAll(async () => server?.close());

const db = () => server.database.db;
const deps = () => ({ db: db(), clock, audit: server.app.features.audit, mailer });

/** A recovery the grantee asked for now, waiting `waitTimeDays` on the grantor. */
async function waiting(waitTimeDays: number): Promise<{ id: string; grantor: string; grantee: string; grantorEmail: string; granteeEmail: string }> {
  const grantorEmail = `grantor-${randomUUID().slice(0, 8)}@example.com`;
  const granteeEmail = `grantee-${randomUUID().slice(0, 8)}@example.com`;
  const grantor = await seedUser(server, grantorEmail);
  const grantee = await seedUser(server, granteeEmail);
  const now = clock.now().toISOString();
  const id = randomUUID();
  await db()
    .insertInto('emergency_access')
    .values({ id, grantor_id: grantor, grantee_id: grantee, email: null, key_encrypted: '4.a2V5', type: 1, status: 3, wait_time_days: waitTimeDays, recovery_initiated_date: now, last_notification_date: now, creation_date: now, revision_date: now })
    .execute();
  return { id, grantor, grantee, grantorEmail, granteeEmail };
}

const statusOf = async (id: string) => (await db().selectFrom('emergency_access').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status;
const mailsTo = (to: string) => sent.filter((m) => m.to === to);

describe('the timeout job', () => {
  it('grants a recovery once its wait is over, records the approval and tells both parties, once', async () => {
    const grant = await waiting(3);
    const job = createEmergencyTimeoutJob(deps());
    clock.advance(3 * DAY - HOUR);
    expect(await job.runOnce()).toBe(0);
    expect(await statusOf(grant.id)).toBe(3);
    clock.advance(HOUR);
    expect(await job.runOnce()).toBe(1);
    expect(await statusOf(grant.id)).toBe(4);
    expect(mailsTo(grant.granteeEmail).map((m) => m.subject)).toEqual(['Emergency access approved']);
    expect(mailsTo(grant.grantorEmail).map((m) => m.subject)).toEqual(['Emergency access granted']);
    expect((await eventsOf(server, EventType.EmergencyAccess_RecoveryApproved)).filter((e) => e.user_id === grant.grantor)).toHaveLength(1);
    expect(await job.runOnce()).toBe(0);
    expect(mailsTo(grant.granteeEmail)).toHaveLength(1);
  });

  it('leaves a rejected recovery alone', async () => {
    const grant = await waiting(1);
    await db().updateTable('emergency_access').set({ status: 2 }).where('id', '=', grant.id).execute();
    clock.advance(2 * DAY);
    expect(await createEmergencyTimeoutJob(deps()).runOnce()).toBe(0);
    expect(await statusOf(grant.id)).toBe(2);
  });

  it('skips a run while another instance holds the lease, and of two instances one grants', async () => {
    const grant = await waiting(1);
    clock.advance(DAY);
    const other = createLease(db(), clock, 'emergency-access-timeout', 'another-instance');
    expect(await other.acquire(HOUR)).toBe(true);
    expect(await createEmergencyTimeoutJob(deps()).runOnce()).toBeNull();
    expect(await statusOf(grant.id)).toBe(3);
    await other.release();
    const results = await Promise.all([createEmergencyTimeoutJob(deps()).runOnce(), createEmergencyTimeoutJob(deps()).runOnce()]);
    expect(results.filter((r) => r === null)).toHaveLength(1);
    expect(results.filter((r) => r !== null).reduce((a, b) => (a ?? 0) + (b ?? 0), 0)).toBe(1);
    expect(await statusOf(grant.id)).toBe(4);
  });
});

describe('the reminder job', () => {
  it('reminds the grantor once a day from the last day of the wait, not after', async () => {
    const grant = await waiting(3);
    const job = createEmergencyReminderJob(deps());
    clock.advance(DAY);
    expect(await job.runOnce()).toBe(0);
    clock.advance(DAY);
    expect(await job.runOnce()).toBe(1);
    expect(mailsTo(grant.grantorEmail).map((m) => m.subject)).toEqual(['Pending emergency access request']);
    expect(mailsTo(grant.grantorEmail)[0]!.text).toMatch(/in 1 day\./);
    clock.advance(12 * HOUR);
    expect(await job.runOnce()).toBe(0);
    // Past the wait it is the timeout job's to tell.
    clock.advance(12 * HOUR);
    expect(await job.runOnce()).toBe(0);
    expect(mailsTo(grant.grantorEmail)).toHaveLength(1);
    expect(mailsTo(grant.granteeEmail)).toHaveLength(0);
  });

  it('skips a run without the lease, and of two instances at once one mails', async () => {
    // The earlier runs' leases have run out.
    clock.advance(2 * HOUR);
    const grant = await waiting(1);
    const other = createLease(db(), clock, 'emergency-access-reminder', 'another-instance');
    expect(await other.acquire(2 * DAY)).toBe(true);
    clock.advance(DAY - HOUR);
    expect(await createEmergencyReminderJob(deps()).runOnce()).toBeNull();
    await other.release();
    expect(await createEmergencyReminderJob(deps()).runOnce()).toBe(0);
    expect(mailsTo(grant.grantorEmail)).toHaveLength(0);
    // Two instances at once: the claim of the reminder date lets one mail.
    await db().updateTable('emergency_access').set({ last_notification_date: new Date(clock.now().getTime() - DAY).toISOString() }).where('id', '=', grant.id).execute();
    const reminders = [createEmergencyReminderJob({ ...deps(), lease: createLease(db(), clock, 'a', 'a') }), createEmergencyReminderJob({ ...deps(), lease: createLease(db(), clock, 'b', 'b') })];
    await Promise.all(reminders.map((r) => r.runOnce()));
    expect(mailsTo(grant.grantorEmail)).toHaveLength(1);
  });
});

describe('two instances on one database', () => {
  it('grant a recovery once: the instance holding the lease runs the timeout, the other skips', { timeout: 60_000 }, async () => {
    const databaseUrl = await sharedDatabaseUrl();
    const instances: TestServer[] = [];
    try {
      // Each instance starts its jobs as it starts (buildApp); one takes each lease.
      instances.push(await startTestServer({ databaseUrl, clock }));
      instances.push(await startTestServer({ databaseUrl, clock }));
      const [a, b] = instances as [TestServer, TestServer];
      const grantor = await seedUser(a);
      const grantee = await seedUser(a);
      const started = new Date(clock.now().getTime() - 2 * DAY).toISOString();
      const id = randomUUID();
      await a.database.db
        .insertInto('emergency_access')
        .values({ id, grantor_id: grantor, grantee_id: grantee, email: null, key_encrypted: '4.a2V5', type: 0, status: 3, wait_time_days: 1, recovery_initiated_date: started, last_notification_date: started, creation_date: started, revision_date: started })
        .execute();
      const runs = await Promise.all([a.app.features.emergencyTimeout.runOnce(), b.app.features.emergencyTimeout.runOnce()]);
      expect(runs.filter((r) => r === null), JSON.stringify(runs)).toHaveLength(1);
      expect((await a.database.db.selectFrom('emergency_access').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status).toBe(4);
      const approvals = await a.database.db.selectFrom('events').select('id').where('type', '=', EventType.EmergencyAccess_RecoveryApproved).where('user_id', '=', grantor).execute();
      expect(approvals).toHaveLength(1);
    } finally {
      for (const one of instances) await one.close();
    }
  });
});
