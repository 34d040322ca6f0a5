import { Type, type Static, type TSchema } from 'typebox';
import { EncString, Guid, KeyIdString, Nullable, NullableDateTime, NullableEncString } from '../../http/schemas.js';
import { AttachmentResponseSchema } from './attachments.schemas.js';
import { attachmentsJson } from './attachment-data.js';
import type { ItemAccess } from '../../platform/access/grants.js';

/** Bitwarden's CipherType (src/Core/Vault/Enums/CipherType.cs). */
export enum CipherType {
  Login = 1,
  SecureNote = 2,
  Card = 3,
  Identity = 4,
  SSHKey = 5,
  BankAccount = 6,
  DriversLicense = 7,
  Passport = 8,
}

/** Every type the server stores; a request with any other is refused (400 naming `type`). */
export const CIPHER_TYPES = [1, 2, 3, 4, 5, 6, 7, 8] as const;

/** Which sub-object carries the content of each type. */
export const TYPE_OBJECT = {
  [CipherType.Login]: 'login',
  [CipherType.SecureNote]: 'secureNote',
  [CipherType.Card]: 'card',
  [CipherType.Identity]: 'identity',
  [CipherType.SSHKey]: 'sshKey',
  [CipherType.BankAccount]: 'bankAccount',
  [CipherType.DriversLicense]: 'driversLicense',
  [CipherType.Passport]: 'passport',
} as const;

export const TYPE_NAME: Record<CipherType, string> = {
  [CipherType.Login]: 'Login',
  [CipherType.SecureNote]: 'SecureNote',
  [CipherType.Card]: 'Card',
  [CipherType.Identity]: 'Identity',
  [CipherType.SSHKey]: 'SSHKey',
  [CipherType.BankAccount]: 'BankAccount',
  [CipherType.DriversLicense]: 'DriversLicense',
  [CipherType.Passport]: 'Passport',
};

/**
 * `schema` or null. A type list rather than a union keeps validation errors to one message
 * per field. Clients send explicit nulls for everything they do not set.
 */
function nullable<T extends TSchema>(schema: T) {
  const { type } = schema as { type?: string };
  return Type.Optional(Type.Unsafe<Static<T> | null>({ ...schema, type: [type, 'null'] }));
}

const NullableInt = (min: number, max: number) => nullable(Type.Integer({ minimum: min, maximum: max }));

// Encrypted-string length limits are Bitwarden's (CipherRequestModel and its sub-models).
export const LoginUri = Type.Object({
  uri: NullableEncString(10000),
  uriChecksum: NullableEncString(10000),
  /** UriMatchType: Domain 0, Host 1, StartsWith 2, Exact 3, RegularExpression 4, Never 5. */
  match: NullableInt(0, 5),
});

/** The encrypted fields of a passkey (FIDO2 credential); its creationDate is plain. */
export const FIDO2_ENCRYPTED_FIELDS = [
  'credentialId',
  'keyType',
  'keyAlgorithm',
  'keyCurve',
  'keyValue',
  'rpId',
  'rpName',
  'userHandle',
  'userName',
  'userDisplayName',
  'counter',
  'discoverable',
] as const;

export const Fido2Credential = Type.Object({
  ...(Object.fromEntries(FIDO2_ENCRYPTED_FIELDS.map((k) => [k, NullableEncString(1000)])) as Record<
    (typeof FIDO2_ENCRYPTED_FIELDS)[number],
    ReturnType<typeof NullableEncString>
  >),
  creationDate: Type.Optional(NullableDateTime),
});

export const Login = Type.Object({
  uris: nullable(Type.Array(LoginUri)),
  username: NullableEncString(1000),
  password: NullableEncString(5000),
  passwordRevisionDate: Type.Optional(NullableDateTime),
  totp: NullableEncString(1000),
  autofillOnPageLoad: nullable(Type.Boolean()),
  fido2Credentials: nullable(Type.Array(Fido2Credential)),
});

