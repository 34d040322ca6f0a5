import { newUserRow } from '../../src/features/accounts/registration.service.js';
import { normalizeEmail } from '../../src/platform/auth/kdf.js';
import { createPasswordHasher } from '../../src/platform/auth/password-hasher.js';
import { insertUser } from '../../src/platform/auth/users.repository.js';
import { DEFAULT_TEST_PASSWORD, makeTestAccount, registerFinishBody, type TestAccount } from './bw-crypto.js';
import { pooledRsaKeyPair } from './key-pool.js';
import type { TestServer } from './test-server.js';

export interface LoggedInUser {
  account: TestAccount;
  userId: string;
  accessToken: string;
  refreshToken: string;
}

const accounts = new Map<string, TestAccount>();

/**
 * How an account's master key is made: 'real' derives it from the password as clients do
 * (needed by any account the official `bw` logs into); 'stand-in', the default for in-process
 * tests, skips the 600,000 iterations the server cannot observe (see makeTestAccount).
 */
export type Derivation = 'real' | 'stand-in';

/**
 * A client-side account for an email. Key derivation and RSA key generation are slow, and every
 * test server has a fresh database, so each email's account is made once per process, with a key
 * pair from the pool made before the run (key-pool.ts).
 */
export function testAccount(email: string, password = DEFAULT_TEST_PASSWORD, name?: string, derivation: Derivation = 'stand-in'): TestAccount {
  const cacheKey = `${email}\n${password}\n${derivation}`;
  let account = accounts.get(cacheKey);
  if (!account) {
    account = makeTestAccount({ email, password, derivation, keyPair: pooledRsaKeyPair(), ...(name ? { name } : {}) });
    accounts.set(cacheKey, account);
  }
  return account;
}

let counter = 0;

/**
 * Forgets the accounts made so far, as a fresh process would: test files share a worker process
 * (vitest.config.ts), and one file's alice@example.com must not carry another file's name.
 */
export function forgetTestAccounts(): void {
  accounts.clear();
  counter = 0;
}

export interface NewAccount {
  email?: string;
  password?: string;
  name?: string;
  derivation?: Derivation;
}

export async function registerAccount(server: TestServer, opts: NewAccount = {}): Promise<TestAccount> {
  const account = testAccount(opts.email ?? `user${++counter}@example.com`, opts.password, opts.name, opts.derivation);
  const res = await server.request('POST', '/identity/accounts/register/finish', {
    json: registerFinishBody(account, { name: account.name }),
  });
  if (res.status !== 200) throw new Error(`registration failed: ${res.status} ${res.text}`);
  return account;
}

export const TEST_DEVICE = { deviceType: '25', deviceIdentifier: 'a7d3a4b2-3f4e-4c3f-9b1a-1f2e3d4c5b6a', deviceName: 'linux' };

/** The password grant's form as the CLI sends it (`POST /identity/connect/token`). */
export function passwordGrantForm(account: TestAccount, device: Record<string, string> = TEST_DEVICE): Record<string, string> {
  return {
    grant_type: 'password',
    username: account.email,
    password: account.masterPasswordHash,
    scope: 'api offline_access',
    client_id: 'cli',
    ...device,
  };
}

export async function loginAccount(server: TestServer, account: TestAccount, form: Record<string, string> = {}): Promise<LoggedInUser> {
  const res = await server.request('POST', '/identity/connect/token', { form: { ...passwordGrantForm(account), ...form } });
  if (res.status !== 200) throw new Error(`login failed: ${res.status} ${res.text}`);
  const payload = JSON.parse(Buffer.from(String(res.body.access_token).split('.')[1] ?? '', 'base64url').toString()) as { sub: string };
  return { account, userId: payload.sub, accessToken: res.body.access_token, refreshToken: res.body.refresh_token };
}

/** Registers through the real endpoint and logs in through the real password grant. */
export async function createUser(server: TestServer, opts: NewAccount = {}): Promise<LoggedInUser> {
  return loginAccount(server, await registerAccount(server, opts));
}

/**
 * The server-side hash of seeded accounts: the production scheme with one iteration. The
 * iteration count is stored with each hash and verification follows it, so logging in as a
 * seeded account is cheap too, whatever PASSWORD_ITERATIONS the server runs with.
 */
const seedHasher = createPasswordHasher({ iterations: 1 });

/**
 * An account ready to use, for tests that are not about registration or login: the row that
 * registration (`/identity/accounts/register/finish`) writes, inserted directly with a cheap hash
 * of the same master password hash, then logged in through the real password grant (device,
 * event and tokens as `createUser` gets them). Saves the two slow hashes of registering and
 * logging in; it writes the row registration writes (newUserRow), and
 * test/support/accounts.test.ts checks the two accounts behave alike.
 */
export async function seedAccount(server: TestServer, opts: NewAccount = {}): Promise<LoggedInUser> {
  const account = testAccount(opts.email ?? `user${++counter}@example.com`, opts.password, opts.name, opts.derivation);
  const row = newUserRow(
    {
      email: normalizeEmail(account.email),
      name: account.name.trim() || null,
      masterPasswordHash: await seedHasher.hash(account.masterPasswordHash),
      hint: null,
      key: account.encryptedUserKey,
      publicKey: account.publicKeyB64,
      privateKey: account.encryptedPrivateKey,
      kdf: { kdf: 0, iterations: account.iterations, memory: null, parallelism: null },
    },
    server.clock.now().toISOString(),
  );
  await insertUser(server.database.db, row);
  return loginAccount(server, account);
}
