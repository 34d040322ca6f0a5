import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loginAccount, seedAccount, TEST_DEVICE, type LoggedInUser } from '../../../test/support/accounts.js';
import {
  decryptEncString,
  deriveMasterKey,
  encryptText,
  encryptToEncString,
  generateRsaKeyPair,
  generateSymmetricKey,
  masterPasswordHash,
  rsaDecryptEncString,
  rsaEncryptToEncString,
  stretchMasterKey,
  type SymmetricKey,
} from '../../../test/support/bw-crypto.js';
import { SoftAuthenticator, type Options } from '../../../test/support/soft-authenticator.js';
import { CALLER_LIMITS_OFF, startTestServer, type TestServer } from '../../../test/support/test-server.js';
import type { RotateUserAccountKeysRequest as Body } from './key-rotation.schemas.js';

/**
 * A key rotation of an account with a passkey that unlocks the vault: the client re-wraps the new
 * user key for the passkey's PRF key pair (whose public key it reads from the rotation data,
 * encrypted with the old user key), and the passkey login then hands out the new key.
 */
const ORIGIN = 'https://vault.example.com';
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ env: { ...CALLER_LIMITS_OFF, PUBLIC_URL: ORIGIN } });
});
afterAll(async () => server.close());

const db = () => server.database.db;
const api = (user: LoggedInUser, method: string, path: string, json?: unknown) => server.request(method, path, { token: user.accessToken, ...(json === undefined ? {} : { json }) });
const handleOf = (user: LoggedInUser) => Buffer.from(user.userId.replace(/-/g, ''), 'hex').toString('base64url');

interface Passkey {
  id: string;
  key: SoftAuthenticator;
  /** The PRF key pair's private key, which only the passkey's PRF output unwraps. */
  prfPrivateKey: Buffer;
}

/** Registers a passkey as the web vault does; with PRF, the user key wrapped for a new PRF key pair. */
async function registerPasskey(user: LoggedInUser, prf = true): Promise<Passkey> {
  const started = await api(user, 'POST', '/api/webauthn/attestation-options', { masterPasswordHash: user.account.masterPasswordHash });
  expect(started.status, started.text).toBe(200);
  const { options, token } = started.body as { options: Options; token: string };
  const key = new SoftAuthenticator(ORIGIN);
  const pair = generateRsaKeyPair();
  const userKey = user.account.userKey;
  const keys = prf
    ? {
        supportsPrf: true,
        encryptedUserKey: rsaEncryptToEncString(userKey.raw, pair.publicKeyB64),
        encryptedPublicKey: encryptToEncString(Buffer.from(pair.publicKeyB64, 'base64'), userKey),
        // Wrapped with a key from the PRF output, which the server never sees.
        encryptedPrivateKey: encryptToEncString(pair.privateKeyDer, generateSymmetricKey()),
      }
    : { supportsPrf: false };
  const saved = await api(user, 'POST', '/api/webauthn', { deviceResponse: key.register(options), name: 'Laptop', token, ...keys });
  expect(saved.status, saved.text).toBe(200);
  const row = await db().selectFrom('webauthn_credentials').select('id').where('user_id', '=', user.userId).where('credential_id', '=', key.id).executeTakeFirstOrThrow();
  return { id: row.id, key, prfPrivateKey: pair.privateKeyDer };
}

async function passkeyLogin(user: LoggedInUser, passkey: Passkey) {
  const started = await server.request('GET', '/identity/accounts/webauthn/assertion-options');
  const { options, token } = started.body as { options: Options; token: string };
  const deviceResponse = passkey.key.assert(options, { userHandle: handleOf(user) });
  return server.request('POST', '/identity/connect/token', { form: { grant_type: 'webauthn', client_id: 'web', scope: 'api offline_access', ...TEST_DEVICE, token, deviceResponse } });
}

interface PasskeyKeyData {
  object: string;
  id: string;
  encryptedPublicKey: string;
  encryptedUserKey: string;
}

