import { randomUUID } from 'node:crypto';
import type { Clock } from '../../shared/clock.js';
import type { Db } from '../../db/database.js';
import { isEncString } from '../../http/enc-string.js';
import { BadRequest, NotFound } from '../../http/errors.js';
import { isGuid } from '../../http/ids.js';
import type { AnonymousCaller, UserCaller } from '../../http/request-context.js';
import { safeEqual } from '../../shared/constant-time.js';
import { findDevice, findUserByEmail } from '../../platform/auth/users.repository.js';
import { normalizeEmail } from '../../platform/auth/kdf.js';
import { authRequestPush, authRequestResponsePush } from '../../platform/push/push-messages.js';
import type { Pushes } from '../../platform/push/pushes.js';
import {
  answerAuthRequest,
  findAuthRequest,
  insertAuthRequest,
  listAuthRequests,
  markAuthRequestUsed,
  pendingAuthRequests,
  type AuthRequestRow,
  type AuthRequestWithDevice,
} from './auth-requests.repository.js';
import { AuthRequestType, toAuthRequestResponse, type AnswerAuthRequestBody, type AuthRequestResponse, type CreateAuthRequestBody, type PendingAuthRequestResponse } from './auth-requests.schemas.js';

/** The official lifetime of a user's request: answered and used within 15 minutes of asking. */
export const AUTH_REQUEST_LIFETIME_MS = 15 * 60 * 1000;
/** The official lifetimes of an admin approval request: 7 days to be answered, then 12 hours to be read once approved. */
export const ADMIN_REQUEST_LIFETIME_MS = 7 * 24 * 60 * 60 * 1000;
export const APPROVED_ADMIN_REQUEST_LIFETIME_MS = 12 * 60 * 60 * 1000;

/**
 * Whether a request is past its official lifetime at `now`: a device's request 15 minutes after
 * it was made; an admin approval request 7 days after it was made while unanswered or denied, and
 * 12 hours after its approval once approved (the official server deletes such rows; here they stay
 * and answer as missing).
 */
export function authRequestExpired(row: Pick<AuthRequestRow, 'type' | 'approved' | 'creation_date' | 'response_date'>, now: Date): boolean {
  const at = now.getTime();
  if (row.type !== (AuthRequestType.AdminApproval as number)) return at > Date.parse(row.creation_date) + AUTH_REQUEST_LIFETIME_MS;
  if (row.approved && row.response_date) return at > Date.parse(row.response_date) + APPROVED_ADMIN_REQUEST_LIFETIME_MS;
  return at > Date.parse(row.creation_date) + ADMIN_REQUEST_LIFETIME_MS;
}

/** The official texts. */
export const AUTH_REQUEST_TEXTS = {
  adminApproval: 'You must be authenticated to create a request of that type.',
  noDeviceType: 'Device type not provided.',
  unknownUser: 'User or known device not found.',
  answered: 'An authentication request with the same device already exists.',
  notNewest: 'This request is no longer valid. Make sure to approve the most recent request.',
  invalidDevice: 'Invalid device.',
} as const;

/**
 * Log in with a device. A device that cannot log in by itself asks by email (anonymously)
 * with a public key and a secret access code; the user's logged-in devices are told
 * (AuthRequest push) and one approves it by sending the user key encrypted to that public key
 * (or denies it); the asking device, told by the anonymous hub (AuthRequestResponse push) or
 * polling with its access code, reads the answer and logs in once with the access code as its
 * password (identity password grant with `AuthRequest`). Everything must happen within 15
 * minutes of asking. Admin approval requests (type 2) are made and answered in admin-requests.service.ts.
 */
