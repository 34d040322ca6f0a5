import { createHash, randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { Clock } from '../../shared/clock.js';
import type { Db } from '../../db/database.js';
import { NotFound, TooManyRequests, Unauthorized, BadRequest } from '../../http/errors.js';
import { OAuthError } from '../../http/error-handler.js';
import type { AnonymousCaller, ClientContext } from '../../http/request-context.js';
import type { PasswordHasher } from '../../platform/auth/password-hasher.js';
import type { AuditLog } from '../../platform/audit/audit-log.js';
import type { Executor } from '../../db/database.js';
import type { FileStore } from '../../platform/storage/file-store.js';
import type { SigningKeys } from '../../platform/auth/signing-keys.js';
import type { TokenForm } from '../identity/identity.service.js';
import { PushType, type Pushes } from '../../platform/push/pushes.js';
import type { LimitStore } from '../rate-limits/limit-store.js';
import { keyDigest } from '../rate-limits/rate-limits.js';
import { idOfAccessId } from './send-id.js';
import { addDownload, countAccess, findSend, useDownload } from './sends.repository.js';
import { parseSendData, SendType, toSendAccessResponse, type SendRow } from './sends.schemas.js';
import { sendFileKey } from '../../platform/storage/store-layout.js';
import { sendEventType, sendPush } from './sends.service.js';
import { parseEmails } from './send-auth.js';
import type { SendCodes } from './send-codes.js';

export interface SendAccessDeps {
  db: Db;
  audit: AuditLog;
  clock: Clock;
  pushes: Pushes;
  hasher: PasswordHasher;
  store: FileStore;
  keys: SigningKeys;
  apiBase: string;
  /** The rate-limit store (Redis or this process) and the accesses one address may make a minute. */
  limits: LimitStore;
  perMinute: number;
  /** The codes mailed to the addresses of email-verified Sends. */
  codes: SendCodes;
}

export const SEND_ACCESS_TOKEN_TYP = 'strongroom-send-access';
export const SEND_DOWNLOAD_TOKEN_TYP = 'strongroom-send-download';
const ACCESS_TOKEN_SECONDS = 5 * 60;
const DOWNLOAD_URL_SECONDS = 60;

/** The identity answer's `send_access_error_type` the official clients branch on. */
function grantError(error: 'invalid_request' | 'invalid_grant', type: string, description: string): OAuthError {
  return new OAuthError(error, description, description, 400, { send_access_error_type: type });
}

/**
 * What a Send access token is bound to: a digest of the Send's password as stored (a salted
 * hash, so a new password, even the same one again, gives a new digest), of its having none, or
 * of its being email-verified (the token also names its address, which must still be listed).
 * A token whose digest is no longer the Send's stops working at once, so a password added or
 * changed shuts out whoever was let in before. Disabling, deletion, expiry and running out of
 * accesses need no binding: every use checks them.
 */
function authStamp(row: Pick<SendRow, 'password_hash' | 'emails'>): string {
  const auth = row.emails ? 'send-auth-email' : `send-auth:${row.password_hash ?? ''}`;
  return createHash('sha256').update(auth).digest('base64url').slice(0, 22);
}

/** The answer to every email step short of a token: listed or not, code wrong, used or expired alike. */
const emailAndOtpRequired = () => grantError('invalid_request', 'email_and_otp_required', 'email and otp are required.');

export function canBeAccessed(row: SendRow, now: Date): boolean {
  const at = now.toISOString();
  if (row.disabled) return false;
  if (row.max_access_count !== null && Number(row.access_count) >= row.max_access_count) return false;
  if (row.expiration_date && row.expiration_date <= at) return false;
  return row.deletion_date > at;
}

/**
 * Anonymous access to Sends: the older routes with the password hash in the body
 * (`/sends/access/{accessId}`, `/sends/{accessId}/access/file/{fileId}`) and the current flow of
 * the official clients (a `send_access` token from the identity service, then `/sends/access`
 * and `/sends/access/file/{fileId}` with it). A Send that is missing, disabled, expired, past
 * its deletion date or out of accesses answers 404 whatever else is wrong; a text Send counts
 * an access when read, a file Send when its file is fetched. Every access is limited per
 * client address.
 */
export function createSendAccess(deps: SendAccessDeps) {
  const { db, audit, clock, pushes, hasher, store, keys, apiBase } = deps;

  async function limit(client: ClientContext): Promise<void> {
    if (deps.perMinute <= 0) return;
    const address = client.ipAddress ?? 'unknown';
    const bucket = { key: `send-access:${keyDigest(address)}`, intervalMs: 60_000 / deps.perMinute, burst: deps.perMinute };
    const decision = await deps.limits.consume([bucket], clock.now().getTime());
    if (!decision.allowed) throw new TooManyRequests(undefined, Math.max(1, Math.ceil(decision.retryAfterMs / 1000)));
  }

  async function accessible(id: string | null): Promise<SendRow> {
    const row = id ? await findSend(db, id) : undefined;
    if (!row || !canBeAccessed(row, clock.now())) throw new NotFound();
    return row;
  }

  /** The older routes' password check: 401 without one, 400 for a wrong one. */
  async function checkPassword(row: SendRow, password: string | null | undefined): Promise<void> {
    // Those routes carry no address or code, so an email-verified Send cannot be opened through them.
    if (row.emails) throw new BadRequest('This Send is protected by email verification. Open it with a current Bitwarden app.');
    if (!row.password_hash) return;
    if (!password) throw new Unauthorized('Password is required.');
    if (!(await hasher.verify(password, row.password_hash))) throw new BadRequest('Invalid password.');
  }

  /**
   * Counts one access (refusing a Send that ran out meanwhile), records it, does `also` in the
   * same transaction and tells the owner's devices.
   */
  async function counted(row: SendRow, client: ClientContext, also?: (tx: Executor, now: string) => Promise<void>): Promise<void> {
    const now = clock.now().toISOString();
    await db.transaction().execute(async (tx) => {
      if (!(await countAccess(tx, row.id, now))) throw new NotFound();
      await audit.record(tx, client, { type: sendEventType('accessed', row), userId: row.user_id, sendId: row.id });
      if (also) await also(tx, now);
    });
    pushes.send(sendPush(PushType.SyncSendUpdate, { ...row, revision_date: now }, null));
  }

  async function view(row: SendRow, client: ClientContext) {
    if (row.type === (SendType.Text as number)) await counted(row, client);
    let creator: string | null = null;
    if (!row.hide_email) {
      const user = await db.selectFrom('users').select('email').where('id', '=', row.user_id).executeTakeFirst();
      creator = user?.email ?? null;
    }
    return toSendAccessResponse(row, creator);
  }

  async function fileUrl(row: SendRow, fileId: string, client: ClientContext) {
    const file = parseSendData(row.data).file;
    if (!file || file.id !== fileId || !file.validated) throw new NotFound();
    // The URL is good for one download, whichever instance serves it: a row the download deletes.
    const download = randomUUID();
    await counted(row, client, (tx, now) =>
      addDownload(tx, { id: download, send_id: row.id, expiration_date: new Date(Date.parse(now) + DOWNLOAD_URL_SECONDS * 1000).toISOString() }, now),
    );
    const token = await keys.sign({ sid: row.id, fid: fileId, dl: download }, { typ: SEND_DOWNLOAD_TOKEN_TYP, expiresInSeconds: DOWNLOAD_URL_SECONDS });
    return { object: 'send-fileDownload' as const, id: fileId, url: `${apiBase}/sends/file/download?token=${encodeURIComponent(token)}` };
  }

  async function tokenSend(token: string | null): Promise<SendRow> {
    const payload = token ? await keys.verify(token, { typ: SEND_ACCESS_TOKEN_TYP }) : null;
    if (!payload || typeof payload.send_id !== 'string') throw new Unauthorized();
    const row = await findSend(db, payload.send_id);
    if (!row) throw new BadRequest('Could not locate send');
    // As for a token that expired: the client asks for a new one, which the password now decides.
    if (payload.auth !== authStamp(row)) throw new Unauthorized();
    if (row.emails && (typeof payload.email !== 'string' || !parseEmails(row.emails).includes(payload.email))) throw new Unauthorized();
    if (!canBeAccessed(row, clock.now())) throw new NotFound();
    return row;
  }

  return {
    /** `POST /sends/access/{accessId}` (older clients): the Send, with the password hash in the body when it has one. */
    async accessLegacy({ client }: AnonymousCaller, accessId: string, password: string | null | undefined) {
      await limit(client);
      const row = await accessible(idOfAccessId(accessId));
      await checkPassword(row, password);
      return view(row, client);
    },

    /** `POST /sends/{accessId}/access/file/{fileId}` (older clients): a download URL for the file. */
    async fileLegacy({ client }: AnonymousCaller, accessId: string, fileId: string, password: string | null | undefined) {
      await limit(client);
      const row = await accessible(idOfAccessId(accessId));
      await checkPassword(row, password);
      return fileUrl(row, fileId, client);
    },

    /**
     * The identity service's `send_access` grant: a short-lived token for one Send, given at once
     * without a password, for the right `password_hash_b64`, or for an `email` on the Send's list
     * with the `otp` last mailed to it (asked for with the `email` alone); the errors carry
     * `send_access_error_type` as the official server's do.
     */
    async grant({ client, log }: AnonymousCaller, form: TokenForm): Promise<Record<string, unknown>> {
      try {
        await limit(client);
      } catch {
        throw new OAuthError('slow_down', 'Too many requests. Try again later.', 'Too many requests. Try again later.', 429);
      }
      const accessId = form.send_id;
      if (!accessId) throw grantError('invalid_request', 'send_id_required', 'send_id is required.');
      const id = idOfAccessId(accessId);
      const row = id ? await findSend(db, id) : undefined;
      if (!row || !canBeAccessed(row, clock.now())) throw grantError('invalid_grant', 'send_id_invalid', 'send_id is invalid.');
      let email: string | undefined;
      if (row.emails) {
        email = form.email?.trim().toLowerCase();
        if (!email) throw grantError('invalid_request', 'email_required', 'email is required.');
        const listed = parseEmails(row.emails).includes(email);
        if (!form.otp) {
          // Issued after the answer: the limit check and the upsert would otherwise make a listed
          // address answer slower than another one. A failure is only logged.
          if (listed) void deps.codes.issue(row.id, email, log).catch((err: unknown) => log.warn({ err }, 'Send verification code not issued'));
          throw emailAndOtpRequired();
        }
        if (!listed || !(await deps.codes.use(row.id, email, form.otp))) throw emailAndOtpRequired();
      } else if (row.password_hash) {
        const given = form.password_hash_b64;
        if (given === undefined) throw grantError('invalid_request', 'password_hash_b64_required', 'password_hash_b64 is required.');
        if (!(await hasher.verify(given, row.password_hash))) throw grantError('invalid_grant', 'password_hash_b64_invalid', 'password_hash_b64 is invalid.');
      }
      const claims = { send_id: row.id, auth: authStamp(row), scope: ['api.send.access'], ...(email ? { email } : {}) };
      const token = await keys.sign(claims, { typ: SEND_ACCESS_TOKEN_TYP, expiresInSeconds: ACCESS_TOKEN_SECONDS });
      return { access_token: token, expires_in: ACCESS_TOKEN_SECONDS, token_type: 'Bearer', scope: 'api.send.access' };
    },

    /** `POST /sends/access` with a `send_access` token. */
    async accessWithToken({ client }: AnonymousCaller, token: string | null) {
      await limit(client);
      return view(await tokenSend(token), client);
    },

    /** `POST /sends/access/file/{fileId}` with a `send_access` token. */
    async fileWithToken({ client }: AnonymousCaller, token: string | null, fileId: string) {
      await limit(client);
      return fileUrl(await tokenSend(token), fileId, client);
    },

    /**
     * `GET /sends/file/download?token=…`: the file's bytes for a download URL this server signed,
     * once, while the Send may still be read (the access that handed out the URL counted already).
     */
    async download(token: string): Promise<{ stream: Readable; size: number }> {
      const payload = await keys.verify(token, { typ: SEND_DOWNLOAD_TOKEN_TYP });
      const gone = 'The download link is invalid, used or expired.';
      if (!payload || typeof payload.sid !== 'string' || typeof payload.fid !== 'string' || typeof payload.dl !== 'string') throw new NotFound(gone);
      if (!(await useDownload(db, payload.dl, payload.sid, clock.now().toISOString()))) throw new NotFound(gone);
      const file = await store.get(sendFileKey(payload.sid, payload.fid));
      if (!file) throw new NotFound();
      return file;
    },
  };
}

export type SendAccess = ReturnType<typeof createSendAccess>;