export const Card = Type.Object({
  cardholderName: NullableEncString(1000),
  brand: NullableEncString(1000),
  number: NullableEncString(1000),
  expMonth: NullableEncString(1000),
  expYear: NullableEncString(1000),
  code: NullableEncString(1000),
});

/** The Identity sub-object's fields, in response order. */
export const IDENTITY_FIELDS = [
  'title',
  'firstName',
  'middleName',
  'lastName',
  'address1',
  'address2',
  'address3',
  'city',
  'state',
  'postalCode',
  'country',
  'company',
  'email',
  'phone',
  'ssn',
  'username',
  'passportNumber',
  'licenseNumber',
] as const;

/** A sub-object whose fields are all encrypted strings of at most 1,000 characters (or null), like identity's. */
function encryptedFields<const K extends readonly string[]>(fields: K) {
  return Type.Object(Object.fromEntries(fields.map((k) => [k, NullableEncString(1000)])) as Record<K[number], ReturnType<typeof NullableEncString>>);
}

export const Identity = encryptedFields(IDENTITY_FIELDS);

// The fields of the 2026 item types, in response order, as bitwarden/server names them
// (src/Api/Vault/Models/Cipher{BankAccount,DriversLicense,Passport}Model.cs): all encrypted.
export const BANK_ACCOUNT_FIELDS = ['bankName', 'nameOnAccount', 'accountType', 'accountNumber', 'routingNumber', 'branchNumber', 'pin', 'swiftCode', 'iban', 'bankContactPhone'] as const;
export const DRIVERS_LICENSE_FIELDS = ['firstName', 'middleName', 'lastName', 'dateOfBirth', 'licenseNumber', 'issuingCountry', 'issuingState', 'issueDate', 'issuingAuthority', 'expirationDate', 'licenseClass'] as const;
export const PASSPORT_FIELDS = [
  'surname',
  'givenName',
  'dateOfBirth',
  'sex',
  'birthPlace',
  'nationality',
  'passportNumber',
  'passportType',
  'issuingCountry',
  'issuingAuthority',
  'issueDate',
  'expirationDate',
  'nationalIdentificationNumber',
] as const;

export const BankAccount = encryptedFields(BANK_ACCOUNT_FIELDS);
export const DriversLicense = encryptedFields(DRIVERS_LICENSE_FIELDS);
export const Passport = encryptedFields(PASSPORT_FIELDS);

/** SecureNoteType: Generic 0 is the only kind. */
export const SecureNote = Type.Object({ type: NullableInt(0, 0) });

export const SshKey = Type.Object({
  privateKey: NullableEncString(5000),
  publicKey: NullableEncString(5000),
  keyFingerprint: NullableEncString(1000),
});

/** FieldType: Text 0, Hidden 1, Boolean 2, Linked 3 (linkedId names the linked property). */
export const Field = Type.Object({
  type: Type.Integer({ minimum: 0, maximum: 3 }),
  name: NullableEncString(1000),
  value: NullableEncString(5000),
  linkedId: nullable(Type.Integer()),
});

export const PasswordHistory = Type.Object({
  password: EncString(5000),
  lastUsedDate: Type.String({ format: 'date-time' }),
});

/** The official server's bound on `data` (CipherRequestModel: StringLength(500000)). */
export const SEALED_DATA_MAX_LENGTH = 500_000;

