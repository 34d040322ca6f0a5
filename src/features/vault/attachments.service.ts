import type { Readable } from 'node:stream';
import type { Clock } from '../../shared/clock.js';
import type { Db } from '../../db/database.js';
import { BadRequest, NotFound } from '../../http/errors.js';
import type { ClientContext, UserCaller } from '../../http/request-context.js';
import type { AuditLog } from '../../platform/audit/audit-log.js';
import { EventType } from '../../platform/audit/event-type.js';
import type { SigningKeys } from '../../platform/auth/signing-keys.js';
import { cipherPushes, sendBuilt } from '../../platform/push/push-messages.js';
import { PushType, type Pushes } from '../../platform/push/pushes.js';
import { accessibleCipher, cipherEvents, touchRevisions } from './cipher-access.js';
import { cipherAsAdmin } from './admin-ciphers.js';
import { confirmedMembership } from '../../platform/access/org-access.js';
import type { Executor } from '../../db/database.js';
import type { CipherRow } from './ciphers.repository.js';
import { assertCurrent } from './ciphers.service.js';
import { countedBytes, namedFiles, parseAttachments, serializeAttachments, storedFileOf, toAttachmentResponse, type AttachmentMeta, type AttachmentResponse } from './attachment-data.js';
import { lockCipher, setAttachments, storedAttachments } from './attachments.repository.js';
import { assertOrganizationRoom, assertStorageRoom, releaseStorage, reserveStorage } from '../../platform/storage/quota.js';
import { FileUploadType, type AttachmentRequest } from './attachments.schemas.js';
import { cipherJson, cipherMiniJson } from './ciphers.schemas.js';
import { FileTooLarge, type FileStore } from '../../platform/storage/file-store.js';
import type { UploadedFile } from '../../platform/storage/multipart.js';
import { fileKey, newFileId } from '../../platform/storage/store-layout.js';

export interface AttachmentDeps {
  db: Db;
  audit: AuditLog;
  clock: Clock;
  pushes: Pushes;
  store: FileStore;
  keys: SigningKeys;
  /** The API's public base URL (attachment-data.ts apiBaseUrl). */
  apiBase: string;
  userQuotaBytes: number;
  maxFileBytes: number;
}

/** How long an upload URL stays good; `GET …/renew` gives a new one. */
export const UPLOAD_WINDOW_MS = 60 * 60 * 1000;
/** How long a download URL stays good (the official server's is one minute). */
export const DOWNLOAD_URL_SECONDS = 60;
export const DOWNLOAD_TOKEN_TYP = 'strongroom-attachment-download';

/** An attachment's answer with the URL of the download route, signed for a minute (the reader checked access). */
export async function signedDownload(keys: SigningKeys, apiBase: string, cipherId: string, attachmentId: string, meta: AttachmentMeta): Promise<AttachmentResponse> {
  const token = await keys.sign({ cid: cipherId, aid: attachmentId }, { typ: DOWNLOAD_TOKEN_TYP, expiresInSeconds: DOWNLOAD_URL_SECONDS });
  return toAttachmentResponse(attachmentId, meta, `${apiBase}/ciphers/attachment/download?token=${encodeURIComponent(token)}`);
}


/**
 * How the caller reaches an item: as a member (their own item, or through a collection with the
 * right the call needs), as an organization admin (the admin console's `…/admin` routes and
 * `adminRequest`: cipherAsAdmin), or either (the upload and its renewal, which the official
 * server opens to both).
 */
export type Reach = 'member' | 'admin' | 'either';

/** EncArrayBuffer: a MAC (32 bytes) more when an attachment encrypted without one (EncType 0) is re-encrypted. */
const MAC_BYTES = 32;

/**
 * Item attachments: reserve (v2) then upload, the legacy one-step upload, download through a
 * short-lived signed URL, delete. Rights follow the item: read to download, edit to add or delete.
 * A reservation is checked against the room left but counts nothing: an upload's bytes count once
 * stored, so announcements never sent cannot fill a quota. An upload that fails (size mismatch,
 * too large, cut off, no room left) removes its file and its reservation.
 */
