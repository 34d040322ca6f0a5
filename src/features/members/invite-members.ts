import { actingOf, type MemberCaller } from '../../platform/access/org-access.js';
import { randomUUID } from 'node:crypto';
import type { Insertable } from 'kysely';
import type { Clock } from '../../shared/clock.js';
import type { Db } from '../../db/database.js';
import type { OrganizationUsersTable } from '../../db/schema.js';
import { isUniqueViolation } from '../../db/dialect.js';
import type { UserCaller } from '../../http/request-context.js';
import { BadRequest, NotFound } from '../../http/errors.js';
import { findUserByEmail, findUserById, touchAccountRevision } from '../../platform/auth/users.repository.js';
import { normalizeEmail } from '../../platform/auth/kdf.js';
import type { AuditLog } from '../../platform/audit/audit-log.js';
import type { Executor } from '../../db/database.js';
import { EventType } from '../../platform/audit/event-type.js';
import type { SigningKeys } from '../../platform/auth/signing-keys.js';
import { sendOrFail } from '../mail/delivery.js';
import type { MailLog, Mailer } from '../mail/mailer.js';
import { INVITE_TOKEN_TYP } from '../organizations/invitations.js';
import { OrganizationUserStatusType } from '../../platform/access/roles.js';
import { findPolicy } from '../policies/policies.repository.js';
import { autoEnrollsInRecovery } from '../policies/policy-data.js';
import { PolicyType } from '../policies/policy-type.js';
import { endGrantsOnJoin } from '../emergency-access/emergency-access-joins.js';
import { assertCanManage, joinPolicyError, lockOrganization, seatError, smSeatError, validateAssignment } from './member-rules.js';
import {
  findMember,
  findMemberById,
  findMembers,
  insertMembers,
  knownEmails,
  membershipsOfUser,
  replaceMemberCollections,
  replaceMemberGroups,
  updateMember,
  type MemberRow,
} from './members.repository.js';
import { bulkResult, type BulkResult, type InviteBody } from './members.schemas.js';
import { type OrganizationRow, findOrganization } from '../../platform/access/memberships.js';

const INVITE_LIFETIME_SECONDS = 5 * 24 * 60 * 60;

export interface InviteDeps {
  db: Db;
  clock: Clock;
  audit: AuditLog;
  keys: SigningKeys;
  mailer: Mailer;
  publicUrl: string;
  /** The deployment variant, which words some refusals (past the Secrets Manager seats). */
  selfHosted: boolean;
}

async function organizationOrThrow(db: Executor, organizationId: string): Promise<OrganizationRow> {
  const org = await findOrganization(db, organizationId);
  if (!org) throw new NotFound();
  return org;
}

