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
 */
export interface CipherData {
  name: string;
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
 * Builds the stored document from a validated request. Only the sub-object of the item's type
 * is kept (as Bitwarden does); it must be present.
 */
export function toCipherData(request: CipherRequest): CipherData {
  const type = request.type as CipherType;
  // The request schemas admit only known types; checked here too, so that no caller can store
  // an item of a type without its content.
  if (!Object.hasOwn(TYPE_OBJECT, type)) throw BadRequest.field('type', `Item type ${String(request.type)} is not supported.`);
  const objectName = TYPE_OBJECT[type];
  const source = request[objectName] as Obj | null | undefined;
  if (!source) {
    throw BadRequest.field(objectName, `The ${objectName} field is required for a ${TYPE_NAME[type]} item.`);
  }
  const data: CipherData = {
    name: request.name,
    notes: request.notes ?? null,
    login: null,
    card: null,
    identity: null,
    secureNote: null,
    sshKey: null,
    bankAccount: null,
    driversLicense: null,
    passport: null,
    fields: request.fields ? request.fields.map((f) => pick(f, FIELD_KEYS)) : null,
    passwordHistory: request.passwordHistory ? request.passwordHistory.map((h) => pick(h, HISTORY_KEYS)) : null,
  };
  data[objectName] = BUILDERS[type](source);
  return data;
}

export function serializeCipherData(data: CipherData): string {
  return JSON.stringify(data);
}
