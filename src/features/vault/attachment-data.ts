import { readableBytes } from '../../shared/readable-bytes.js';

/**
 * The attachments of an item, as kept in `ciphers.attachments`: one JSON document keyed by
 * attachment id (as Bitwarden keeps them). The file name and key are the client's encrypted
 * strings; the server never reads them. An attachment is `validated` once its bytes arrived;
 * until then it is a reservation made by `POST /ciphers/{id}/attachment/v2`, removed when its
 * upload fails or, never uploaded, by the file sweeper (pending-uploads.ts). Item responses list reservations too, as the official server does: the clients
 * keep the item answered with the upload URL, and it must name the attachment they upload.
 */
export interface AttachmentMeta {
  fileName: string;
  key: string | null;
  size: number;
  validated: boolean;
  /** When the upload URL was given (or renewed); the upload must come within UPLOAD_WINDOW_MS. */
  uploadStarted: string;
  /** The stored file's name in the item's folder, when it is not the attachment id (a share re-upload replaced it). */
  file?: string;
  /**
   * A copy re-encrypted with an organization's key, uploaded by older clients before they share
   * the item there (`POST /ciphers/{id}/attachment/{attachmentId}/share`); it takes the place of
   * the attachment when the item is shared with that organization (see applyShareUploads).
   */
  share?: ShareUpload;
}

export interface ShareUpload {
  organizationId: string;
  fileName: string;
  key: string | null;
  size: number;
  /** The stored file's name in the item's folder. */
  file: string;
}

export type Attachments = Record<string, AttachmentMeta>;

export function parseAttachments(text: string | null | undefined): Attachments {
  if (!text) return {};
  const parsed = JSON.parse(text) as Attachments | null;
  return parsed && typeof parsed === 'object' ? parsed : {};
}

/** The column value: null when the item has none, as the official server keeps it. */
export function serializeAttachments(attachments: Attachments): string | null {
  return Object.keys(attachments).length === 0 ? null : JSON.stringify(attachments);
}

/**
 * The attachments after a client re-encrypted their file names and keys (`attachments2` of an
 * item update or share); ids it does not name keep theirs, unknown ids are ignored.
 */
export function withNewKeys(text: string | null | undefined, updates: Record<string, { fileName?: string | null; key?: string | null }> | null | undefined): string | null {
  const all = parseAttachments(text);
  if (!updates) return serializeAttachments(all);
  for (const [id, update] of Object.entries(updates)) {
    const meta = all[id];
    if (!meta) continue;
    all[id] = { ...meta, fileName: update.fileName ?? meta.fileName, key: update.key ?? meta.key };
  }
  return serializeAttachments(all);
}

/** The name of an attachment's stored file in its item's folder. */
export const storedFileOf = (attachmentId: string, meta: Pick<AttachmentMeta, 'file'>): string => meta.file ?? attachmentId;

/** Every stored file an item's attachments name: their own, and share copies waiting for a share. */
export function namedFiles(attachments: Attachments): string[] {
  return Object.entries(attachments).flatMap(([id, meta]) => [storedFileOf(id, meta), ...(meta.share ? [meta.share.file] : [])]);
}

/**
 * The attachments of an item being shared with `organizationId`: those with a share copy for
 * that organization take the copy's file, name, key and size; share copies meant for another
 * organization are dropped. Answers the new document and the names of the files it no longer
 * names (removed after the share commits).
 */
export function applyShareUploads(text: string | null, organizationId: string): { attachments: string | null; released: string[] } {
  const all = parseAttachments(text);
  const released: string[] = [];
  for (const [id, meta] of Object.entries(all)) {
    const { share, ...rest } = meta;
    if (!share) continue;
    if (share.organizationId === organizationId) {
      released.push(storedFileOf(id, meta));
      all[id] = { ...rest, fileName: share.fileName, key: share.key, size: share.size, file: share.file };
    } else {
      released.push(share.file);
      all[id] = rest;
    }
  }
  return { attachments: serializeAttachments(all), released };
}

/**
 * Bytes an attachment counts against its owner's storage: its size once uploaded. A reservation
 * counts nothing, so announcements never sent cannot fill a quota; its upload is counted when
 * it completes.
 */
export const countedBytes = (meta: Pick<AttachmentMeta, 'size' | 'validated'>): number => (meta.validated ? meta.size : 0);

/** Bytes an item's attachments count against its owner's storage (countedBytes). */
export function attachmentBytes(text: string | null | undefined): number {
  return Object.values(parseAttachments(text)).reduce((sum, a) => sum + countedBytes(a), 0);
}

export interface AttachmentResponse {
  object: 'attachment';
  id: string;
  url: string;
  fileName: string;
  key: string | null;
  size: string;
  sizeName: string;
}

/** The API service's public base URL (PUBLIC_URL, plus /api when the services share a port). */
export function apiBaseUrl(config: { publicUrl: string; servicePrefixes: boolean }): string {
  return `${config.publicUrl}${config.servicePrefixes ? '/api' : ''}`;
}

/**
 * Where item responses point an attachment: the authenticated route that answers a fresh
 * short-lived download URL (the official `{Attachment.BaseUrl}/{cipherId}/{id}` is a static
 * path that self-hosted servers no longer serve; clients ask that route first anyway).
 */
export function attachmentUrl(apiBase: string, cipherId: string, id: string): string {
  return `${apiBase}/ciphers/${cipherId}/attachment/${id}`;
}

export function toAttachmentResponse(id: string, meta: AttachmentMeta, url: string): AttachmentResponse {
  // Size is a string in Bitwarden's answers (JSON numbers lose precision past 2^53 in clients).
  return { object: 'attachment', id, url, fileName: meta.fileName, key: meta.key, size: String(meta.size), sizeName: readableBytes(meta.size) };
}

/** The `attachments` member of an item response as JSON text: null without attachments. */
export function attachmentsJson(apiBase: string, cipherId: string, text: string | null | undefined): string {
  if (!text) return 'null';
  const list = Object.entries(parseAttachments(text)).map(([id, meta]) => toAttachmentResponse(id, meta, attachmentUrl(apiBase, cipherId, id)));
  return list.length === 0 ? 'null' : JSON.stringify(list);
}
