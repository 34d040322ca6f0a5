import { Type, type Static } from 'typebox';
import type { Selectable } from 'kysely';
import type { SendsTable } from '../../db/schema.js';
import { EncString, Nullable, NullableDateTime, NullableEncString } from '../../http/schemas.js';
import { readableBytes } from '../../shared/readable-bytes.js';
import { accessIdOf } from './send-id.js';

export type SendRow = Selectable<SendsTable>;

/** SendType: Text 0, File 1 (Item 2 is not offered). */
export enum SendType {
  Text = 0,
  File = 1,
}

/** Send AuthType: Email 0 (a code mailed to listed addresses), Password 1, None 2. */
export enum SendAuthType {
  Email = 0,
  Password = 1,
  None = 2,
}

/** What `sends.data` holds: the encrypted name and notes, and the text or the file's metadata. */
export interface SendData {
  name: string;
  notes: string | null;
  text?: { text: string | null; hidden: boolean };
  file?: { id: string; fileName: string; size: number; validated: boolean; uploadStarted: string };
}

const Bool = Type.Optional(Type.Unsafe<boolean | null>({ type: ['boolean', 'null'] }));

/** SendRequestModel. Dates in any ISO-8601 form; nulls present or absent (the SDK omits them). */
export const SendRequest = Type.Object({
  type: Type.Enum([0, 1], { description: '0 Text, 1 File' }),
  authType: Type.Optional(Nullable(Type.Enum([0, 1, 2], { description: '0 Email, 1 Password, 2 None' }))),
  fileLength: Type.Optional(Nullable(Type.Integer({ minimum: 0 }))),
  name: NullableEncString(1000),
  notes: NullableEncString(1000),
  key: EncString(1000, { description: "The Send's key, encrypted with the user key" }),
  maxAccessCount: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 2_147_483_647 }))),
  expirationDate: Type.Optional(NullableDateTime),
  deletionDate: Type.String({ format: 'date-time' }),
  file: Type.Optional(Nullable(Type.Object({ fileName: NullableEncString(1000) }))),
  text: Type.Optional(Nullable(Type.Object({ text: NullableEncString(1000), hidden: Bool }))),
  password: Type.Optional(Nullable(Type.String({ maxLength: 1000, description: "The client's hash of the Send password (base64)" }))),
  emails: Type.Optional(Nullable(Type.String({ maxLength: 4000, description: 'The addresses that may open an email-verified Send, comma-separated' }))),
  disabled: Type.Boolean(),
  hideEmail: Bool,
});
export type SendRequest = Static<typeof SendRequest>;

export const SendAccessRequest = Type.Object({ password: Type.Optional(Nullable(Type.String({ maxLength: 300 }))) });

const SendFile = Type.Object({ id: Type.String(), fileName: Type.String(), size: Type.String(), sizeName: Type.String() });
const SendText = Type.Object({ text: Nullable(Type.String()), hidden: Type.Boolean() });

export const SendResponse = Type.Object(
  {
    object: Type.Literal('send'),
    id: Type.String(),
    accessId: Type.String(),
    type: Type.Integer(),
    authType: Type.Integer(),
    name: Type.String(),
    notes: Nullable(Type.String()),
    file: Nullable(SendFile),
    text: Nullable(SendText),
    key: Type.String(),
    maxAccessCount: Nullable(Type.Integer()),
    accessCount: Type.Integer(),
    password: Nullable(Type.String()),
    emails: Nullable(Type.String({ description: "An email-verified Send's addresses, lowercased and comma-separated" })),
    disabled: Type.Boolean(),
    revisionDate: Type.String(),
    expirationDate: Nullable(Type.String()),
    deletionDate: Type.String(),
    hideEmail: Type.Boolean(),
  },
  { additionalProperties: false, description: 'A Send as its owner sees it (SendResponseModel)' },
);
export type SendResponse = Static<typeof SendResponse>;

export const SendListResponse = Type.Object({ object: Type.Literal('list'), data: Type.Array(SendResponse), continuationToken: Type.Null() });

export const SendAccessResponse = Type.Object(
  {
    object: Type.Literal('send-access'),
    id: Type.String(),
    type: Type.Integer(),
    authType: Type.Integer(),
    name: Type.String(),
    file: Nullable(SendFile),
    text: Nullable(SendText),
    expirationDate: Nullable(Type.String()),
    creatorIdentifier: Nullable(Type.String()),
  },
  { description: 'A Send as a recipient sees it (SendAccessResponseModel)' },
);

export const SendFileUploadResponse = Type.Object(
  { object: Type.Literal('send-fileUpload'), url: Type.String(), fileUploadType: Type.Literal(0), sendResponse: Nullable(SendResponse) },
  { description: 'Where to upload the file (SendFileUploadDataResponseModel)' },
);

export const SendFileDownloadResponse = Type.Object(
  { object: Type.Literal('send-fileDownload'), id: Type.String(), url: Type.String() },
  { description: 'Where to download the file, for a minute (SendFileDownloadDataResponseModel)' },
);

export function parseSendData(text: string): SendData {
  return JSON.parse(text) as SendData;
}

/** A Send with addresses is email-verified (and has no password), as the official server reads it. */
export function authTypeOf(row: Pick<SendRow, 'password_hash' | 'emails'>): SendAuthType {
  if (row.emails) return SendAuthType.Email;
  return row.password_hash ? SendAuthType.Password : SendAuthType.None;
}

const fileJson = (file: NonNullable<SendData['file']>) => ({ id: file.id, fileName: file.fileName, size: String(file.size), sizeName: readableBytes(file.size) });

export function toSendResponse(row: SendRow): SendResponse {
  const data = parseSendData(row.data);
  return {
    object: 'send',
    id: row.id,
    accessId: accessIdOf(row.id),
    type: row.type,
    authType: authTypeOf(row),
    name: data.name,
    notes: data.notes ?? null,
    file: data.file ? fileJson(data.file) : null,
    text: data.text ? { text: data.text.text ?? null, hidden: Boolean(data.text.hidden) } : null,
    key: row.key,
    maxAccessCount: row.max_access_count,
    accessCount: Number(row.access_count),
    // The official answer carries the stored (server-side) hash; clients only test it for null.
    password: row.password_hash,
    emails: row.emails,
    disabled: Boolean(row.disabled),
    revisionDate: row.revision_date,
    expirationDate: row.expiration_date,
    deletionDate: row.deletion_date,
    hideEmail: Boolean(row.hide_email),
  };
}

/** Where the client uploads a file Send's bytes (Direct upload to this server). */
export function toSendFileUploadResponse(row: SendRow, url: string): Static<typeof SendFileUploadResponse> {
  return { object: 'send-fileUpload', url, fileUploadType: 0, sendResponse: toSendResponse(row) };
}

export function toSendAccessResponse(row: SendRow, creatorEmail: string | null) {
  const data = parseSendData(row.data);
  return {
    object: 'send-access' as const,
    id: accessIdOf(row.id),
    type: row.type,
    authType: authTypeOf(row),
    name: data.name,
    file: data.file ? fileJson(data.file) : null,
    text: data.text ? { text: data.text.text ?? null, hidden: Boolean(data.text.hidden) } : null,
    expirationDate: row.expiration_date,
    creatorIdentifier: creatorEmail,
  };
}
