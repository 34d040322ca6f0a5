import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { Clock } from '../../shared/clock.js';
import type { Db } from '../../db/database.js';
import { BadRequest, NotFound } from '../../http/errors.js';
import type { ClientContext, UserCaller } from '../../http/request-context.js';
import type { PasswordHasher } from '../../platform/auth/password-hasher.js';
import { touchAccountRevision } from '../../platform/auth/users.repository.js';
import type { AuditLog } from '../../platform/audit/audit-log.js';
import type { Executor } from '../../db/database.js';
import { EventType } from '../../platform/audit/event-type.js';
import { assertStorageRoom, releaseStorage, reserveStorage } from '../../platform/storage/quota.js';
import { FileTooLarge, type FileStore } from '../../platform/storage/file-store.js';
import { PushType, type Pushes } from '../../platform/push/pushes.js';
import { deleteSend, findSend, insertSend, listSends, lockSend, updateSend } from './sends.repository.js';
import { parseSendData, SendType, toSendFileUploadResponse, toSendResponse, type SendData, type SendRequest, type SendResponse, type SendRow } from './sends.schemas.js';
import { authFor } from './send-auth.js';
import { assertSendAllowed } from './send-policies.js';
import { newFileId, sendFileKey, sendFolder } from '../../platform/storage/store-layout.js';

export interface SendDeps {
  db: Db;
  audit: AuditLog;
  clock: Clock;
  pushes: Pushes;
  hasher: PasswordHasher;
  store: FileStore;
  userQuotaBytes: number;
  maxFileBytes: number;
}

/** How long a file Send's upload URL stays good after the Send was made (or the URL renewed). */
export const SEND_UPLOAD_WINDOW_MS = 60 * 60 * 1000;
const MINUTE = 60 * 1000;
const DAY = 24 * 60 * MINUTE;


/** Bitwarden's date rules for a Send (SendRequestModel.ValidateCreation / ValidateEdit). */
function checkDates(request: SendRequest, now: Date, creating: boolean): void {
  const soon = now.getTime() + MINUTE;
  const expiration = request.expirationDate ? Date.parse(request.expirationDate) : null;
  const deletion = Date.parse(request.deletionDate);
  if (creating && expiration !== null && expiration <= soon) {
    throw new BadRequest('You cannot create a Send that is already expired. Adjust the expiration date and try again.');
  }
  if (deletion <= soon) throw new BadRequest('You cannot have a Send with a deletion date in the past. Adjust the deletion date and try again.');
  if (deletion > now.getTime() + 31 * DAY) {
    throw new BadRequest(
      'You cannot have a Send with a deletion date that far into the future. Adjust the Deletion Date to a value less than 31 days from now and try again.',
    );
  }
  if (expiration !== null) {
    if (expiration <= soon) throw new BadRequest('You cannot have a Send with an expiration date in the past. Adjust the expiration date and try again.');
    if (expiration > deletion) throw new BadRequest('You cannot have a Send with an expiration date greater than the deletion date. Adjust the expiration date and try again.');
  }
}

const iso = (text: string | null | undefined) => (text ? new Date(text).toISOString() : null);

export function sendEventType(kind: 'created' | 'edited' | 'deleted' | 'accessed', row: Pick<SendRow, 'type' | 'password_hash' | 'emails'>): EventType {
  const file = row.type === (SendType.File as number);
  switch (kind) {
    case 'created':
      if (row.emails) return file ? EventType.Send_Created_File_WithEmailVerification : EventType.Send_Created_Text_WithEmailVerification;
      if (row.password_hash) return file ? EventType.Send_Created_File_WithPasswordProtection : EventType.Send_Created_Text_WithPasswordProtection;
      return file ? EventType.Send_Created_File : EventType.Send_Created_Text;
    case 'edited':
      return file ? EventType.Send_Edited_File : EventType.Send_Edited_Text;
    case 'deleted':
      return file ? EventType.Send_Deleted_File : EventType.Send_Deleted_Text;
    case 'accessed':
      return file ? EventType.Send_Accessed_File : EventType.Send_Accessed_Text;
  }
}

export function sendPush(type: PushType.SyncSendCreate | PushType.SyncSendUpdate | PushType.SyncSendDelete, row: Pick<SendRow, 'id' | 'user_id' | 'revision_date'>, contextId: string | null) {
  return { type, payload: { Id: row.id, UserId: row.user_id, RevisionDate: new Date(row.revision_date) }, contextId, target: { user: row.user_id } };
}

/**
 * A user's own Sends: create (text, or a file reserved then uploaded), edit, remove the
 * password or addresses, delete, list. The Send policies of the user's organizations (Disable
 * Send, Send options, Send controls: send-policies.ts) are checked on every create and edit;
 * events and pushes follow every change.
 */
