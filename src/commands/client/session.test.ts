import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedAccount, type LoggedInUser } from '../../../test/support/accounts.js';
import { createOrganization } from '../../../test/support/org-founding.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { CommandFailure } from '../options.js';
import { generateRsaKeyPair } from '../../features/accounts/client-keys.js';
import { decryptString, encryptString, generateSymmetricKey, rsaUnwrap, rsaWrap } from './crypto.js';
import { openUserSession } from './session.js';

let server: TestServer;
let owner: LoggedInUser;

beforeAll(async () => {
  server = await startTestServer({ env: { DEPLOYMENT: 'cloud' } });
  owner = await seedAccount(server, { email: 'session-owner@example.com', derivation: 'real' });
}, 60_000);

afterAll(async () => {
  await server?.close();
});

/** A port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as { port: number }).port;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

async function failureOf(promise: Promise<unknown>): Promise<CommandFailure> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CommandFailure);
  return error as CommandFailure;
}

describe('the client crypto', () => {
  it('opens what it sealed, and nothing sealed under another key', async () => {
    const key = generateSymmetricKey();
    const sealed = encryptString('Default collection', key);
    expect(sealed).toMatch(/^2\.[^|]+\|[^|]+\|[^|]+$/);
    expect(decryptString(sealed, key)).toBe('Default collection');
    expect(() => decryptString(sealed, generateSymmetricKey())).toThrow(/MAC mismatch/);

    const pair = await generateRsaKeyPair();
    const wrapped = rsaWrap(key, pair.publicKeyB64);
    expect(wrapped.startsWith('4.')).toBe(true);
    expect(rsaUnwrap(wrapped, pair.privateKeyDer).equals(key)).toBe(true);
  });
});

describe('openUserSession', () => {
  it("logs in as the official CLI does and unwraps the account's keys and an organization key", async () => {
    const { id: orgId, orgKey } = await createOrganization(server, owner, { name: 'Session Org' });
    const session = await openUserSession({ serverUrl: server.baseUrl, email: owner.account.email, password: owner.account.password });
    try {
      expect(session.userKey.equals(owner.account.userKey.raw)).toBe(true);
      expect(session.privateKeyDer.equals(owner.account.privateKeyDer)).toBe(true);
      expect(session.publicKeyB64).toBe(owner.account.publicKeyB64);
      const profile = await session.request<{ id: string; email: string }>('GET', '/api/accounts/profile');
      expect(profile.id).toBe(owner.userId);
      expect(profile.email).toBe(owner.account.email);
      expect((await session.organizationKey(orgId.toUpperCase())).equals(orgKey.raw)).toBe(true);
    } finally {
      session.close();
    }
  }, 60_000);

  it("answers a refused request with the server's message, exit code 1", async () => {
    const session = await openUserSession({ serverUrl: server.baseUrl, email: owner.account.email, password: owner.account.password });
    const failure = await failureOf(session.request('POST', '/api/organizations', { name: '' }));
    expect(failure.exitCode).toBe(1);
    expect(failure.message).not.toMatch(/^HTTP/);
    const unknown = await failureOf(session.organizationKey('00000000-0000-4000-8000-000000000000'));
    expect(unknown.exitCode).toBe(1);
    session.close();
  }, 60_000);

  it('refuses a wrong password with the server message, exit code 1', async () => {
    const failure = await failureOf(openUserSession({ serverUrl: server.baseUrl, email: owner.account.email, password: 'not the master password' }));
    expect(failure.exitCode).toBe(1);
    expect(failure.message).toBe('The login was refused: Username or password is incorrect. Try again.');
  }, 60_000);

  it('says it cannot reach a server that is not running, exit code 3', async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const failure = await failureOf(openUserSession({ serverUrl: url, email: owner.account.email, password: owner.account.password }));
    expect(failure.exitCode).toBe(3);
    expect(failure.message).toMatch(new RegExp(`^cannot reach ${url}: .*ECONNREFUSED`));
  });
});