/** What the clients send to create or replace an item (CipherRequestModel). */
export const CipherRequest = Type.Object({
  type: Type.Enum([...CIPHER_TYPES], { description: '1 Login, 2 SecureNote, 3 Card, 4 Identity, 5 SSHKey, 6 BankAccount, 7 DriversLicense, 8 Passport' }),
  organizationId: nullable(Guid),
  folderId: nullable(Guid),
  /** Required unless the item is sealed whole in `data` (cipher-data.ts). */
  name: NullableEncString(1000),
  notes: NullableEncString(10000),
  data: Type.Optional(
    Nullable(
      Type.String({
        maxLength: SEALED_DATA_MAX_LENGTH,
        description: 'An item sealed whole by the client: a JSON object with `format_version`, encrypted; with it, the name and the sub-objects are dropped',
      }),
    ),
  ),
  favorite: nullable(Type.Boolean()),
  /** CipherRepromptType: None 0, Password 1. */
  reprompt: NullableInt(0, 1),
  key: NullableEncString(10000, { description: "The item's own key, encrypted with the user key" }),
  login: nullable(Login),
  card: nullable(Card),
  identity: nullable(Identity),
  secureNote: nullable(SecureNote),
  sshKey: nullable(SshKey),
  bankAccount: nullable(BankAccount),
  driversLicense: nullable(DriversLicense),
  passport: nullable(Passport),
  fields: nullable(Type.Array(Field)),
  passwordHistory: nullable(Type.Array(PasswordHistory)),
  lastKnownRevisionDate: Type.Optional(NullableDateTime),
  /** The key id of the key the client encrypted with (clients 2026.8 on), checked on personal items (encrypted-by.ts). */
  encryptedByKeyId: Type.Optional(Nullable(KeyIdString)),
  /** The attachments' file names and keys, re-encrypted by the client (on a share: for the organization). */
  attachments2: nullable(
    Type.Record(Type.String({ pattern: '^[a-z0-9]{1,64}$' }), Type.Object({ fileName: NullableEncString(1000), key: NullableEncString(1000) }), {
      description: 'Attachment id to its re-encrypted file name and key',
    }),
  ),
});
export type CipherRequest = Static<typeof CipherRequest>;

export const CipherPartialRequest = Type.Object({
  folderId: nullable(Guid),
  favorite: nullable(Type.Boolean()),
});
export type CipherPartialRequest = Static<typeof CipherPartialRequest>;

export const CipherIdsRequest = Type.Object({ ids: Type.Array(Guid) });
export type CipherIdsRequest = Static<typeof CipherIdsRequest>;

export const CipherMoveRequest = Type.Object({ ids: Type.Array(Guid), folderId: nullable(Guid) });
export type CipherMoveRequest = Static<typeof CipherMoveRequest>;

/** `bw import`: new folders, new items, and which item goes in which folder (by index). */
export const ImportCiphersRequest = Type.Object({
  folders: Type.Array(Type.Object({ name: EncString(1000), id: nullable(Type.String()) })),
  ciphers: Type.Array(CipherRequest),
  folderRelationships: Type.Array(Type.Object({ key: Type.Integer({ minimum: 0 }), value: Type.Integer({ minimum: 0 }) })),
});
export type ImportCiphersRequest = Static<typeof ImportCiphersRequest>;

const Permissions = Type.Object({ delete: Type.Boolean(), restore: Type.Boolean() });

function cipherResponse(object: 'cipher' | 'cipherDetails') {
  return Type.Object(
    {
      object: Type.Literal(object),
      id: Guid,
      organizationId: nullable(Guid),
      folderId: nullable(Guid),
      type: Type.Integer(),
      data: Type.Optional(Type.String({ description: 'Only for an item sealed whole: its sealed text, as the client sent it' })),
      name: nullable(Type.String()),
      notes: nullable(Type.String()),
      login: nullable(Login),
      card: nullable(Card),
      identity: nullable(Identity),
      secureNote: nullable(SecureNote),
      sshKey: nullable(SshKey),
      bankAccount: nullable(BankAccount),
      driversLicense: nullable(DriversLicense),
      passport: nullable(Passport),
      fields: nullable(Type.Array(Field)),
      passwordHistory: nullable(Type.Array(PasswordHistory)),
      key: nullable(Type.String()),
      reprompt: Type.Integer(),
      favorite: Type.Boolean(),
      edit: Type.Boolean(),
      viewPassword: Type.Boolean(),
      permissions: Permissions,
      organizationUseTotp: Type.Boolean(),
      attachments: Type.Union([Type.Array(AttachmentResponseSchema), Type.Null()], { description: 'The uploaded attachments, or null when there are none' }),
      ...(object === 'cipherDetails' ? { collectionIds: Type.Array(Guid) } : {}),
      creationDate: Type.String({ format: 'date-time' }),
      revisionDate: Type.String({ format: 'date-time' }),
      deletedDate: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
      archivedDate: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    },
    { additionalProperties: false, description: object === 'cipher' ? 'Cipher (CipherResponseModel)' : 'Cipher with collections (CipherDetailsResponseModel)' },
  );
}

