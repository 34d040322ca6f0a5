import { PureCrypto } from '@bitwarden/sdk-internal';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loginAccount, registerAccount, type LoggedInUser } from '../support/accounts.js';
import { createBwCli, type BwCli } from '../support/bw-cli.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { createTestTls } from '../support/tls.js';
import { cipherBody } from '../support/vault.js';

/**
 * The official `bw` client (2026.9.0) with a vault holding the item types of 2026: it syncs the
 * answers Strongroom writes (no `data` member, the bankAccount, driversLicense and passport
 * objects) and decrypts every item.
 */
let server: TestServer;
let bw: BwCli;
let user: LoggedInUser;
const PASSWORD = 'item types master password';

beforeAll(async () => {
  const tls = await createTestTls();
  server = await startTestServer({ tls });
  user = await loginAccount(server, await registerAccount(server, { email: 'item-types@example.com', password: PASSWORD, name: 'Types', derivation: 'real' }));
  bw = await createBwCli({ serverUrl: server.baseUrl, caPath: tls.caPath });
  await bw.configServer();
}, 120_000);

afterAll(async () => {
  await bw?.dispose();
  await server?.close();
});

const KINDS = [
  { type: 6, object: 'bankAccount', field: 'iban', value: 'DE89 3704 0044 0532 0130 00' },
  { type: 7, object: 'driversLicense', field: 'licenseNumber', value: 'D123-4567-890' },
  { type: 8, object: 'passport', field: 'passportNumber', value: 'X1234567' },
] as const;

describe('official bw client: bank accounts, driver\'s licenses and passports', { timeout: 300_000 }, () => {
  it('syncs and decrypts a vault holding every item type', async () => {
    const key = new Uint8Array(user.account.userKey.raw);
    const e = (text: string) => PureCrypto.symmetric_encrypt_string(text, key);
    const ids: Record<string, string> = {};
    for (const kind of KINDS) {
      const body = { ...cipherBody('secureNote', user.account.userKey), type: kind.type, name: e(`my ${kind.object}`), secureNote: null, [kind.object]: { [kind.field]: e(kind.value) } };
      const res = await server.request('POST', '/api/ciphers', { token: user.accessToken, json: body });
      expect(res.status, res.text).toBe(200);
      ids[kind.object] = res.body.id as string;
    }
    const login = await server.request('POST', '/api/ciphers', { token: user.accessToken, json: cipherBody('login', user.account.userKey) });

    const res = await bw.login(user.account.email, PASSWORD);
    expect(res.code, res.stderr).toBe(0);
    const items = await bw.json<Record<string, unknown>[]>(['list', 'items']);
    const byId = new Map(items.map((i) => [i.id as string, i]));
    expect(byId.get(login.body.id as string)?.name).toBe('login item');
    for (const kind of KINDS) {
      const item = byId.get(ids[kind.object]!);
      expect(item, kind.object).toMatchObject({ type: kind.type, name: `my ${kind.object}` });
      expect((item?.[kind.object] as Record<string, unknown> | undefined)?.[kind.field], kind.object).toBe(kind.value);
    }
  });
});
