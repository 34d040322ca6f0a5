import type { Readable } from 'node:stream';
import type { Clock } from '../../clock.js';
import type { Db } from '../../db/database.js';
import { BadRequest, NotFound } from '../../http/errors.js';
import type { ClientContext } from '../../http/request-context.js';
import type { AuditLog } from '../events/audit-log.js';
import { EventType } from '../events/event-type.js';
import type { SigningKeys } from '../identity/signing-keys.js';
import { cipherPushes, sendBuilt } from '../notifications/push-messages.js';
import { PushType, type Pushes } from '../notifications/pushes.js';
import { accessibleCipher, cipherEvents, touchRevisions } from '../vault/cipher-access.js';
import type { CipherRow } from '../vault/ciphers.repository.js';
import { assertCurrent } from '../vault/ciphers.service.js';
import { parseAttachments, serializeAttachments, toAttachmentResponse, type AttachmentMeta, type AttachmentResponse } from './attachment-data.js';
import { lockCipher, releaseStorage, reserveStorage, setAttachments, storedAttachments } from './attachments.repository.js';
import type { AttachmentRequest } from './attachments.schemas.js';
import { FileTooLarge, type FileStore } from './file-store.js';
import { fileKey, newFileId } from './store-layout.js';

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


export interface UploadedFile {
  stream: Readable;
  /** The encrypted file name the client gave the multipart part (legacy upload). */
  fileName: string | null;
}

/**
 * Item attachments: reserve (v2) then upload, the legacy one-step upload, download through a
 * short-lived signed URL, delete. Rights follow the item: read to download, edit to add or delete.
 * Quotas are counted when an attachment is reserved, before any byte is written; an upload that
 * fails (size mismatch, too large, cut off) removes its file and its reservation.
 */
