import { randomUUID } from 'node:crypto';
import type { Db, Executor } from '../../db/database.js';
import { BadRequest, NotFound } from '../../http/errors.js';
import type { UserCaller } from '../../http/request-context.js';
import type { AuditLog } from '../../platform/audit/audit-log.js';
import { EventType } from '../../platform/audit/event-type.js';
import type { SigningKeys } from '../../platform/auth/signing-keys.js';
import { findUserById, type UserRow } from '../../platform/auth/users.repository.js';
import type { Clock } from '../../shared/clock.js';
import { sendOrFail, sendOrLog } from '../mail/delivery.js';
import type { MailLog, Mailer, MailMessage } from '../mail/mailer.js';
import { PolicyType } from '../policies/policy-type.js';
import { acceptedMail, approvedMail, called, confirmedMail, initiatedMail, inviteMail, rejectedMail } from './emergency-access-mail.js';
import {
  deleteGrant,
  findGrant,
  findGrantDetails,
  grantExists,
  grantsByGrantee,
  grantsByGrantor,
  insertGrant,
  lockGrant,
  lockUser,
  countGrants,
  organizationsWithPolicy,
  updateGrant,
  type EmergencyAccessRow,
} from './emergency-access.repository.js';
import { EmergencyAccessStatus as Status, EmergencyAccessType } from './emergency-access-status.js';
import {
  toGranteeDetails,
  toGrantorDetails,
  type GranteeDetailsResponse,
  type GrantorDetailsResponse,
  type InviteBody,
  type UpdateBody,
} from './emergency-access.schemas.js';

/** The `typ` of the signed token an emergency access invitation mails. */
export const EMERGENCY_INVITE_TYP = 'strongroom-emergency-invite';
/** As long as an organization invitation: the official server uses OrganizationInviteExpirationHours (120) for both. */
const INVITE_LIFETIME_DAYS = 5;

/** Whether `token` is this server's unexpired invitation to grant `id` for `email`. */
export async function verifyInviteToken(keys: SigningKeys, token: string, id: string, email: string): Promise<boolean> {
  const payload = await keys.verify(token, { typ: EMERGENCY_INVITE_TYP });
  return !!payload && payload.eaId === id.toLowerCase() && typeof payload.email === 'string' && payload.email.toLowerCase() === email.toLowerCase();
}

/** Contacts one grantor may name: far more than anyone needs, and a bound on what one account stores and lists. */
export const MAX_GRANTS = 100;

/** The official refusal of a step the grant's status or type does not allow. */
export const NOT_VALID = 'Emergency Access not valid.';

export interface EmergencyAccessDeps {
  db: Db;
  clock: Clock;
  audit: AuditLog;
  keys: SigningKeys;
  mailer: Mailer;
  /** The web vault's address, for the invitation link. */
  publicUrl: string;
}

export type Party = 'grantor' | 'grantee';

/**
 * The grant `id` if the caller is its `party` (either party when several are named); 404
 * otherwise, so a grant answers the same to anyone else as one that does not exist.
 */
export async function grantOf(db: Executor, userId: string, id: string, parties: readonly Party[], lock = false): Promise<EmergencyAccessRow> {
  const grant = lock ? await lockGrant(db, id.toLowerCase()) : await findGrant(db, id.toLowerCase());
  if (!grant) throw new NotFound();
  const isParty = (parties.includes('grantor') && grant.grantor_id === userId) || (parties.includes('grantee') && grant.grantee_id === userId);
  if (!isParty) throw new NotFound();
  return grant;
}

/** Refuses a step unless the grant is in one of `statuses`. */
export function requireStatus(grant: EmergencyAccessRow, ...statuses: Status[]): void {
  if (!statuses.includes(grant.status)) throw new BadRequest(NOT_VALID);
}

/**
 * The Automatic User Confirmation policy (18) takes emergency access away from the members of
 * its organizations, as the official server does: they may not name contacts, accept an
 * invitation, nor be taken over.
 */
export async function refuseUnderAutoConfirm(db: Executor, userId: string, message: string): Promise<void> {
  if ((await organizationsWithPolicy(db, userId, PolicyType.AutomaticUserConfirmation)).length > 0) throw new BadRequest(message);
}

export const typeName = (type: number): 'view' | 'takeover' => (type === (EmergencyAccessType.Takeover as number) ? 'takeover' : 'view');

/**
 * Emergency access from invitation to a granted recovery: the grantor names a contact by email
 * (invite, reinvite), the contact accepts with the mailed token, the grantor confirms with the
 * user key wrapped for the contact's public key; the contact asks for access (initiate), which
 * the grantor approves or rejects, or which the timeout job approves after the wait. What the
 * grantee does with granted access is in emergency-recovery.ts. Every change records its event,
 * with the grantor as the user, in its transaction; the mails go after the commit.
 */