export const CipherResponse = cipherResponse('cipher');
export const CipherDetailsResponse = cipherResponse('cipherDetails');
export const CipherListResponse = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(CipherDetailsResponse),
  continuationToken: Type.Null(),
});
export const CipherResponseList = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(CipherResponse),
  continuationToken: Type.Null(),
});

/** The row columns a cipher response is built from (ciphers joined with the caller's settings). */
export interface CipherResponseRow {
  id: string;
  organization_id: string | null;
  type: number;
  data: string;
  key: string | null;
  reprompt: number;
  creation_date: string;
  revision_date: string;
  deleted_date: string | null;
  folder_id: string | null;
  favorite: number | boolean | null;
  archived_date: string | null;
  /** The attachments document (files/attachment-data.ts); absent or null without attachments. */
  attachments?: string | null;
  access?: ItemAccess;
}

const str = (value: string | null) => (value === null ? 'null' : JSON.stringify(value));

/** The columns an item's shared part is written from: the same for every user who sees the item. */
export type SharedCipherColumns = Pick<
  CipherResponseRow,
  'id' | 'organization_id' | 'type' | 'data' | 'key' | 'reprompt' | 'attachments' | 'creation_date' | 'revision_date' | 'deleted_date'
>;

/** The columns of one user's part of an item: their settings and their rights. */
export type UserCipherColumns = Pick<CipherResponseRow, 'folder_id' | 'favorite' | 'archived_date' | 'access'>;

/**
 * The members of an item's JSON that are the same for every user who sees it, each followed by
 * a comma: the content, key, dates and attachments. Sync keeps this text per item (see
 * item-json-cache.ts) and adds each user's part to it.
 *
 * An item sent field by field has no `data` member. The official server also sends its stored
 * document there as a string; the 2026 clients hand it to the SDK only to tell an item sealed
 * whole (a `format_version` key: sdk-internal's `try_parse_blob`) from one with encrypted
 * fields, and read a missing `data` as the latter, so sending it would add each item's content
 * a second time, escaped, for nothing. An item sealed whole carries its sealed text as the
 * string `data`, with a null name and no sub-objects, as the official server answers it: it is
 * a member of the stored document (cipher-data.ts), so it is embedded like the rest. It must
 * never be an object: clients 2026.7 failed the whole vault on one.
 */
export function cipherSharedJson(row: SharedCipherColumns, apiBase: string): string {
  const content = row.data.slice(1, -1);
  return (
    `"id":${str(row.id)},"organizationId":${str(row.organization_id)},"type":${row.type},${content},"key":${str(row.key)},"reprompt":${row.reprompt},` +
    `"attachments":${attachmentsJson(apiBase, row.id, row.attachments)},` +
    `"creationDate":${str(row.creation_date)},"revisionDate":${str(row.revision_date)},"deletedDate":${str(row.deleted_date)},`
  );
}

/**
 * The members of an item's JSON that belong to one user: folder, favorite and archive, and
 * their rights on an organization item with the collections they see it in.
 */