/** The rotation the web vault builds for an empty vault: a new user key, wrapped for each passkey the rotation data lists. */
async function rotationOf(user: LoggedInUser): Promise<{ body: Body; userKey: SymmetricKey }> {
  const data = await api(user, 'GET', '/api/accounts/key-management/key-rotation-data');
  expect(data.status, data.text).toBe(200);
  const { account } = user;
  const userKey = generateSymmetricKey();
  const masterKey = deriveMasterKey('a brand new passphrase', account.email, 1);
  const passkeyUnlockData = (data.body.passkeyKeyData as PasskeyKeyData[]).map((p) => {
    const publicKey = decryptEncString(p.encryptedPublicKey, account.userKey);
    return { id: p.id, encryptedUserKey: rsaEncryptToEncString(userKey.raw, publicKey.toString('base64')), encryptedPublicKey: encryptToEncString(publicKey, userKey) };
  });
  const body = {
    oldMasterKeyAuthenticationHash: account.masterPasswordHash,
    accountUnlockData: {
      masterPasswordUnlockData: {
        kdfType: 0,
        kdfIterations: account.iterations,
        email: account.email,
        masterKeyAuthenticationHash: masterPasswordHash(masterKey, 'a brand new passphrase'),
        masterKeyEncryptedUserKey: encryptToEncString(userKey.raw, stretchMasterKey(masterKey)),
      },
      emergencyAccessUnlockData: [],
      organizationAccountRecoveryUnlockData: [],
      passkeyUnlockData,
      deviceKeyUnlockData: [],
    },
    accountKeys: { userKeyEncryptedAccountPrivateKey: encryptToEncString(account.privateKeyDer, userKey), accountPublicKey: account.publicKeyB64 },
    accountData: { ciphers: [], folders: [], sends: [] },
  } as unknown as Body;
  return { body, userKey };
}

const rotate = (user: LoggedInUser, body: unknown) => api(user, 'POST', '/api/accounts/key-management/rotate-user-account-keys', body);

const passkeyRows = (user: LoggedInUser) =>
  db().selectFrom('webauthn_credentials').select(['id', 'encrypted_user_key', 'encrypted_public_key', 'encrypted_private_key']).where('user_id', '=', user.userId).orderBy('id').execute();

describe('a key rotation with a passkey that unlocks the vault', () => {
  it('lists the passkey in the rotation data, re-wraps it with the new key, and the passkey login then unlocks with the new key', async () => {
    const user = await seedAccount(server);
    const unlocking = await registerPasskey(user);
    const loginOnly = await registerPasskey(user, false);
    const before = await passkeyRows(user);

    const { body, userKey } = await rotationOf(user);
    // Only the passkey holding keys is listed (and so required); the login-only one holds nothing to re-wrap.
    expect(body.accountUnlockData.passkeyUnlockData!.map((p) => p.id)).toEqual([unlocking.id]);
    const res = await rotate(user, body);
    expect(res.status, res.text).toBe(200);

    const after = await passkeyRows(user);
    const rotated = after.find((p) => p.id === unlocking.id);
    expect(rotated).toMatchObject({ encrypted_user_key: body.accountUnlockData.passkeyUnlockData![0]!.encryptedUserKey, encrypted_public_key: body.accountUnlockData.passkeyUnlockData![0]!.encryptedPublicKey });
    // The PRF-wrapped private key stays; the login-only passkey is untouched.
    expect(rotated?.encrypted_private_key).toBe(before.find((p) => p.id === unlocking.id)?.encrypted_private_key);
    expect(after.find((p) => p.id === loginOnly.id)).toEqual(before.find((p) => p.id === loginOnly.id));

    const login = await passkeyLogin(user, unlocking);
    expect(login.status, login.text).toBe(200);
    const option = login.body.UserDecryptionOptions.WebAuthnPrfOption as { EncryptedUserKey: string; CredentialId: string };
    expect(option.CredentialId).toBe(unlocking.key.id);
    expect(rsaDecryptEncString(option.EncryptedUserKey, unlocking.prfPrivateKey).equals(userKey.raw)).toBe(true);
    const sync = await server.request('GET', '/api/sync', { token: login.body.access_token as string });
    expect(sync.body.userDecryption.webAuthnPrfOptions[0].encryptedUserKey).toBe(option.EncryptedUserKey);
    // The next rotation reads the public key encrypted with the new user key.
    const data = await server.request('GET', '/api/accounts/key-management/key-rotation-data', { token: login.body.access_token as string });
    const listed = (data.body.passkeyKeyData as PasskeyKeyData[])[0]!;
    expect(listed.object).toBe('passkeyKeyData');
    expect(decryptEncString(listed.encryptedPublicKey, userKey).length).toBeGreaterThan(0);
  });

  const cases: [string, (b: Body, user: LoggedInUser, extra: Passkey) => void, string, string][] = [
    ['the passkey left out', (b) => (b.accountUnlockData.passkeyUnlockData = []), 'accountUnlockData.passkeyUnlockData', 'All existing webauthn prf keys must be included in the rotation.'],
    ['the list absent', (b) => delete b.accountUnlockData.passkeyUnlockData, 'accountUnlockData.passkeyUnlockData', 'All existing webauthn prf keys must be included in the rotation.'],
    ['the passkey sent twice', (b) => b.accountUnlockData.passkeyUnlockData!.push({ ...b.accountUnlockData.passkeyUnlockData![0]! }), 'accountUnlockData.passkeyUnlockData[1].id', 'more than once'],
    [
      'an unknown id',
      (b, user) => b.accountUnlockData.passkeyUnlockData!.push({ id: randomUUID(), encryptedUserKey: encryptText('k', user.account.userKey), encryptedPublicKey: encryptText('p', user.account.userKey) }),
      'accountUnlockData.passkeyUnlockData[1].id',
      "not one of the account's",
    ],
    [
      "a passkey of the account's that holds no keys",
      (b, user, extra) => b.accountUnlockData.passkeyUnlockData!.push({ id: extra.id, encryptedUserKey: encryptText('k', user.account.userKey), encryptedPublicKey: encryptText('p', user.account.userKey) }),
      'accountUnlockData.passkeyUnlockData[1].id',
      "not one of the account's",
    ],
    ['a wrapped user key that is not an encrypted string', (b) => (b.accountUnlockData.passkeyUnlockData![0]!.encryptedUserKey = 'plain text'), 'accountUnlockData.passkeyUnlockData[0].encryptedUserKey', ''],
    ['no encrypted public key', (b) => delete (b.accountUnlockData.passkeyUnlockData![0] as Partial<{ encryptedPublicKey: string }>).encryptedPublicKey, 'accountUnlockData.passkeyUnlockData[0].encryptedPublicKey', ''],
  ];

  it.each(cases)('refuses %s, naming the field, and writes nothing', async (_name, change, field, message) => {
    const user = await seedAccount(server);
    await registerPasskey(user);
    const extra = await registerPasskey(user, false);
    const { body } = await rotationOf(user);
    change(body, user, extra);
    const before = { passkeys: await passkeyRows(user), key: (await db().selectFrom('users').select('key').where('id', '=', user.userId).executeTakeFirstOrThrow()).key };
    const res = await rotate(user, body);
    expect(res.status, res.text).toBe(400);
    const errors = res.body.validationErrors as Record<string, string[]>;
    expect(Object.keys(errors)).toEqual([field]);
    expect(errors[field]!.join(' ')).toContain(message);
    expect(await passkeyRows(user)).toEqual(before.passkeys);
    expect((await db().selectFrom('users').select('key').where('id', '=', user.userId).executeTakeFirstOrThrow()).key).toBe(before.key);
  });
});