export function createSendService(deps: SendDeps) {
  const { db, audit, clock, pushes, hasher, store } = deps;
  const maxReadable = `${Math.round(deps.maxFileBytes / (1024 * 1024))} MB`;

  async function owned(executor: Executor, userId: string, id: string): Promise<SendRow> {
    const row = await findSend(executor, id.toLowerCase());
    if (!row || row.user_id !== userId) throw new NotFound();
    return row;
  }

  async function create(userId: string, client: ClientContext, request: SendRequest, file: SendData['file'] | null): Promise<SendRow> {
    const now = clock.now();
    checkDates(request, now, true);
    const auth = (await authFor(hasher, request))(null);
    const stamp = now.toISOString();
    const data: SendData = { name: request.name ?? '', notes: request.notes ?? null, ...(file ? { file } : { text: { text: request.text?.text ?? null, hidden: Boolean(request.text?.hidden) } }) };
    const row: SendRow = {
      id: randomUUID(),
      user_id: userId,
      type: request.type,
      data: JSON.stringify(data),
      key: request.key,
      ...auth,
      max_access_count: request.maxAccessCount ?? null,
      access_count: 0,
      disabled: request.disabled,
      hide_email: Boolean(request.hideEmail),
      creation_date: stamp,
      revision_date: stamp,
      expiration_date: iso(request.expirationDate),
      deletion_date: new Date(request.deletionDate).toISOString(),
    };
    await db.transaction().execute(async (tx) => {
      await assertSendAllowed(tx, userId, row);
      // A file Send's bytes count once uploaded, as attachments' do; until then it needs room for them.
      if (file) await assertStorageRoom(tx, { user_id: userId, organization_id: null }, file.size, deps.userQuotaBytes);
      await insertSend(tx, row);
      await touchAccountRevision(tx, userId, stamp);
      await audit.record(tx, client, { type: sendEventType('created', row), userId, actingUserId: userId, sendId: row.id });
    });
    pushes.send(sendPush(PushType.SyncSendCreate, row, client.deviceIdentifier));
    return row;
  }

  /** Drops a file Send whose upload failed (its file counted no storage yet); the client makes a new one. */
  async function abandon(row: SendRow): Promise<void> {
    await deleteSend(db, row.id);
    await store.deleteAll(sendFolder(row.id));
  }

  return {
    async get({ userId }: UserCaller, id: string): Promise<SendResponse> {
      return toSendResponse(await owned(db, userId, id));
    },

    async list({ userId }: UserCaller): Promise<SendResponse[]> {
      return (await listSends(db, userId)).map(toSendResponse);
    },

    async createText({ userId, client }: UserCaller, request: SendRequest): Promise<SendResponse> {
      if (request.type !== (SendType.Text as number)) throw BadRequest.field('type', 'File Sends are created with POST /sends/file/v2.');
      if (!request.text) throw BadRequest.field('text', 'Text is required for text sends.');
      return toSendResponse(await create(userId, client, request, null));
    },

    /** `POST /sends/file/v2`: the Send with its file reserved; the bytes come to the URL answered. */
    async createFile({ userId, client }: UserCaller, request: SendRequest) {
      if (request.type !== (SendType.File as number)) throw new BadRequest('Invalid content.');
      if (request.fileLength === undefined || request.fileLength === null) throw new BadRequest('Invalid content. File size hint is required.');
      if (request.fileLength > deps.maxFileBytes) throw new BadRequest(`Max file size is ${maxReadable}.`);
      if (request.fileLength < 1) throw new BadRequest('No data to attach.');
      if (!request.file?.fileName) throw new BadRequest('File metadata is required for file sends.');
      const file = { id: newFileId(), fileName: request.file.fileName, size: request.fileLength, validated: false, uploadStarted: clock.now().toISOString() };
      const row = await create(userId, client, request, file);
      return toSendFileUploadResponse(row, `/sends/${row.id}/file/${file.id}`);
    },

    async renewUpload({ userId }: UserCaller, id: string, fileId: string) {
      const row = await owned(db, userId, id);
      const data = parseSendData(row.data);
      if (!data.file || data.file.id !== fileId || data.file.validated) throw new NotFound();
      data.file = { ...data.file, uploadStarted: clock.now().toISOString() };
      await updateSend(db, row.id, { data: JSON.stringify(data) });
      return toSendFileUploadResponse({ ...row, data: JSON.stringify(data) }, `/sends/${row.id}/file/${fileId}`);
    },

    /** `POST /sends/{id}/file/{fileId}`: exactly the declared bytes, within the upload window; otherwise the Send goes. */
    async uploadFile({ userId, client }: UserCaller, id: string, fileId: string, stream: Readable): Promise<void> {
      const row = await owned(db, userId, id);
      const data = parseSendData(row.data);
      if (!data.file || data.file.id !== fileId) throw new NotFound();
      if (data.file.validated) throw new BadRequest('This file has already been uploaded.');
      if (clock.now().getTime() - Date.parse(data.file.uploadStarted) > SEND_UPLOAD_WINDOW_MS) {
        throw new BadRequest('The upload URL has expired. Ask for a new one (GET /sends/{id}/file/{fileId}).');
      }
      const owner = { user_id: userId, organization_id: null };
      let size: number;
      try {
        await assertStorageRoom(db, owner, data.file.size, deps.userQuotaBytes);
        size = await store.put(sendFileKey(row.id, fileId), stream, data.file.size);
      } catch (error) {
        await abandon(row);
        if (error instanceof FileTooLarge) throw new BadRequest('File received does not match expected file length.');
        throw error;
      }
      if (size !== data.file.size) {
        await abandon(row);
        throw new BadRequest('File received does not match expected file length.');
      }
      const now = clock.now().toISOString();
      let kept: boolean;
      try {
        kept = await db.transaction().execute(async (tx) => {
          await lockSend(tx, row.id);
          const current = await findSend(tx, row.id);
          const latest = current ? parseSendData(current.data) : null;
          // Deleted while the bytes were arriving: the file goes too.
          if (!latest?.file || latest.file.id !== fileId) return false;
          // Another upload of the same file completed first and was counted.
          if (latest.file.validated) return true;
          // Counted now that the bytes are stored.
          await reserveStorage(tx, owner, size, deps.userQuotaBytes);
          latest.file = { ...latest.file, validated: true };
          await updateSend(tx, row.id, { data: JSON.stringify(latest), revision_date: now });
          await touchAccountRevision(tx, userId, now);
          return true;
        });
      } catch (error) {
        // Other uploads took the room left meanwhile: this one fails like any other.
        await abandon(row);
        throw error;
      }
      if (!kept) {
        await store.deleteAll(sendFolder(row.id));
        throw new NotFound();
      }
      pushes.send(sendPush(PushType.SyncSendUpdate, { ...row, revision_date: now }, client.deviceIdentifier));
    },

    async update({ userId, client }: UserCaller, id: string, request: SendRequest): Promise<SendResponse> {
      const now = clock.now();
      checkDates(request, now, false);
      const stamp = now.toISOString();
      const auth = await authFor(hasher, request);
      const updated = await db.transaction().execute(async (tx) => {
        const row = await owned(tx, userId, id);
        if (row.type !== request.type) throw new BadRequest("Cannot change a Send's type");
        const data = parseSendData(row.data);
        data.name = request.name ?? '';
        data.notes = request.notes ?? null;
        if (row.type === (SendType.Text as number)) {
          if (!request.text) throw BadRequest.field('text', 'Text is required for text sends.');
          data.text = { text: request.text.text ?? null, hidden: Boolean(request.text.hidden) };
        }
        const values = {
          data: JSON.stringify(data),
          key: request.key,
          ...auth(row),
          max_access_count: request.maxAccessCount ?? null,
          disabled: request.disabled,
          hide_email: Boolean(request.hideEmail),
          expiration_date: iso(request.expirationDate),
          deletion_date: new Date(request.deletionDate).toISOString(),
          revision_date: stamp,
        };
        await assertSendAllowed(tx, userId, { ...row, ...values });
        await updateSend(tx, row.id, values);
        await touchAccountRevision(tx, userId, stamp);
        await audit.record(tx, client, { type: sendEventType('edited', row), userId, actingUserId: userId, sendId: row.id });
        return { ...row, ...values };
      });
      pushes.send(sendPush(PushType.SyncSendUpdate, updated, client.deviceIdentifier));
      return toSendResponse(updated);
    },

    /**
     * `PUT /sends/{id}/remove-auth` (and the older remove-password): the Send opens to anyone
     * with the link. The policies are checked as for an edit, as the official server saves it.
     */
    async removeAuth({ userId, client }: UserCaller, id: string): Promise<SendResponse> {
      const stamp = clock.now().toISOString();
      const updated = await db.transaction().execute(async (tx) => {
        const row = await owned(tx, userId, id);
        const values = { password_hash: null, emails: null, revision_date: stamp };
        await assertSendAllowed(tx, userId, { ...row, ...values });
        await updateSend(tx, row.id, values);
        await touchAccountRevision(tx, userId, stamp);
        await audit.record(tx, client, { type: sendEventType('edited', row), userId, actingUserId: userId, sendId: row.id });
        return { ...row, ...values };
      });
      pushes.send(sendPush(PushType.SyncSendUpdate, updated, client.deviceIdentifier));
      return toSendResponse(updated);
    },

    async delete({ userId, client }: UserCaller, id: string): Promise<void> {
      const stamp = clock.now().toISOString();
      const row = await db.transaction().execute(async (tx) => {
        const row = await owned(tx, userId, id);
        await deleteSend(tx, row.id);
        const file = parseSendData(row.data).file;
        if (file?.validated) await releaseStorage(tx, { user_id: userId, organization_id: null }, file.size);
        await touchAccountRevision(tx, userId, stamp);
        await audit.record(tx, client, { type: sendEventType('deleted', row), userId, actingUserId: userId, sendId: row.id });
        return row;
      });
      await store.deleteAll(sendFolder(row.id));
      pushes.send(sendPush(PushType.SyncSendDelete, { ...row, revision_date: stamp }, client.deviceIdentifier));
    },
  };
}

export type SendService = ReturnType<typeof createSendService>;