export function cipherUserJson(row: UserCipherColumns, object: 'cipher' | 'cipherDetails'): string {
  const a = row.access;
  const flag = (value: boolean | undefined) => (value === false ? 'false' : 'true');
  return (
    `"folderId":${str(row.folder_id)},"favorite":${row.favorite ? 'true' : 'false'},` +
    `"edit":${flag(a?.edit)},"viewPassword":${flag(a?.viewPassword)},` +
    `"permissions":{"delete":${flag(a?.delete)},"restore":${flag(a?.restore)}},"organizationUseTotp":${a?.organizationUseTotp ? 'true' : 'false'},` +
    (object === 'cipherDetails' ? `"collectionIds":${JSON.stringify(a?.collectionIds ?? [])},` : '') +
    `"archivedDate":${str(row.archived_date)}`
  );
}

/** One item's JSON from its shared part (cipherSharedJson) and the user's part (cipherUserJson). */
export function joinCipherJson(object: 'cipher' | 'cipherDetails', shared: string, user: string): string {
  return `{"object":"${object}",${shared}${user}}`;
}

/**
 * Writes one item as JSON text, embedding the stored content document (see cipher-data.ts)
 * without parsing it. Every cipher response goes through here or through its two parts, so a
 * single item, a list and sync agree byte for byte; tests check the output against
 * CipherResponse and CipherDetailsResponse. Personal items: the owner may do everything with
 * them; organization items carry the caller's rights and visible collections in `access`
 * (see org-items.ts).
 */
export function cipherJson(row: CipherResponseRow, object: 'cipher' | 'cipherDetails', apiBase: string): string {
  return joinCipherJson(object, cipherSharedJson(row, apiBase), cipherUserJson(row, object));
}

/** `{ object: "list", data: [...] }` around items already written as JSON text. */
export function listJson(items: readonly string[]): string {
  return `{"object":"list","data":[${items.join(',')}],"continuationToken":null}`;
}

/**
 * An item in the organization's admin views (cipherMiniDetails): no folder, favorite or
 * per-user rights, with all the collections holding it.
 */
export function cipherMiniDetailsJson(row: CipherResponseRow, apiBase: string): string {
  return miniJson(row, apiBase, 'cipherMiniDetails', `"collectionIds":${JSON.stringify(row.access?.collectionIds ?? [])},`);
}

/** The shared body of `cipherMini` and `cipherMiniDetails`; `extra` (with its trailing comma) goes before the dates. */
function miniJson(row: CipherResponseRow, apiBase: string, object: 'cipherMini' | 'cipherMiniDetails', extra: string): string {
  const content = row.data.slice(1, -1);
  return (
    `{"object":"${object}","id":${str(row.id)},"organizationId":${str(row.organization_id)},` +
    `"type":${row.type},${content},"key":${str(row.key)},"reprompt":${row.reprompt},` +
    `"organizationUseTotp":${row.access?.organizationUseTotp ? 'true' : 'false'},"attachments":${attachmentsJson(apiBase, row.id, row.attachments)},` +
    extra +
    `"creationDate":${str(row.creation_date)},"revisionDate":${str(row.revision_date)},"deletedDate":${str(row.deleted_date)},` +
    `"archivedDate":${str(row.archived_date)}}`
  );
}

const MINI_FIELDS = ['id', 'organizationId', 'type', 'data', 'name', 'notes', 'login', 'card', 'identity', 'secureNote', 'sshKey', 'bankAccount', 'driversLicense', 'passport', 'fields', 'passwordHistory', 'key', 'reprompt', 'organizationUseTotp', 'attachments', 'creationDate', 'revisionDate', 'deletedDate', 'archivedDate'] as const;

/** CipherMiniResponseModel (`cipherMini`): an item without the per-user fields, as the admin console's item routes answer it. */
export const CipherMiniResponse = Type.Object(
  { object: Type.Literal('cipherMini'), ...Object.fromEntries(MINI_FIELDS.map((name) => [name, CipherResponse.properties[name]])) },
  { additionalProperties: false, description: 'Cipher without per-user fields (CipherMiniResponseModel)' },
);

/** An item as `cipherMini`: no folder, favorite or per-user rights, no collections. */
export function cipherMiniJson(row: CipherResponseRow, apiBase: string): string {
  return miniJson(row, apiBase, 'cipherMini', '');
}
