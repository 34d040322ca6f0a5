import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loginAccount, registerAccount } from '../support/accounts.js';
import { createBwCli, type BwCli } from '../support/bw-cli.js';
import type { TestAccount } from '../support/bw-crypto.js';
import { newMasterPassword, type KdfBody } from '../support/master-password-kdf.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { createTestTls } from '../support/tls.js';

/**
 * The official `bw` after a master password change sent in the 2026 web vault's body and after
 * a KDF change to Argon2id: it logs in with the new password and decrypts an item it created
 * before, and the old password is refused. One server, one CLI.
 */
let server: TestServer;
let bw: BwCli;
let account: TestAccount;
let itemId: string;
const FIRST = 'first master password';
const SECOND = 'second master password';
const SECRET = 'the item password that must survive';

const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64');

interface Item {
  id: string;
  name: string;
  login?: { username?: string; password?: string };
}

beforeAll(async () => {
  const tls = await createTestTls();
  server = await startTestServer({ tls });
  account = await registerAccount(server, { email: 'kdf-cli@example.com', password: FIRST, name: 'KDF CLI', derivation: 'real' });
  bw = await createBwCli({ serverUrl: server.baseUrl, caPath: tls.caPath });
  await bw.configServer();
  const login = await bw.login(account.email, FIRST);
  expect(login.code, login.stderr).toBe(0);
  const item = await bw.json<Item>(['create', 'item', encode({ type: 1, name: 'Bank', notes: null, login: { username: 'me', password: SECRET } })]);
  itemId = item.id;
}, 300_000);

afterAll(async () => {
  await bw?.dispose();
  await server?.close();
});

/** Logs `bw` out and in again with `password`, then reads the item created at the start. */
async function loginAndReadItem(password: string): Promise<void> {
  await bw.logout();
  const login = await bw.login(account.email, password);
  expect(login.code, login.stderr).toBe(0);
  const items = await bw.json<Item[]>(['list', 'items']);
  expect(items.map((i) => [i.id, i.name, i.login?.password])).toEqual([[itemId, 'Bank', SECRET]]);
}

async function oldPasswordRefused(password: string): Promise<void> {
  await bw.logout();
  const refused = await bw.login(account.email, password);
  expect(refused.code).toBe(1);
  expect(refused.stderr + refused.stdout).toContain('Invalid master password');
}

describe('official bw client after a password or KDF change', { timeout: 300_000 }, () => {
  const pbkdf2: KdfBody = { kdfType: 0, iterations: 600_000, memory: null, parallelism: null };
  const argon2: KdfBody = { kdfType: 1, iterations: 3, memory: 16, parallelism: 2 };
  let currentHash: string;

  it('logs in with the new password after a change in the 2026 body', async () => {
    const session = await loginAccount(server, account);
    const next = await newMasterPassword(account.email, SECOND, pbkdf2, account.userKey);
    const res = await server.request('POST', '/api/accounts/password', {
      token: session.accessToken,
      json: { masterPasswordHash: account.masterPasswordHash, authenticationData: next.authenticationData, unlockData: next.unlockData, masterPasswordHint: null },
    });
    expect(res.status).toBe(200);
    currentHash = next.masterPasswordHash;
    await oldPasswordRefused(FIRST);
    await loginAndReadItem(SECOND);
  });

  it('logs in with Argon2id after a KDF change, and the PBKDF2 hash no longer does', async () => {
    const session = await loginAccount(server, { ...account, masterPasswordHash: currentHash });
    const next = await newMasterPassword(account.email, SECOND, argon2, account.userKey);
    const res = await server.request('POST', '/api/accounts/kdf', {
      token: session.accessToken,
      json: { masterPasswordHash: currentHash, authenticationData: next.authenticationData, unlockData: next.unlockData },
    });
    expect(res.status).toBe(200);
    await expect(loginAccount(server, { ...account, masterPasswordHash: currentHash })).rejects.toThrow(/400/);
    await loginAndReadItem(SECOND);
    await oldPasswordRefused(FIRST);
  });
});
