/**
 * Vault request bodies as the official clients build them: every field a real EncString
 * under the account's user key, so tests can decrypt what the server hands back.
 */
import { encryptText, type SymmetricKey } from './bw-crypto.js';

export type CipherKind = 'login' | 'secureNote' | 'card' | 'identity' | 'sshKey';

export const TYPE_OF: Record<CipherKind, number> = { login: 1, secureNote: 2, card: 3, identity: 4, sshKey: 5 };

/** A full create/update body of one kind, with the fields the CLI sends (nulls included). */
export function cipherBody(kind: CipherKind, key: SymmetricKey, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const e = (text: string) => encryptText(text, key);
  const base: Record<string, unknown> = {
    type: TYPE_OF[kind],
    name: e(`${kind} item`),
    notes: e(`notes of the ${kind}`),
    favorite: false,
    reprompt: 0,
    key: null,
    folderId: null,
    organizationId: null,
    fields: [
      { type: 0, name: e('text field'), value: e('text value'), linkedId: null },
      { type: 1, name: e('hidden field'), value: e('hidden value'), linkedId: null },
      { type: 2, name: e('boolean field'), value: e('true'), linkedId: null },
      { type: 3, name: e('linked field'), value: null, linkedId: 101 },
    ],
    passwordHistory: null,
    lastKnownRevisionDate: null,
    attachments: {},
    attachments2: {},
    login: null,
    secureNote: null,
    card: null,
    identity: null,
    sshKey: null,
  };
  switch (kind) {
    case 'login':
      base.login = {
        response: null,
        uris: [
          { response: null, uri: e('https://example.com/login'), uriChecksum: e('checksum'), match: 0 },
          { response: null, uri: e('https://other.example.com'), uriChecksum: null, match: null },
        ],
        username: e('alice'),
        password: e('s3cret password'),
        passwordRevisionDate: null,
        totp: e('JBSWY3DPEHPK3PXP'),
        autofillOnPageLoad: null,
        fido2Credentials: [
          {
            credentialId: e('cred-id'),
            keyType: e('public-key'),
            keyAlgorithm: e('ECDSA'),
            keyCurve: e('P-256'),
            keyValue: e('key-value'),
            rpId: e('example.com'),
            rpName: e('Example'),
            userHandle: e('handle'),
            userName: e('alice'),
            userDisplayName: e('Alice'),
            counter: e('0'),
            discoverable: e('true'),
            creationDate: '2026-11-01T10:00:00.000Z',
          },
        ],
      };
      base.passwordHistory = [{ password: e('old password'), lastUsedDate: '2026-10-01T10:00:00.000Z' }];
      break;
    case 'secureNote':
      base.secureNote = { type: 0 };
      break;
    case 'card':
      base.card = {
        cardholderName: e('Alice Doe'),
        brand: e('Visa'),
        number: e('4111111111111111'),
        expMonth: e('12'),
        expYear: e('2030'),
        code: e('123'),
      };
      break;
    case 'identity':
      // Written out, not taken from the server's field list, so a field the server drops fails a test.
      base.identity = Object.fromEntries(
        'title firstName middleName lastName address1 address2 address3 city state postalCode country company email phone ssn username passportNumber licenseNumber'
          .split(' ')
          .map((k) => [k, e(`${k} value`)]),
      );
      break;
    case 'sshKey':
      base.sshKey = { privateKey: e('-----BEGIN OPENSSH PRIVATE KEY-----'), publicKey: e('ssh-ed25519 AAAA'), keyFingerprint: e('SHA256:abc') };
      break;
  }
  return { ...base, ...overrides };
}

export const KINDS: CipherKind[] = ['login', 'secureNote', 'card', 'identity', 'sshKey'];

import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import type { TSchema } from 'typebox';
import { ENC_STRING_FORMAT, isEncString } from '../../src/http/enc-string.js';

const ajv = new Ajv({ allErrors: true, strict: false });
addFormats.default(ajv);
ajv.addFormat(ENC_STRING_FORMAT, { type: 'string', validate: isEncString });

/** Checks a response body against its declared schema; returns the errors (empty when it fits). */
export function schemaErrors(schema: TSchema, value: unknown): string[] {
  const validate = ajv.compile(schema);
  return validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message ?? ''}`);
}

/** The fields tests read from cipher responses. */
export interface CipherJson {
  id: string;
  type: number;
  name: string;
  folderId: string | null;
  archivedDate: string | null;
  deletedDate: string | null;
  revisionDate: string;
}

/** `data` of a list response and `ciphers` of a sync response, typed. */
export const dataOf = (body: unknown) => (body as { data: CipherJson[] }).data;
export const ciphersOf = (body: unknown) => (body as { ciphers: CipherJson[] }).ciphers;
