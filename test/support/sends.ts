/** Request bodies of Sends as the official clients send them, for the Send tests. */
import { ENC as SEND_ENC } from './admin.js';

/** The Send's text, another stand-in for encrypted text (the server checks the shape only). */
export const SEND_TEXT = '2.CCCCCCCCCCCCCCCCCCCCCC==|CCCCCCCCCCCCCCCCCCCCCC==|CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC=';

/** A text Send deleted at `deletionDate`, open to anyone with the link, with `overrides`. */
export function textSendBody(deletionDate: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: 0,
    name: SEND_ENC,
    notes: null,
    key: SEND_ENC,
    maxAccessCount: null,
    expirationDate: null,
    deletionDate,
    text: { text: SEND_TEXT, hidden: false },
    file: null,
    password: null,
    emails: null,
    disabled: false,
    hideEmail: false,
    authType: 2,
    ...overrides,
  };
}

/** A file Send of `size` bytes, announced for upload (`POST /sends/file/v2`). */
export function fileSendBody(deletionDate: string, size: number, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return textSendBody(deletionDate, { type: 1, text: null, file: { fileName: SEND_ENC }, fileLength: size, ...overrides });
}
