import { randomUUID } from 'node:crypto';
import type { Db, Executor } from '../../db/database.js';
import { BadRequest, NotFound } from '../../http/errors.js';
import type { UserCaller } from '../../http/request-context.js';
import { actingOf, type MemberCaller } from '../../platform/access/org-access.js';
import type { AuditEvent, AuditLog } from '../../platform/audit/audit-log.js';
import { EventType } from '../../platform/audit/event-type.js';
import { normalizeEmail } from '../../platform/auth/kdf.js';
import { findDevice, findUserByEmail } from '../../platform/auth/users.repository.js';
import { authRequestResponsePush } from '../../platform/push/push-messages.js';
import type { Pushes } from '../../platform/push/pushes.js';
import type { Clock } from '../../shared/clock.js';
import { mayRecover } from '../account-recovery/account-recovery.service.js';
import { answerAuthRequest, insertAuthRequest, type AuthRequestRow } from './auth-requests.repository.js';
import { AuthRequestType, toAuthRequestResponse, type AuthRequestResponse, type CreateAuthRequestBody } from './auth-requests.schemas.js';
import { ADMIN_REQUEST_LIFETIME_MS, AUTH_REQUEST_TEXTS, authRequestExpired } from './auth-requests.service.js';
import type { AdminRequestMail } from './admin-requests.mail.js';
import { approvingMemberships, findAdminRequests, hasMemberships, pendingAdminRequests, pendingRequestsOfDevice, refreshPendingRequest, type AdminRequestRow } from './admin-requests.repository.js';
import { toPendingOrganizationAuthRequest, type AdminAnswerBody, type AdminAnswerManyBody, type PendingOrganizationAuthRequestResponse } from './admin-requests.schemas.js';

/** The official texts, and Strongroom's own where the official server has none. */
export const ADMIN_REQUEST_TEXTS = {
  wrongType: 'Invalid AuthRequestType. Expected AdminApproval.',
  noOrganizations: 'User does not belong to any organizations.',
  /** Strongroom's own: the official server asks every organization, enrolled or not. */
  notEnrolled: 'No organization of yours can approve this device: enroll in account recovery first.',
  missingKey: "An approval must carry the member's user key encrypted to the request's public key.",
} as const;

interface Answer {
  row: AdminRequestRow;
  approved: boolean;
  key: string | null;
}

/**
 * Device approvals by organization admins (trusted device encryption). A member signed in
 * through SSO on a new device, with no key there, asks (`POST /auth-requests/admin-request`,
 * type 2) the organizations that can unwrap their user key: those they are enrolled in account
 * recovery with, whose approvers are mailed. An admin holding manageResetPassword unwraps it with the organization key and
 * approves by sending it wrapped with the request's public key, or denies; the member's device,
 * told by the anonymous hub (AuthRequestResponse) and mailed, reads the answer with its token
 * (`GET /auth-requests/{id}`) and unwraps the user key. A request is answerable for 7 days and an
 * approval readable for 12 hours, as officially.
 */
