import { encryptText, type TestAccount } from '../test/support/bw-crypto.js';
import { cipherBody } from '../test/support/vault.js';

/** Most items are plain logins; one in five carries every field (uris, fields, passkey, history). */
export function itemBody(account: TestAccount, i: number): Record<string, unknown> {
  if (i % 5 === 0) return cipherBody('login', account.userKey);
  const e = (text: string) => encryptText(text, account.userKey);
  return {
    type: 1,
    name: e(`Site ${i}`),
    notes: null,
    favorite: false,
    reprompt: 0,
    login: { uris: [{ uri: e(`https://site${i}.example.com/login`), uriChecksum: null, match: null }], username: e(`user${i}@example.com`), password: e(`p4ssw0rd-${i}-x9!`), totp: null },
    fields: [],
  };
}