export function createAttachmentService(deps: AttachmentDeps) {
  const { db, audit, clock, pushes, store, keys, apiBase } = deps;
  const maxReadable = `${Math.round(deps.maxFileBytes / (1024 * 1024))} MB`;

  function checkSize(size: number): void {
    if (size > deps.maxFileBytes) throw new BadRequest(`Max file size is ${maxReadable}.`);
    if (size < 1) throw new BadRequest('No data to attach.');
  }

  /** The item for a change to its attachments, as `reach` allows (see Reach). */
  async function forEdit(executor: Executor, userId: string, cipherId: string, reach: Reach): Promise<CipherRow> {
    if (reach === 'admin') return cipherAsAdmin(executor, userId, cipherId);
    if (reach === 'member') return accessibleCipher(executor, userId, cipherId, 'edit');
    try {
      return await accessibleCipher(executor, userId, cipherId, 'edit');
    } catch (refused) {
      if (!(refused instanceof NotFound || refused instanceof BadRequest)) throw refused;
      // Not the member's to edit: the admin's, or else the member's refusal.
      const asAdmin = await unlessNotFound(cipherAsAdmin(executor, userId, cipherId));
      if (!asAdmin) throw refused;
      return asAdmin;
    }
  }

  /** An item in an answer: in the admin console's form (cipherMini) when reached as an admin, else as its member sees it. */
  function itemJson(row: CipherRow, admin: boolean): string {
    return admin ? cipherMiniJson(row, apiBase) : cipherJson(row, 'cipher', apiBase);
  }

  async function pushUpdate(row: Pick<CipherRow, 'id' | 'user_id' | 'organization_id'>, revisionDate: string, client: ClientContext): Promise<void> {
    await sendBuilt(pushes, () => cipherPushes(db, PushType.SyncCipherUpdate, { ...row, revision_date: revisionDate }, client.deviceIdentifier));
  }

  /** Drops a reservation whose upload failed: its file and its entry (a reservation counts no storage). */
  async function abandon(cipherId: string, attachmentId: string): Promise<void> {
    await db.transaction().execute(async (tx) => {
      await lockCipher(tx, cipherId);
      const stored = await storedAttachments(tx, cipherId);
      if (!stored) return;
      const all = parseAttachments(stored.attachments);
      const meta = all[attachmentId];
      if (!meta || meta.validated) return;
      delete all[attachmentId];
      await setAttachments(tx, cipherId, serializeAttachments(all), null);
    });
    await store.delete(fileKey(cipherId, attachmentId));
  }

  async function addAttachment(
    userId: string,
    client: ClientContext,
    cipherId: string,
    meta: Omit<AttachmentMeta, 'uploadStarted'>,
    lastKnownRevisionDate: string | null | undefined,
    reach: Reach,
    attachmentId = newFileId(),
  ): Promise<{ row: CipherRow; attachmentId: string }> {
    return db.transaction().execute(async (tx) => {
      await lockCipher(tx, cipherId);
      const row = await forEdit(tx, userId, cipherId, reach);
      assertCurrent(row, lastKnownRevisionDate);
      // Stored bytes count; a reservation only needs room for them when announced (countedBytes).
      if (meta.validated) await reserveStorage(tx, row, meta.size, deps.userQuotaBytes);
      else await assertStorageRoom(tx, row, meta.size, deps.userQuotaBytes);
      const all = parseAttachments(row.attachments);
      all[attachmentId] = { ...meta, uploadStarted: clock.now().toISOString() };
      const attachments = serializeAttachments(all);
      const now = clock.now().toISOString();
      await setAttachments(tx, cipherId, attachments, now);
      await audit.record(tx, client, cipherEvents(EventType.Cipher_AttachmentCreated, userId, [row]));
      await touchRevisions(tx, userId, [row], now);
      return { row: { ...row, attachments, revision_date: now }, attachmentId };
    });
  }

  return {
    /**
     * `POST /ciphers/{id}/attachment/v2`: reserves the attachment and answers where to upload it.
     * With `adminRequest`, the admin console's form: the item as an organization admin reaches it,
     * answered as cipherMini. Answers the JSON text of the upload data (AttachmentUploadResponse).
     */
    async begin({ userId, client }: UserCaller, cipherId: string, request: AttachmentRequest): Promise<string> {
      checkSize(request.fileSize);
      const { row, attachmentId } = await addAttachment(
        userId,
        client,
        cipherId.toLowerCase(),
        { fileName: request.fileName, key: request.key, size: request.fileSize, validated: false },
        request.lastKnownRevisionDate,
        request.adminRequest ? 'admin' : 'member',
      );
      await pushUpdate(row, row.revision_date, client);
      const item = request.adminRequest ? `"cipherResponse":null,"cipherMiniResponse":${itemJson(row, true)}` : `"cipherResponse":${itemJson(row, false)},"cipherMiniResponse":null`;
      const url = `${row.id}/attachment/${attachmentId}`;
      return `{"object":"attachment-fileUpload","attachmentId":${JSON.stringify(attachmentId)},"url":${JSON.stringify(url)},"fileUploadType":${FileUploadType.Direct},${item}}`;
    },

    /** `GET …/renew`: a new upload window for a reservation not uploaded yet. */
    async renew({ userId }: UserCaller, cipherId: string, attachmentId: string) {
      const id = cipherId.toLowerCase();
      await db.transaction().execute(async (tx) => {
        await lockCipher(tx, id);
        const row = await forEdit(tx, userId, id, 'either');
        const all = parseAttachments(row.attachments);
        const meta = all[attachmentId];
        if (!meta || meta.validated) throw new NotFound();
        all[attachmentId] = { ...meta, uploadStarted: clock.now().toISOString() };
        await setAttachments(tx, id, serializeAttachments(all), null);
      });
      return {
        object: 'attachment-fileUpload' as const,
        attachmentId: null,
        url: `${id}/attachment/${attachmentId}`,
        fileUploadType: FileUploadType.Direct,
        cipherResponse: null,
        cipherMiniResponse: null,
      };
    },

    /**
     * `POST /ciphers/{id}/attachment/{attachmentId}`: the bytes of a reserved attachment. They
     * must be exactly the declared size; otherwise (or when the upload breaks off) the file and
     * the reservation are removed and the client starts again.
     */
    async upload({ userId, client }: UserCaller, cipherId: string, attachmentId: string, file: UploadedFile): Promise<void> {
      const id = cipherId.toLowerCase();
      const row = await forEdit(db, userId, id, 'either');
      const meta = parseAttachments(row.attachments)[attachmentId];
      if (!meta) throw new NotFound('Attachment not found.');
      if (meta.validated) throw new BadRequest('This attachment has already been uploaded.');
      if (clock.now().getTime() - Date.parse(meta.uploadStarted) > UPLOAD_WINDOW_MS) {
        throw new BadRequest('The upload URL has expired. Ask for a new one (GET /ciphers/{id}/attachment/{attachmentId}/renew).');
      }
      let size: number;
      try {
        await assertStorageRoom(db, row, meta.size, deps.userQuotaBytes);
        size = await store.put(fileKey(id, attachmentId), file.stream, meta.size);
      } catch (error) {
        await abandon(id, attachmentId);
        if (error instanceof FileTooLarge) throw new BadRequest('File received does not match expected file length.');
        throw error;
      }
      if (size !== meta.size) {
        await abandon(id, attachmentId);
        throw new BadRequest('File received does not match expected file length.');
      }
      const now = clock.now().toISOString();
      let done;
      try {
        done = await db.transaction().execute(async (tx) => {
          await lockCipher(tx, id);
          const stored = await storedAttachments(tx, id);
          const all = parseAttachments(stored?.attachments);
          const current = all[attachmentId];
          // Deleted while its bytes were arriving: the file goes too.
          if (!stored || !current) return null;
          // Another upload of the same bytes completed first and was counted.
          if (current.validated) return stored;
          // Counted now that the bytes are stored, against whoever owns the item now.
          await reserveStorage(tx, stored, size, deps.userQuotaBytes);
          all[attachmentId] = { ...current, validated: true };
          await setAttachments(tx, id, serializeAttachments(all), now);
          await touchRevisions(tx, userId, [stored], now);
          return stored;
        });
      } catch (error) {
        // Others' uploads took the room left meanwhile: this one fails like any other.
        await abandon(id, attachmentId);
        throw error;
      }
      if (!done) {
        await store.delete(fileKey(id, attachmentId));
        throw new NotFound('Attachment not found.');
      }
      await pushUpdate(done, now, client);
    },

    /**
     * `POST /ciphers/{id}/attachment` (legacy): one multipart request with the file and its key.
     * The declared size is the request's Content-Length, an upper bound checked before writing.
     * Nothing is recorded until the file is stored whole: a broken upload leaves no attachment,
     * event, revision or storage behind. Answers the item's JSON text, in the admin form for `admin`.
     */
    async uploadLegacy({ userId, client }: UserCaller, cipherId: string, contentLength: number, key: string | null, file: UploadedFile, reach: Reach = 'member'): Promise<string> {
      const id = cipherId.toLowerCase();
      if (!file.fileName) throw BadRequest.field('data', 'The file part needs its (encrypted) file name.');
      checkSize(contentLength);
      await assertStorageRoom(db, await forEdit(db, userId, id, reach), contentLength, deps.userQuotaBytes);
      const attachmentId = newFileId();
      let size: number;
      try {
        size = await store.put(fileKey(id, attachmentId), file.stream, contentLength);
        if (size < 1) throw new BadRequest('No data to attach.');
      } catch (error) {
        await store.delete(fileKey(id, attachmentId));
        if (error instanceof FileTooLarge) throw new BadRequest('File received does not match expected file length.');
        throw error;
      }
      let row: CipherRow;
      try {
        // Rights and room are checked again with the attachment: either may have changed meanwhile.
        ({ row } = await addAttachment(userId, client, id, { fileName: file.fileName, key, size, validated: true }, null, reach, attachmentId));
      } catch (error) {
        await store.delete(fileKey(id, attachmentId));
        throw error;
      }
      await pushUpdate(row, row.revision_date, client);
      return itemJson(row, reach === 'admin');
    },

    /**
     * `POST /ciphers/{id}/attachment/{attachmentId}/share?organizationId=` (older clients): before
     * sharing one of their items, they upload each attachment that has no key of its own again,
     * re-encrypted with the organization's key. The copy waits beside the original in the
     * attachment's `share` entry and takes its place when the item is shared with that
     * organization (org-ciphers.service.ts share); a later copy replaces an earlier one. The
     * same file re-encrypted is as long as the original (32 bytes longer when the original had
     * no MAC); any other length is refused. Nothing is counted until the share: the
     * organization must have room for the request when it arrives, and for all the item's
     * files when the item moves. Records no event and pushes nothing, as the official server.
     */
    async uploadForShare({ userId }: UserCaller, cipherId: string, attachmentId: string, organizationId: string, contentLength: number, key: string | null, file: UploadedFile): Promise<void> {
      const id = cipherId.toLowerCase();
      const orgId = organizationId.toLowerCase();
      const owned = await storedAttachments(db, id);
      if (!owned || owned.user_id !== userId || !(await confirmedMembership(db, orgId, userId))) throw new NotFound();
      checkSize(contentLength);
      await assertOrganizationRoom(db, orgId, contentLength);
      const original = parseAttachments(owned.attachments)[attachmentId];
      if (!original?.validated) throw new BadRequest('Cipher does not own specified attachment');
      if (key !== null && !file.fileName) throw BadRequest.field('data', 'The file part needs its (encrypted) file name.');
      const copy = newFileId();
      let size: number;
      try {
        size = await store.put(fileKey(id, copy), file.stream, contentLength);
      } catch (error) {
        await store.delete(fileKey(id, copy));
        if (error instanceof FileTooLarge) throw new BadRequest('File received does not match expected file length.');
        throw error;
      }
      if (size !== original.size && size !== original.size + MAC_BYTES) {
        await store.delete(fileKey(id, copy));
        throw new BadRequest('File received does not match expected file length.');
      }
      const replaced = await db.transaction().execute(async (tx) => {
        await lockCipher(tx, id);
        const stored = await storedAttachments(tx, id);
        const all = parseAttachments(stored?.attachments);
        const current = all[attachmentId];
        // Shared, deleted or moved while the bytes were arriving: the copy goes.
        if (!stored || stored.user_id !== userId || !current?.validated) return null;
        const before = current.share?.file ?? '';
        all[attachmentId] = {
          ...current,
          share: { organizationId: orgId, fileName: key !== null ? (file.fileName ?? current.fileName) : current.fileName, key: key ?? current.key, size, file: copy },
        };
        await setAttachments(tx, id, serializeAttachments(all), null);
        return { before };
      });
      if (!replaced) {
        await store.delete(fileKey(id, copy));
        throw new NotFound('Attachment not found.');
      }
      if (replaced.before) await store.delete(fileKey(id, replaced.before)).catch(() => undefined);
    },

    /** `GET /ciphers/{id}/attachment/{attachmentId}`: the attachment with a download URL good for a minute. */
    async downloadData({ userId }: UserCaller, cipherId: string, attachmentId: string, reach: Exclude<Reach, 'either'> = 'member'): Promise<AttachmentResponse> {
      const id = cipherId.toLowerCase();
      const row = reach === 'admin' ? await cipherAsAdmin(db, userId, id) : await accessibleCipher(db, userId, id, 'read');
      const meta = parseAttachments(row.attachments)[attachmentId];
      if (!meta || !meta.validated) throw new NotFound();
      return signedDownload(keys, apiBase, id, attachmentId, meta);
    },

    /** `GET /ciphers/attachment/download?token=…`: the bytes, for a token this server signed and that has not expired. */
    async download(token: string): Promise<{ stream: Readable; size: number }> {
      const payload = await keys.verify(token, { typ: DOWNLOAD_TOKEN_TYP });
      if (!payload || typeof payload.cid !== 'string' || typeof payload.aid !== 'string') {
        throw new NotFound('The download link is invalid or has expired.');
      }
      const stored = await storedAttachments(db, payload.cid);
      const meta = parseAttachments(stored?.attachments)[payload.aid];
      if (!meta?.validated) throw new NotFound();
      const file = await store.get(fileKey(payload.cid, storedFileOf(payload.aid, meta)));
      if (!file) throw new NotFound();
      return file;
    },

    /**
     * `DELETE /ciphers/{id}/attachment/{attachmentId}`: needs the right to edit the item (or, `…/admin`, to edit it as an organization admin).
     * Every form answers the item's mini form, as the official DeleteAttachmentResponseModel (clients read its revisionDate), as JSON text.
     */
    async delete({ userId, client }: UserCaller, cipherId: string, attachmentId: string, reach: Exclude<Reach, 'either'> = 'member'): Promise<string> {
      const id = cipherId.toLowerCase();
      const now = clock.now().toISOString();
      let files: string[] = [];
      const row = await db.transaction().execute(async (tx) => {
        await lockCipher(tx, id);
        const found = await forEdit(tx, userId, id, reach);
        const all = parseAttachments(found.attachments);
        const meta = all[attachmentId];
        if (!meta) throw new NotFound();
        files = namedFiles({ [attachmentId]: meta });
        delete all[attachmentId];
        const attachments = serializeAttachments(all);
        await setAttachments(tx, id, attachments, now);
        await releaseStorage(tx, found, countedBytes(meta));
        await audit.record(tx, client, cipherEvents(EventType.Cipher_AttachmentDeleted, userId, [found]));
        await touchRevisions(tx, userId, [found], now);
        return { ...found, attachments, revision_date: now };
      });
      for (const name of files) await store.delete(fileKey(id, name));
      await pushUpdate(row, now, client);
      return `{"object":"deleteAttachment","cipher":${cipherMiniJson(row, apiBase)}}`;
    },
  };
}

export type AttachmentService = ReturnType<typeof createAttachmentService>;

/** What `found` answers, or null where it throws NotFound. */
async function unlessNotFound<T>(found: Promise<T>): Promise<T | null> {
  try {
    return await found;
  } catch (error) {
    if (error instanceof NotFound) return null;
    throw error;
  }
}