export function createInviteMembers(deps: InviteDeps) {
  const { db, clock, audit, keys, mailer } = deps;

  /** Mails each invited member a signed, expiring link to the web vault's accept page. */
  async function sendInvitations(org: OrganizationRow, members: readonly MemberRow[], log: MailLog): Promise<void> {
    for (const member of members) {
      if (!member.email) continue;
      const token = await keys.sign({ orgUserId: member.id, email: member.email }, { typ: INVITE_TOKEN_TYP, expiresInSeconds: INVITE_LIFETIME_SECONDS });
      const existing = await findUserByEmail(db, member.email);
      const params = new URLSearchParams({
        organizationId: org.id,
        organizationUserId: member.id,
        email: member.email,
        organizationName: org.name,
        token,
        initOrganization: 'false',
        orgUserHasExistingUser: String(existing !== undefined),
      });
      const link = `${deps.publicUrl}/#/accept-organization?${params.toString()}`;
      const text = [
        `You have been invited to join the organization "${org.name}".`,
        '',
        'Open this link to accept the invitation (it expires in 5 days):',
        link,
        '',
        `Invitation token: ${token}`,
      ].join('\n');
      await sendOrFail(mailer, { to: member.email, subject: `Join ${org.name}`, text }, log, 'invitation', 'The invitation was saved, but the mail server did not accept the message. Resend it later.');
    }
  }

  async function reinviteMembers(actor: MemberCaller, organizationId: string, ids: readonly string[]): Promise<BulkResult[]> {
    const org = await organizationOrThrow(db, organizationId);
    const found = new Map((await findMembers(db, organizationId, ids.map((id) => id.toLowerCase()))).map((m) => [m.id, m]));
    const results: BulkResult[] = [];
    const resend: MemberRow[] = [];
    for (const raw of ids) {
      const id = raw.toLowerCase();
      const member = found.get(id);
      if (!member) results.push(bulkResult(id, 'User not found.'));
      else if (member.status !== OrganizationUserStatusType.Invited) results.push(bulkResult(id, 'Only invited members can be reinvited.'));
      else {
        resend.push(member);
        results.push(bulkResult(id));
      }
    }
    await sendInvitations(org, resend, actor.log);
    return results;
  }

  return {
    /**
     * Invites each new email (addresses already in the organization are skipped) and mails the
     * invitations after commit; answers the new memberships' ids. `externalId` (the public API's)
     * is set on each new membership.
     */
    async invite(actor: MemberCaller, organizationId: string, body: InviteBody & { externalId?: string | null }): Promise<string[]> {
      const org = await organizationOrThrow(db, organizationId);
      assertCanManage(actor.membership, body.type, 'configure');
      const assignment = await validateAssignment(db, org, actor.membership, body);
      const emails = [...new Set(body.emails.map(normalizeEmail))];
      const now = clock.now().toISOString();
      let created: MemberRow[];
      try {
        created = await db.transaction().execute(async (tx) => {
          await lockOrganization(tx, org.id);
          const known = await knownEmails(tx, org.id, emails);
          const fresh = emails.filter((email) => !known.has(email));
          const seats = (await seatError(tx, org, fresh.length)) ?? (assignment.accessSecretsManager ? await smSeatError(tx, org, fresh.length, deps.selfHosted) : null);
          if (seats) throw new BadRequest(seats);
          const rows: Insertable<OrganizationUsersTable>[] = fresh.map((email) => ({
            id: randomUUID(),
            organization_id: org.id,
            user_id: null,
            email,
            key: null,
            reset_password_key: null,
            status: OrganizationUserStatusType.Invited,
            type: assignment.type,
            access_all: assignment.accessAll ?? false,
            external_id: body.externalId ?? null,
            permissions: assignment.permissions,
            access_secrets_manager: assignment.accessSecretsManager ?? false,
            creation_date: now,
            revision_date: now,
          }));
          await insertMembers(tx, rows);
          for (const row of rows) {
            if (assignment.collections?.length) await replaceMemberCollections(tx, row.id, assignment.collections);
            if (assignment.groups?.length) await replaceMemberGroups(tx, row.id, assignment.groups);
          }
          await audit.record(
            tx,
            actor.client,
            rows.map((row) => ({
              type: EventType.OrganizationUser_Invited,
              organizationId: org.id,
              organizationUserId: row.id,
              ...actingOf(actor.membership),
            })),
          );
          return rows as MemberRow[];
        });
      } catch (error) {
        // Two invitations of the same address raced; the other one won.
        if (isUniqueViolation(error)) throw BadRequest.field('emails', 'One or more of these emails were invited at the same time by another request.');
        throw error;
      }
      await sendInvitations(org, created, actor.log);
      return created.map((row) => row.id);
    },

    sendInvitations,

    async reinvite(actor: MemberCaller, organizationId: string, id: string): Promise<void> {
      const member = await findMember(db, organizationId, id);
      if (!member) throw new NotFound();
      const [result] = await reinviteMembers(actor, organizationId, [id]);
      if (result?.error) throw new BadRequest(result.error);
    },

    reinviteMany: reinviteMembers,

    /**
     * The invited account takes up its invitation: the token must be this server's, for this
     * membership, and the caller's email must be the invited one.
     */
    async accept({ userId, client }: UserCaller, organizationId: string, id: string, body: { token: string; resetPasswordKey?: string | null }): Promise<void> {
      const { token } = body;
      const member = await findMemberById(db, id);
      if (!member || member.organization_id !== organizationId) throw new NotFound();
      const payload = await keys.verify(token, { typ: INVITE_TOKEN_TYP });
      if (!payload || payload.orgUserId !== member.id || typeof payload.email !== 'string') throw new BadRequest('Invalid token.');
      const user = await findUserById(db, userId);
      if (!user) throw new NotFound();
      if (member.user_id === user.id && member.status === OrganizationUserStatusType.Accepted) {
        throw new BadRequest('Invitation already accepted. You will receive an email when your organization membership is confirmed.');
      }
      const own = await membershipsOfUser(db, user.id);
      if (own.some((m) => m.organization_id === organizationId)) throw new BadRequest('You are already part of this organization.');
      if (member.status !== OrganizationUserStatusType.Invited) throw new BadRequest('Already accepted.');
      if (!member.email || member.email !== user.email || payload.email !== member.email) throw new BadRequest('User email does not match invite.');

      const org = await organizationOrThrow(db, organizationId);
      const policy = await joinPolicyError(db, org, member, user.id, 'accept');
      if (policy) throw new BadRequest(policy);
      // Joining enrols the member in account recovery when the organization's policy says so:
      // the client sends its user key encrypted to the organization's public key.
      const enroll = Boolean(org.use_reset_password) && autoEnrollsInRecovery(await findPolicy(db, org.id, PolicyType.ResetPassword));
      const resetPasswordKey = enroll ? body.resetPasswordKey : null;
      if (enroll && !resetPasswordKey) throw BadRequest.field('resetPasswordKey', 'Master Password reset is required, but not provided.');
      const now = clock.now().toISOString();
      await db.transaction().execute(async (tx) => {
        await updateMember(tx, member.id, { status: OrganizationUserStatusType.Accepted, user_id: user.id, email: null, reset_password_key: resetPasswordKey ?? null, revision_date: now });
        await touchAccountRevision(tx, user.id, now);
        await endGrantsOnJoin(tx, audit, client, org, [user.id], { actingUserId: user.id });
        if (resetPasswordKey) {
          await audit.record(tx, client, [{ type: EventType.OrganizationUser_ResetPassword_Enroll, organizationId: org.id, organizationUserId: member.id, actingUserId: user.id }]);
        }
      });
    },
  };
}

export type InviteMembers = ReturnType<typeof createInviteMembers>;