export function createEmergencyAccessService(deps: EmergencyAccessDeps) {
  const { db, clock, audit, keys, mailer } = deps;

  async function userOrThrow(userId: string): Promise<UserRow> {
    const user = await findUserById(db, userId);
    if (!user) throw new NotFound();
    return user;
  }

  async function mailInvite(grant: EmergencyAccessRow, grantor: UserRow, log: MailLog): Promise<void> {
    const email = grant.email;
    if (!email) return;
    const token = await keys.sign({ eaId: grant.id, email }, { typ: EMERGENCY_INVITE_TYP, expiresInSeconds: INVITE_LIFETIME_DAYS * 86_400 });
    const params = new URLSearchParams({ id: grant.id, name: called(grantor), email, token });
    const link = `${deps.publicUrl}/#/accept-emergency?${params.toString()}`;
    await sendOrFail(mailer, inviteMail(email, called(grantor), link, INVITE_LIFETIME_DAYS), log, 'emergency access invitation', 'The invitation was saved, but the mail server did not accept the message. Resend it later.');
  }

  const notice = (message: MailMessage, log: MailLog) => sendOrLog(mailer, message, log, 'emergency access');

  /** A step of one party on one grant: locks it, checks it, writes it with its event. */
  async function step(
    caller: UserCaller,
    id: string,
    parties: readonly Party[],
    event: EventType,
    write: (tx: Executor, grant: EmergencyAccessRow, now: string) => Promise<void>,
  ): Promise<EmergencyAccessRow> {
    return db.transaction().execute(async (tx) => {
      const grant = await grantOf(tx, caller.userId, id, parties, true);
      const now = clock.now().toISOString();
      await write(tx, grant, now);
      await audit.record(tx, caller.client, { type: event, userId: grant.grantor_id, actingUserId: caller.userId });
      return grant;
    });
  }

  return {
    /** GET trusted: the contacts the caller named. */
    async trusted({ userId }: UserCaller): Promise<GranteeDetailsResponse[]> {
      return (await grantsByGrantor(db, userId)).map(toGranteeDetails);
    },

    /** GET granted: the accounts that named the caller (once accepted). */
    async granted({ userId }: UserCaller): Promise<GrantorDetailsResponse[]> {
      return (await grantsByGrantee(db, userId)).map(toGrantorDetails);
    },

    /** GET {id}: one of the caller's contacts (the grantor's view, as the official server answers it). */
    async get({ userId }: UserCaller, id: string): Promise<GranteeDetailsResponse> {
      const grant = await grantOf(db, userId, id, ['grantor']);
      const row = await findGrantDetails(db, grant.id);
      if (!row) throw new NotFound();
      return toGranteeDetails(row);
    },

    async invite(caller: UserCaller, body: InviteBody): Promise<void> {
      const grantor = await userOrThrow(caller.userId);
      const email = body.email.trim().toLowerCase();
      if (email === grantor.email.toLowerCase()) throw BadRequest.field('email', 'You cannot add yourself as an emergency access contact.');
      await refuseUnderAutoConfirm(db, grantor.id, 'You cannot invite emergency contacts because you are a member of an organization that uses Automatic User Confirmation.');
      const now = clock.now().toISOString();
      const grant: EmergencyAccessRow = {
        id: randomUUID(),
        grantor_id: grantor.id,
        grantee_id: null,
        email,
        key_encrypted: null,
        type: body.type,
        status: Status.Invited,
        wait_time_days: body.waitTimeDays,
        recovery_initiated_date: null,
        last_notification_date: null,
        creation_date: now,
        revision_date: now,
      };
      await db.transaction().execute(async (tx) => {
        // The grantor's row is locked so that two invitations at once see each other's grant:
        // the checks below are then exact on PostgreSQL too.
        await lockUser(tx, grantor.id);
        // One grant per contact, as vaultwarden keeps it: a second would only confuse both lists.
        if (await grantExists(tx, grantor.id, email)) throw BadRequest.field('email', 'Emergency contact already invited.');
        if ((await countGrants(tx, grantor.id)) >= MAX_GRANTS) throw BadRequest.field('email', `You cannot name more than ${MAX_GRANTS} emergency access contacts.`);
        await insertGrant(tx, grant);
        await audit.record(tx, caller.client, { type: EventType.EmergencyAccess_Invited, userId: grantor.id, actingUserId: grantor.id });
      });
      await mailInvite(grant, grantor, caller.log);
    },

    async reinvite(caller: UserCaller, id: string): Promise<void> {
      const grant = await grantOf(db, caller.userId, id, ['grantor']);
      requireStatus(grant, Status.Invited);
      await mailInvite(grant, await userOrThrow(caller.userId), caller.log);
    },

    /** The invited account takes up the invitation: the token must be this server's, for this grant and the caller's email. */
    async accept(caller: UserCaller, id: string, token: string): Promise<void> {
      const grantee = await userOrThrow(caller.userId);
      const email = grantee.email.toLowerCase();
      if (!(await verifyInviteToken(keys, token, id, email))) throw new BadRequest('Invalid token.');
      await refuseUnderAutoConfirm(db, grantee.id, 'You cannot accept emergency access invitations because you are a member of an organization that uses Automatic User Confirmation.');
      const grant = await db.transaction().execute(async (tx) => {
        const row = await lockGrant(tx, id.toLowerCase());
        if (!row) throw new NotFound();
        if (row.status === (Status.Accepted as number) && row.grantee_id === grantee.id) {
          throw new BadRequest('Invitation already accepted. You will receive an email when the grantor confirms you as an emergency access contact.');
        }
        if (row.status !== (Status.Invited as number)) throw new BadRequest('Invitation already accepted.');
        if (!row.email || row.email.toLowerCase() !== email) throw new BadRequest('User email does not match invite.');
        if (row.grantor_id === grantee.id) throw new BadRequest('You cannot add yourself as an emergency access contact.');
        await updateGrant(tx, row.id, { status: Status.Accepted, grantee_id: grantee.id, email: null, revision_date: clock.now().toISOString() });
        await audit.record(tx, caller.client, { type: EventType.EmergencyAccess_Accepted, userId: row.grantor_id, actingUserId: grantee.id });
        return row;
      });
      const grantor = await findUserById(db, grant.grantor_id);
      if (grantor) await notice(acceptedMail(grantor.email, called(grantee)), caller.log);
    },

    /** The grantor hands the grantee the user key, wrapped with the grantee's public key. */
    async confirm(caller: UserCaller, id: string, key: string): Promise<void> {
      const grant = await step(caller, id, ['grantor'], EventType.EmergencyAccess_Confirmed, async (tx, row, now) => {
        requireStatus(row, Status.Accepted);
        await updateGrant(tx, row.id, { status: Status.Confirmed, key_encrypted: key, email: null, revision_date: now });
      });
      const [grantor, grantee] = await Promise.all([findUserById(db, grant.grantor_id), grant.grantee_id ? findUserById(db, grant.grantee_id) : undefined]);
      if (grantor && grantee) await notice(confirmedMail(grantee.email, called(grantor)), caller.log);
    },

    /** PUT/POST {id}: the access type and wait time; a new wrapped key only where one is held already (the official rule). */
    async update(caller: UserCaller, id: string, body: UpdateBody): Promise<void> {
      await step(caller, id, ['grantor'], EventType.EmergencyAccess_Updated, async (tx, row, now) => {
        const key = row.key_encrypted && body.keyEncrypted ? body.keyEncrypted : row.key_encrypted;
        await updateGrant(tx, row.id, { type: body.type, wait_time_days: body.waitTimeDays, key_encrypted: key, revision_date: now });
      });
    },

    /** DELETE {id}: either party ends the grant. */
    async remove(caller: UserCaller, id: string): Promise<void> {
      await step(caller, id, ['grantor', 'grantee'], EventType.EmergencyAccess_Removed, (tx, row) => deleteGrant(tx, row.id));
    },

    /** The grantee asks for access; the wait starts now. */
    async initiate(caller: UserCaller, id: string): Promise<void> {
      const grant = await step(caller, id, ['grantee'], EventType.EmergencyAccess_RecoveryInitiated, async (tx, row, now) => {
        requireStatus(row, Status.Confirmed);
        await updateGrant(tx, row.id, { status: Status.RecoveryInitiated, recovery_initiated_date: now, last_notification_date: now, revision_date: now });
      });
      const [grantor, grantee] = await Promise.all([findUserById(db, grant.grantor_id), findUserById(db, caller.userId)]);
      if (grantor && grantee) await notice(initiatedMail(grantor.email, called(grantee), typeName(grant.type), grant.wait_time_days), caller.log);
    },

    /** The grantor grants the access before the wait is over. */
    async approve(caller: UserCaller, id: string): Promise<void> {
      const grant = await step(caller, id, ['grantor'], EventType.EmergencyAccess_RecoveryApproved, async (tx, row, now) => {
        requireStatus(row, Status.RecoveryInitiated);
        await updateGrant(tx, row.id, { status: Status.RecoveryApproved, revision_date: now });
      });
      await mailGrantee(grant, approvedMail, caller.log);
    },

    /** The grantor refuses a recovery, waiting or granted: the grant goes back to confirmed. */
    async reject(caller: UserCaller, id: string): Promise<void> {
      const grant = await step(caller, id, ['grantor'], EventType.EmergencyAccess_RecoveryRejected, async (tx, row, now) => {
        requireStatus(row, Status.RecoveryInitiated, Status.RecoveryApproved);
        await updateGrant(tx, row.id, { status: Status.Confirmed, revision_date: now });
      });
      await mailGrantee(grant, rejectedMail, caller.log);
    },
  };

  async function mailGrantee(grant: EmergencyAccessRow, mail: (to: string, grantor: string) => MailMessage, log: MailLog): Promise<void> {
    const [grantor, grantee] = await Promise.all([findUserById(db, grant.grantor_id), grant.grantee_id ? findUserById(db, grant.grantee_id) : undefined]);
    if (grantor && grantee) await notice(mail(grantee.email, called(grantor)), log);
  }
}

export type EmergencyAccessService = ReturnType<typeof createEmergencyAccessService>;