export function createAttachmentService(deps: AttachmentDeps) {
  const { db, audit, clock, pushes, store, keys, apiBase } = deps;
  const maxReadable = `${Math.round(deps.maxFileBytes / (1024 * 1024))} MB`;

  function checkSize(size: number): void {
    if (size > deps.maxFileBytes) throw new BadRequest(`Max file size is ${maxReadable}.`);
    if (size < 1) throw new BadRequest('No data to attach.');
  }

  async function pushUpdate(row: Pick<CipherRow, 'id' | 'user_id' | 'organization_id'>, revisionDate: string, client: ClientContext): Promise<void> {
    await sendBuilt(pushes, () => cipherPushes(db, PushType.SyncCipherUpdate, { ...row, revision_date: revisionDate }, client.deviceIdentifier));
  }

  /** Drops a reservation whose upload failed: its file, its entry and its storage. */
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
      await releaseStorage(tx, stored, meta.size);
    });
    await store.delete(fileKey(cipherId, attachmentId));
  }

  async function addAttachment(
    userId: string,
    client: ClientContext,
    cipherId: string,
    meta: Omit<AttachmentMeta, 'uploadStarted'>,
    lastKnownRevisionDate: string | null | undefined,
    attachmentId = newFileId(),
  ): Promise<{ row: CipherRow; attachmentId: string }> {
    return db.transaction().execute(async (tx) => {
      await lockCipher(tx, cipherId);
      const row = await accessibleCipher(tx, userId, cipherId, 'edit');
      assertCurrent(row, lastKnownRevisionDate);
      await reserveStorage(tx, row, meta.size, deps.userQuotaBytes);
      const all = parseAttachments(row.attachments);
      all[attachmentId] = { ...meta, uploadStarted: clock.now().toISOString() };
      const attachments = serializeAttachments(all);
      const now = clock.now().toISOString();
      await setAttachments(tx, cipherId, attachments, now);
      await touchRevisions(tx, userId, [row], now);
      await audit.record(tx, client, cipherEvents(EventType.Cipher_AttachmentCreated, userId, [row]));
      return { row: { ...row, attachments, revision_date: now }, attachmentId };
    });
  }

  return {
    /** `POST /ciphers/{id}/attachment/v2`: reserves the attachment and answers where to upload it. */
    async begin(userId: string, client: ClientContext, cipherId: string, request: AttachmentRequest) {
      checkSize(request.fileSize);
      const { row, attachmentId } = await addAttachment(
        userId,
        client,
        cipherId.toLowerCase(),
        { fileName: request.fileName, key: request.key, size: request.fileSize, validated: false },
        request.lastKnownRevisionDate,
      );
      await pushUpdate(row, row.revision_date, client);
      return { row, attachmentId, url: `${row.id}/attachment/${attachmentId}` };
    },

    /** `GET …/renew`: a new upload window for a reservation not uploaded yet. */
    async renew(userId: string, cipherId: string, attachmentId: string) {
      const id = cipherId.toLowerCase();
      await db.transaction().execute(async (tx) => {
        await lockCipher(tx, id);
        const row = await accessibleCipher(tx, userId, id, 'edit');
        const all = parseAttachments(row.attachments);
        const meta = all[attachmentId];
        if (!meta || meta.validated) throw new NotFound();
        all[attachmentId] = { ...meta, uploadStarted: clock.now().toISOString() };
        await setAttachments(tx, id, serializeAttachments(all), null);
      });
      return { url: `${id}/attachment/${attachmentId}` };
    },

    /**
     * `POST /ciphers/{id}/attachment/{attachmentId}`: the bytes of a reserved attachment. They
     * must be exactly the declared size; otherwise (or when the upload breaks off) the file and
     * the reservation are removed and the client starts again.
     */
    async upload(userId: string, client: ClientContext, cipherId: string, attachmentId: string, file: UploadedFile): Promise<void> {
      const id = cipherId.toLowerCase();
      const row = await accessibleCipher(db, userId, id, 'edit');
      const meta = parseAttachments(row.attachments)[attachmentId];
      if (!meta) throw new NotFound('Attachment not found.');
      if (meta.validated) throw new BadRequest('This attachment has already been uploaded.');
      if (clock.now().getTime() - Date.parse(meta.uploadStarted) > UPLOAD_WINDOW_MS) {
        throw new BadRequest('The upload URL has expired. Ask for a new one (GET /ciphers/{id}/attachment/{attachmentId}/renew).');
      }
      let size: number;
      try {
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
      const done = await db.transaction().execute(async (tx) => {
        await lockCipher(tx, id);
        const stored = await storedAttachments(tx, id);
        const all = parseAttachments(stored?.attachments);
        const current = all[attachmentId];
        // Deleted while its bytes were arriving: the file goes too.
        if (!stored || !current) return null;
        all[attachmentId] = { ...current, validated: true };
        await setAttachments(tx, id, serializeAttachments(all), now);
        await touchRevisions(tx, userId, [stored], now);
        return stored;
      });
      if (!done) {
        await store.delete(fileKey(id, attachmentId));
        throw new NotFound('Attachment not found.');
      }
      await pushUpdate(done, now, client);
    },

    /**
     * `POST /ciphers/{id}/attachment` (legacy): one multipart request with the file and its key.
     * The declared size is the request's Content-Length, an upper bound checked before writing.
     */
    async uploadLegacy(userId: string, client: ClientContext, cipherId: string, contentLength: number, key: string | null, file: UploadedFile): Promise<CipherRow> {
      const id = cipherId.toLowerCase();
      if (!file.fileName) throw BadRequest.field('data', 'The file part needs its (encrypted) file name.');
      checkSize(contentLength);
      const attachmentId = newFileId();
      // The multipart envelope is counted too: the reservation is corrected once the size is known.
      await addAttachment(userId, client, id, { fileName: file.fileName, key, size: contentLength, validated: false }, null, attachmentId);
      let size: number;
      try {
        size = await store.put(fileKey(id, attachmentId), file.stream, contentLength);
        if (size < 1) throw new BadRequest('No data to attach.');
      } catch (error) {
        await abandon(id, attachmentId);
        if (error instanceof FileTooLarge) throw new BadRequest('File received does not match expected file length.');
        throw error;
      }
      const now = clock.now().toISOString();
      await db.transaction().execute(async (tx) => {
        await lockCipher(tx, id);
        const stored = await storedAttachments(tx, id);
        const all = parseAttachments(stored?.attachments);
        const current = all[attachmentId];
        if (!stored || !current) throw new NotFound();
        all[attachmentId] = { ...current, size, validated: true };
        await releaseStorage(tx, stored, current.size - size);
        await setAttachments(tx, id, serializeAttachments(all), now);
        await touchRevisions(tx, userId, [stored], now);
      });
      const row = await accessibleCipher(db, userId, id);
      await pushUpdate(row, now, client);
      return row;
    },

    /** `GET /ciphers/{id}/attachment/{attachmentId}`: the attachment with a download URL good for a minute. */
    async downloadData(userId: string, cipherId: string, attachmentId: string): Promise<AttachmentResponse> {
      const id = cipherId.toLowerCase();
      const row = await accessibleCipher(db, userId, id, 'read');
      const meta = parseAttachments(row.attachments)[attachmentId];
      if (!meta || !meta.validated) throw new NotFound();
      const token = await keys.sign({ cid: id, aid: attachmentId }, { typ: DOWNLOAD_TOKEN_TYP, expiresInSeconds: DOWNLOAD_URL_SECONDS });
      return toAttachmentResponse(attachmentId, meta, `${apiBase}/ciphers/attachment/download?token=${encodeURIComponent(token)}`);
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
      const file = await store.get(fileKey(payload.cid, payload.aid));
      if (!file) throw new NotFound();
      return file;
    },

    /** `DELETE /ciphers/{id}/attachment/{attachmentId}`: needs the right to edit the item. */
    async delete(userId: string, client: ClientContext, cipherId: string, attachmentId: string): Promise<CipherRow> {
      const id = cipherId.toLowerCase();
      const now = clock.now().toISOString();
      const row = await db.transaction().execute(async (tx) => {
        await lockCipher(tx, id);
        const found = await accessibleCipher(tx, userId, id, 'edit');
        const all = parseAttachments(found.attachments);
        const meta = all[attachmentId];
        if (!meta) throw new NotFound();
        delete all[attachmentId];
        const attachments = serializeAttachments(all);
        await setAttachments(tx, id, attachments, now);
        await releaseStorage(tx, found, meta.size);
        await touchRevisions(tx, userId, [found], now);
        await audit.record(tx, client, cipherEvents(EventType.Cipher_AttachmentDeleted, userId, [found]));
        return { ...found, attachments, revision_date: now };
      });
      await store.delete(fileKey(id, attachmentId));
      await pushUpdate(row, now, client);
      return row;
    },
  };
}

export type AttachmentService = ReturnType<typeof createAttachmentService>;
