import { BadRequest } from '../../http/errors.js';
import {
  BANK_ACCOUNT_FIELDS,
  CipherType,
  DRIVERS_LICENSE_FIELDS,
  FIDO2_ENCRYPTED_FIELDS,
  IDENTITY_FIELDS,
  PASSPORT_FIELDS,
  TYPE_NAME,
  TYPE_OBJECT,
  type CipherRequest,
} from './ciphers.schemas.js';

/**
 * The encrypted content of an item, stored as one JSON document (ciphers.data) with the keys
 * in response order. It is built here from validated request fields only, so the stored text
 * is known-good JSON that responses embed as it is: sync of a large vault then costs no
 * parsing and no re-serialising of every item.
 *
 * Documents written before the bank account, driver's license and passport types were served
 * have no `bankAccount`, `driversLicense` or `passport` member: every client reads a missing
 * sub-object as null, so they are not rewritten.
 *
 * An item sealed whole (see sealedItemData) has its sealed text as `data` and every other
 * member null, so answers embed it like any other document and send it as the string `data`.
 */
export interface CipherData {
  data?: string;
  name: string | null;
  notes: string | null;
  login: Record<string, unknown> | null;
  card: Record<string, unknown> | null;
  identity: Record<string, unknown> | null;
  secureNote: Record<string, unknown> | null;
  sshKey: Record<string, unknown> | null;
  bankAccount: Record<string, unknown> | null;
  driversLicense: Record<string, unknown> | null;
  passport: Record<string, unknown> | null;
  fields: Record<string, unknown>[] | null;
  passwordHistory: Record<string, unknown>[] | null;
}

type Obj = Record<string, unknown>;

function pick(source: Obj, keys: readonly string[]): Obj {
  const out: Obj = {};
  for (const key of keys) out[key] = source[key] ?? null;
  return out;
}

const LOGIN_KEYS = ['uris', 'username', 'password', 'passwordRevisionDate', 'totp', 'autofillOnPageLoad', 'fido2Credentials'];
const URI_KEYS = ['uri', 'uriChecksum', 'match'];
const FIDO2_KEYS = [...FIDO2_ENCRYPTED_FIELDS, 'creationDate'];
const CARD_KEYS = ['cardholderName', 'brand', 'number', 'expMonth', 'expYear', 'code'];
const SSH_KEYS = ['privateKey', 'publicKey', 'keyFingerprint'];
const FIELD_KEYS = ['type', 'name', 'value', 'linkedId'];
const HISTORY_KEYS = ['password', 'lastUsedDate'];

function login(source: Obj): Obj {
  const out = pick(source, LOGIN_KEYS);
  const uris = source.uris as Obj[] | null | undefined;
  out.uris = uris ? uris.map((u) => pick(u, URI_KEYS)) : null;
  const fido2 = source.fido2Credentials as Obj[] | null | undefined;
  out.fido2Credentials = fido2 ? fido2.map((f) => pick(f, FIDO2_KEYS)) : null;
  return out;
}

const BUILDERS: Record<CipherType, (source: Obj) => Obj> = {
  [CipherType.Login]: login,
  [CipherType.SecureNote]: (s) => ({ type: s.type ?? 0 }),
  [CipherType.Card]: (s) => pick(s, CARD_KEYS),
  [CipherType.Identity]: (s) => pick(s, IDENTITY_FIELDS),
  [CipherType.SSHKey]: (s) => pick(s, SSH_KEYS),
  [CipherType.BankAccount]: (s) => pick(s, BANK_ACCOUNT_FIELDS),
  [CipherType.DriversLicense]: (s) => pick(s, DRIVERS_LICENSE_FIELDS),
  [CipherType.Passport]: (s) => pick(s, PASSPORT_FIELDS),
};

/**
 * The sealed text of an item sealed whole, or null for an item sent field by field. Accounts at
 * security version 2 send their personal items so (sdk-internal's blob encryption): `data` is a
 * JSON object with a top-level `format_version`, encrypted by the client, and there is no name
 * or sub-object. This is the official server's test (Cipher.IsDataBlobEncrypted). A `data` that
 * is not such an object is not a sealed item; it is ignored and the item's fields are read as
 * always, so a client echoing a field-by-field document loses nothing and stores no unchecked
 * text.
 */
export function sealedItemData(data: string | null | undefined): string | null {
  if (typeof data !== 'string' || !data.trimStart().startsWith('{')) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    return null;
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed) || !Object.hasOwn(parsed, 'format_version')) return null;
  // Clients refuse a sealed item whose version they cannot read; one no client could read at all
  // is refused here, before it hides an item from every device.
  const version = (parsed as { format_version: unknown }).format_version;
  if (typeof version !== 'number' || !Number.isInteger(version) || version < 1 || version > 255) {
    throw BadRequest.field('data', 'The format_version of a sealed item must be a whole number from 1 to 255.');
  }
  return data;
}

function emptyData(name: string | null): CipherData {
  return {
    name,
    notes: null,
    login: null,
    card: null,
    identity: null,
    secureNote: null,
    sshKey: null,
    bankAccount: null,
    driversLicense: null,
    passport: null,
    fields: null,
    passwordHistory: null,
  };
}

/**
 * Builds the stored document from a validated request. Only the sub-object of the item's type
 * is kept (as Bitwarden does); it must be present. An item sealed whole keeps its sealed text
 * only: as on the official server, the name and sub-objects sent beside it are dropped.
 */
export function toCipherData(request: CipherRequest): CipherData {
  const type = request.type as CipherType;
  // The request schemas admit only known types; checked here too, so that no caller can store
  // an item of a type without its content.
  if (!Object.hasOwn(TYPE_OBJECT, type)) throw BadRequest.field('type', `Item type ${String(request.type)} is not supported.`);
  const sealed = sealedItemData(request.data);
  if (sealed !== null) return { data: sealed, ...emptyData(null) };
  if (typeof request.name !== 'string') throw BadRequest.field('name', 'The name field is required.');
  const objectName = TYPE_OBJECT[type];
  const source = request[objectName] as Obj | null | undefined;
  if (!source) {
    throw BadRequest.field(objectName, `The ${objectName} field is required for a ${TYPE_NAME[type]} item.`);
  }
  const data: CipherData = {
    ...emptyData(request.name),
    notes: request.notes ?? null,
    fields: request.fields ? request.fields.map((f) => pick(f, FIELD_KEYS)) : null,
    passwordHistory: request.passwordHistory ? request.passwordHistory.map((h) => pick(h, HISTORY_KEYS)) : null,
  };
  data[objectName] = BUILDERS[type](source);
  return data;
}

export function serializeCipherData(data: CipherData): string {
  return JSON.stringify(data);
}