describe('a passkey ceremony a key rotation overtakes', () => {
  /** Rotates the account's keys and logs in again with the new password, as the rotation ends every session. */
  async function rotateAndLogIn(user: LoggedInUser): Promise<LoggedInUser> {
    const { body } = await rotationOf(user);
    const res = await rotate(user, body);
    expect(res.status, res.text).toBe(200);
    const masterPasswordHash = body.accountUnlockData.masterPasswordUnlockData.masterKeyAuthenticationHash;
    return loginAccount(server, { ...user.account, masterPasswordHash });
  }

  it('refuses a passkey whose creation options came before the rotation: its keys wrap the old user key', async () => {
    const user = await seedAccount(server);
    const started = await api(user, 'POST', '/api/webauthn/attestation-options', { masterPasswordHash: user.account.masterPasswordHash });
    expect(started.status, started.text).toBe(200);
    const { options, token } = started.body as { options: Options; token: string };
    const after = await rotateAndLogIn(user);
    const keys = { encryptedUserKey: encryptText('old user key', user.account.userKey), encryptedPublicKey: encryptText('p', user.account.userKey), encryptedPrivateKey: encryptText('k', generateSymmetricKey()) };
    const res = await api(after, 'POST', '/api/webauthn', { deviceResponse: new SoftAuthenticator(ORIGIN).register(options), name: 'Laptop', token, supportsPrf: true, ...keys });
    expect(res.status, res.text).toBe(400);
    expect(res.body.validationErrors).toEqual({ token: ['The token associated with your request is expired. A valid token is required to continue.'] });
    expect(await passkeyRows(user)).toEqual([]);
  });

  it('refuses new keys for a passkey asked for before the rotation, keeping the re-wrapped ones', async () => {
    const user = await seedAccount(server);
    const passkey = await registerPasskey(user);
    const started = await api(user, 'POST', '/api/webauthn/assertion-options', { masterPasswordHash: user.account.masterPasswordHash });
    expect(started.status, started.text).toBe(200);
    const { options, token } = started.body as { options: Options; token: string };
    const after = await rotateAndLogIn(user);
    const rotated = await passkeyRows(user);
    const deviceResponse = JSON.parse(passkey.key.assert(options, { userHandle: handleOf(user) })) as unknown;
    const keys = { encryptedUserKey: encryptText('old user key', user.account.userKey), encryptedPublicKey: encryptText('p', user.account.userKey), encryptedPrivateKey: encryptText('k', generateSymmetricKey()) };
    const res = await api(after, 'PUT', '/api/webauthn', { deviceResponse, token, ...keys });
    expect(res.status, res.text).toBe(400);
    expect(res.body.validationErrors).toEqual({ token: ['The token associated with your request is invalid or has expired. A valid token is required to continue.'] });
    expect(await passkeyRows(user)).toEqual(rotated);
  });
});