export function createAuthRequestService(deps: { db: Db; clock: Clock; pushes: Pushes; knownDevicesOnly: boolean; origin: string }) {
  const { db, clock, pushes } = deps;

  const expired = (row: AuthRequestRow) => authRequestExpired(row, clock.now());

  const pending = (userId: string) => pendingAuthRequests(db, userId, new Date(clock.now().getTime() - AUTH_REQUEST_LIFETIME_MS).toISOString());

  const answerOf = (row: AuthRequestWithDevice) => toAuthRequestResponse(row, deps.origin);

  async function ownOrThrow(userId: string, id: string): Promise<AuthRequestWithDevice> {
    const row = await findAuthRequest(db, id.toLowerCase());
    if (!row || row.user_id !== userId) throw new NotFound();
    return row;
  }

  return {
    /** `POST /auth-requests`, anonymous. Unknown emails (and, with knownDevicesOnly, unknown devices) get one answer, so nothing leaks. */
    async create({ client }: AnonymousCaller, body: CreateAuthRequestBody): Promise<AuthRequestResponse> {
      if (body.type === (AuthRequestType.AdminApproval as number)) throw new BadRequest(AUTH_REQUEST_TEXTS.adminApproval);
      if (client.deviceType === null) throw new BadRequest(AUTH_REQUEST_TEXTS.noDeviceType);
      const user = await findUserByEmail(db, normalizeEmail(body.email));
      const device = user ? await findDevice(db, user.id, body.deviceIdentifier) : undefined;
      if (!user || (deps.knownDevicesOnly && !device)) throw new BadRequest(AUTH_REQUEST_TEXTS.unknownUser);
      const row: AuthRequestRow = {
        id: randomUUID(),
        user_id: user.id,
        type: body.type,
        request_device_identifier: body.deviceIdentifier,
        request_device_type: client.deviceType,
        request_ip_address: client.ipAddress?.slice(0, 50) ?? null,
        response_device_id: null,
        access_code: body.accessCode,
        public_key: body.publicKey,
        key: null,
        master_password_hash: null,
        approved: null,
        creation_date: clock.now().toISOString(),
        response_date: null,
        authentication_date: null,
        organization_id: null,
      };
      await insertAuthRequest(db, row);
      // The asking device is anonymous: its identifier comes from the Device-Identifier header.
      pushes.send(authRequestPush(row, client.deviceIdentifier));
      return answerOf({ ...row, request_device_id: device?.id ?? null });
    },

    list: async ({ userId }: UserCaller) => (await listAuthRequests(db, userId)).map(answerOf),

    async pending({ userId }: UserCaller): Promise<PendingAuthRequestResponse[]> {
      return (await pending(userId)).map(answerOf);
    },

    /**
     * One of the caller's requests. An admin approval request past its lifetime answers 404, as
     * the official server has deleted it by then: the client then asks anew.
     */
    async get({ userId }: UserCaller, id: string): Promise<AuthRequestResponse> {
      const row = await ownOrThrow(userId, id);
      if (row.type === (AuthRequestType.AdminApproval as number) && expired(row)) throw new NotFound();
      return answerOf(row);
    },

    /**
     * `PUT /auth-requests/{id}`: one answer per request, from one of the user's devices, within
     * the lifetime. An approval must be of the newest request of its asking device and carry the
     * key. Only an approval is pushed to the asking device, as officially (a denial is not told
     * to a possibly malicious asker).
     */
    async answer({ userId, client }: UserCaller, id: string, body: AnswerAuthRequestBody): Promise<AuthRequestResponse> {
      const row = await ownOrThrow(userId, id);
      if (body.requestApproved) {
        const newest = (await pending(userId)).find((p) => p.request_device_identifier === row.request_device_identifier);
        if (newest?.id !== row.id) throw new BadRequest(AUTH_REQUEST_TEXTS.notNewest);
        if (!body.key || !isEncString(body.key)) throw BadRequest.field('key', 'An approval must carry the user key encrypted to the request\'s public key.');
      }
      if (row.approved !== null) throw new BadRequest(AUTH_REQUEST_TEXTS.answered);
      if (expired(row)) throw new NotFound();
      const device = await findDevice(db, userId, body.deviceIdentifier);
      if (!device) throw new BadRequest(AUTH_REQUEST_TEXTS.invalidDevice);
      const answer = {
        approved: body.requestApproved,
        response_date: clock.now().toISOString(),
        response_device_id: device.id,
        key: body.requestApproved ? (body.key ?? null) : null,
        master_password_hash: body.requestApproved ? (body.masterPasswordHash ?? null) : null,
      };
      if (!(await answerAuthRequest(db, row.id, answer))) throw new BadRequest(AUTH_REQUEST_TEXTS.answered);
      const answered = { ...row, ...answer };
      if (body.requestApproved) pushes.send(authRequestResponsePush(answered, client.deviceIdentifier));
      return answerOf(answered);
    },

    /** `GET /auth-requests/{id}/response?code=`, anonymous: 404 unless the code matches and the request is within its lifetime. */
    async response(id: string, code: string): Promise<AuthRequestResponse> {
      const row = await findAuthRequest(db, id.toLowerCase());
      if (!row || !safeEqual(row.access_code, code) || expired(row)) throw new NotFound();
      return answerOf(row);
    },

    /**
     * The identity password grant's check when it carries `AuthRequest`: the request is the
     * user's, approved, a log-in request (not unlock only), unused, within its lifetime, and the
     * password is its access code.
     */
    async validForLogin(userId: string, id: string, accessCode: string): Promise<boolean> {
      if (!isGuid(id)) return false;
      const row = await findAuthRequest(db, id.toLowerCase());
      return Boolean(
        row &&
          row.user_id === userId &&
          row.response_date !== null &&
          Boolean(row.approved) &&
          row.type === (AuthRequestType.AuthenticateAndUnlock as number) &&
          row.authentication_date === null &&
          !expired(row) &&
          safeEqual(row.access_code, accessCode),
      );
    },

    /** Spends a request on a successful login; false when another login spent it first. */
    markUsed: (id: string) => markAuthRequestUsed(db, id.toLowerCase(), clock.now().toISOString()),
  };
}

export type AuthRequestService = ReturnType<typeof createAuthRequestService>;