export function createAdminRequestService(deps: { db: Db; clock: Clock; audit: AuditLog; pushes: Pushes; mail: AdminRequestMail; knownDevicesOnly: boolean; origin: string }) {
  const { db, clock, audit, pushes } = deps;

  /** Writes the answers still possible (unanswered, within the lifetime) and their events; the answers written. */
  async function write(tx: Executor, actor: MemberCaller, answers: readonly Answer[], now: string): Promise<Answer[]> {
    const written: Answer[] = [];
    for (const answer of answers) {
      const set = { approved: answer.approved, response_date: now, key: answer.approved ? answer.key : null, master_password_hash: null };
      if (await answerAuthRequest(tx, answer.row.id, set)) written.push(answer);
    }
    const events: AuditEvent[] = written.map(({ row, approved }) => ({
      type: approved ? EventType.OrganizationUser_ApprovedAuthRequest : EventType.OrganizationUser_RejectedAuthRequest,
      organizationId: row.organization_id,
      organizationUserId: row.organization_user_id,
      ...actingOf(actor.membership),
    }));
    if (events.length > 0) await audit.record(tx, actor.client, events);
    return written;
  }

  /**
   * Only an approval is pushed to the asking device, as officially (a denial is not told to a
   * possible impostor); the member is mailed of it.
   */
  async function tellApprovals({ client, log }: MemberCaller, written: readonly Answer[], now: string): Promise<void> {
    const approvals = written.filter((a) => a.approved);
    pushes.send(approvals.map((a) => authRequestResponsePush(a.row, client.deviceIdentifier)));
    for (const { row } of approvals) await deps.mail.approved(row.email, { ...row, response_date: now }, log);
  }

  const unanswerable = (row: AdminRequestRow, now: Date) => row.approved !== null || row.response_date !== null || row.authentication_date !== null || authRequestExpired(row, now);

  /**
   * The requests the caller may answer: approving hands over the member's user key, as a recovery
   * does, so the account recovery rule applies (an owner's only by an owner, an admin's only by
   * an owner or admin); the others do not exist for the caller.
   */
  const answerable = (actor: MemberCaller, rows: readonly AdminRequestRow[]) => rows.filter((row) => mayRecover(actor.membership, row.organization_user_type));

  return {
    /**
     * `POST /auth-requests/admin-request`: one request per organization that can answer, in one
     * transaction with User_RequestedDeviceApproval (1010) for the user and for each of them; the
     * answer is the first request, as officially. A device that asks again while its request to
     * an organization is unanswered and unexpired gets that request back, with the key and
     * access code it sent now (the clients make a new key pair each time they ask): no new row,
     * event or mail, so asking over and over does not flood the admins.
     */
    async create({ userId, client, log }: UserCaller, body: CreateAuthRequestBody): Promise<AuthRequestResponse> {
      if (body.type !== (AuthRequestType.AdminApproval as number)) throw new BadRequest(ADMIN_REQUEST_TEXTS.wrongType);
      if (client.deviceType === null) throw new BadRequest(AUTH_REQUEST_TEXTS.noDeviceType);
      const user = await findUserByEmail(db, normalizeEmail(body.email));
      // The request is for the caller's own account: another email answers like an unknown one, as officially.
      if (!user || user.id !== userId) throw new BadRequest(AUTH_REQUEST_TEXTS.unknownUser);
      const device = await findDevice(db, user.id, body.deviceIdentifier);
      if (deps.knownDevicesOnly && !device) throw new BadRequest(AUTH_REQUEST_TEXTS.unknownUser);
      const memberships = await approvingMemberships(db, user.id);
      if (memberships.length === 0) throw new BadRequest((await hasMemberships(db, user.id)) ? ADMIN_REQUEST_TEXTS.notEnrolled : ADMIN_REQUEST_TEXTS.noOrganizations);
      const now = clock.now();
      const since = new Date(now.getTime() - ADMIN_REQUEST_LIFETIME_MS).toISOString();
      const asked = {
        public_key: body.publicKey,
        access_code: body.accessCode,
        request_device_type: client.deviceType ?? 0,
        request_ip_address: client.ipAddress?.slice(0, 50) ?? null,
      };
      const { rows, made } = await db.transaction().execute(async (tx) => {
        const pending = await pendingRequestsOfDevice(tx, user.id, body.deviceIdentifier, since);
        const rows: AuthRequestRow[] = [];
        const made: { organization_id: string; type: number }[] = [];
        for (const membership of memberships) {
          const open = pending.get(membership.organization_id);
          if (open && (await refreshPendingRequest(tx, open.id, asked))) {
            rows.push({ ...open, ...asked });
            continue;
          }
          const row: AuthRequestRow = {
            id: randomUUID(),
            user_id: user.id,
            type: AuthRequestType.AdminApproval,
            request_device_identifier: body.deviceIdentifier,
            ...asked,
            response_device_id: null,
            key: null,
            master_password_hash: null,
            approved: null,
            creation_date: now.toISOString(),
            response_date: null,
            authentication_date: null,
            organization_id: membership.organization_id,
          };
          await insertAuthRequest(tx, row);
          rows.push(row);
          made.push(membership);
        }
        if (made.length > 0) {
          const requested = { type: EventType.User_RequestedDeviceApproval, userId: user.id, actingUserId: user.id };
          await audit.record(tx, client, [requested, ...made.map((m) => ({ ...requested, organizationId: m.organization_id }))]);
        }
        return { rows, made };
      });
      for (const m of made) await deps.mail.requested(m.organization_id, { ...user, type: m.type }, log);
      const [first] = rows;
      if (!first) throw new Error('no request was made');
      return toAuthRequestResponse({ ...first, request_device_id: device?.id ?? null }, deps.origin);
    },

    /** `GET /organizations/{orgId}/auth-requests`: the unanswered requests of the last 7 days the caller may answer. */
    async pending(actor: MemberCaller, organizationId: string): Promise<PendingOrganizationAuthRequestResponse[]> {
      const since = new Date(clock.now().getTime() - ADMIN_REQUEST_LIFETIME_MS).toISOString();
      return answerable(actor, await pendingAdminRequests(db, organizationId, since)).map(toPendingOrganizationAuthRequest);
    },

    /**
     * `POST /organizations/{orgId}/auth-requests/{id}`: 404 for a request of another organization
     * or type, of a member the caller may not recover, or past its 7 days; 400 once answered; an
     * approval needs the key.
     */
    async answer(actor: MemberCaller, organizationId: string, id: string, body: AdminAnswerBody): Promise<void> {
      const key = body.encryptedUserKey ?? null;
      if (body.requestApproved && !key) throw BadRequest.field('encryptedUserKey', ADMIN_REQUEST_TEXTS.missingKey);
      const now = clock.now();
      const written = await db.transaction().execute(async (tx) => {
        const [row] = answerable(actor, await findAdminRequests(tx, organizationId, [id]));
        if (!row) throw new NotFound();
        if (row.approved !== null) throw new BadRequest(AUTH_REQUEST_TEXTS.answered);
        if (authRequestExpired(row, now)) throw new NotFound();
        const done = await write(tx, actor, [{ row, approved: body.requestApproved, key }], now.toISOString());
        if (done.length === 0) throw new BadRequest(AUTH_REQUEST_TEXTS.answered);
        return done;
      });
      await tellApprovals(actor, written, now.toISOString());
    },

    /**
     * `POST /organizations/{orgId}/auth-requests`: answers several at once. As officially, a
     * request that cannot be answered (unknown, another organization's, a member's the caller may
     * not recover, answered, expired) is
     * skipped and the rest go through; an approval without its key is bad input (400 naming it),
     * and then nothing is written.
     */
    async answerMany(actor: MemberCaller, organizationId: string, body: AdminAnswerManyBody): Promise<void> {
      body.forEach((item, index) => {
        if (item.approved && !item.key) throw BadRequest.field(`[${index}].key`, ADMIN_REQUEST_TEXTS.missingKey);
      });
      const byId = new Map<string, AdminAnswerManyBody[number]>();
      for (const item of body) if (!byId.has(item.id.toLowerCase())) byId.set(item.id.toLowerCase(), item);
      const now = clock.now();
      const written = await db.transaction().execute(async (tx) => {
        const rows = answerable(actor, await findAdminRequests(tx, organizationId, [...byId.keys()])).filter((row) => !unanswerable(row, now));
        const answers = rows.map((row) => {
          const item = byId.get(row.id);
          return { row, approved: Boolean(item?.approved), key: item?.key ?? null };
        });
        return write(tx, actor, answers, now.toISOString());
      });
      await tellApprovals(actor, written, now.toISOString());
    },

    /**
     * `POST /organizations/{orgId}/auth-requests/deny`: ids of other organizations are skipped as
     * officially, and so are those of members the caller may not recover; an answered request refuses the whole batch (400) and an expired one 404, as the
     * official per-request update does, but here before anything is written.
     */
    async deny(actor: MemberCaller, organizationId: string, ids: readonly string[]): Promise<void> {
      const unique = [...new Set(ids.map((id) => id.toLowerCase()))];
      await db.transaction().execute(async (tx) => {
        const now = clock.now();
        const rows = answerable(actor, await findAdminRequests(tx, organizationId, unique));
        if (rows.some((row) => row.approved !== null)) throw new BadRequest(AUTH_REQUEST_TEXTS.answered);
        if (rows.some((row) => authRequestExpired(row, now))) throw new NotFound();
        const written = await write(tx, actor, rows.map((row) => ({ row, approved: false, key: null })), now.toISOString());
        if (written.length !== rows.length) throw new BadRequest(AUTH_REQUEST_TEXTS.answered);
      });
    },
  };
}

export type AdminRequestService = ReturnType<typeof createAdminRequestService>;
