import { randomBytes } from 'node:crypto';

/**
 * Where files sit in the store: a folder per item (`attachments/{cipherId}`) and per Send
 * (`sends/{sendId}`), a file per attachment or Send file. Every writer, delete path and the
 * sweeper (which reads the layout back) goes through these.
 */
export const ATTACHMENTS_AREA = 'attachments';
export const SENDS_AREA = 'sends';
export const attachmentFolder = (cipherId: string) => `${ATTACHMENTS_AREA}/${cipherId}`;
export const sendFolder = (sendId: string) => `${SENDS_AREA}/${sendId}`;
export const fileKey = (cipherId: string, attachmentId: string) => `${attachmentFolder(cipherId)}/${attachmentId}`;
export const sendFileKey = (sendId: string, fileId: string) => `${sendFolder(sendId)}/${fileId}`;

/** Bitwarden's attachment and Send file ids: 32 random lower-case letters and digits. */
export function newFileId(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  return [...randomBytes(32)].map((b) => alphabet[b % alphabet.length]).join('');
}
