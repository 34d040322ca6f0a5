import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedAccount } from '../../../test/support/accounts.js';
import { loadSdk, registrationRequest } from '../../../test/support/sdk-internal.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { KdfType } from '../../platform/auth/kdf.js';
import { hasV2Keys } from './account-keys.js';
import { accountKeysOf } from './accounts.schemas.js';
import { deriveMasterKey, masterPasswordHash } from './client-keys.js';

// The WASM SDK inside the official web vault and browser extension: it makes the version-2
// account here exactly as a 2025.11+ client does, and opens what the server answers.
const sdk = loadSdk();

const PASSWORD = 'a long and careful master password';
const CLIENT = { 'bitwarden-client-version': '2026.9.0', 'device-type': '10' };

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server.close());

function sdkClient(base = server.baseUrl): InstanceType<typeof sdk.PasswordManagerClient> {
  return new sdk.PasswordManagerClient(
    { get_access_token: () => Promise.resolve(undefined) },
    { identityUrl: `${base}/identity`, apiUrl: `${base}/api`, bitwardenClientVersion: '2026.9.0' },
    new sdk.ManagedSettingsClient(),
  );
}

interface V2Account {
  email: string;
  /** What the SDK kept of the registration: the keys as it made them. */
  made: Awaited<ReturnType<ReturnType<ReturnType<InstanceType<typeof sdk.PasswordManagerClient>['auth']>['registration']>['post_keys_for_user_password_registration']>>;
  /** The master password hash the client sends to log in (PBKDF2 of the Argon2id master key). */
  hash: string;
}

let made = 0;

/** Registers through the SDK's own registration (`POST /identity/accounts/register/finish`, version-2 keys). */
async function registerV2(): Promise<V2Account> {
  const email = `v2-${++made}-${Date.now()}@example.com`;
  const token = await server.request('POST', '/identity/accounts/register/send-verification-email', { json: { email, name: 'V2' } });
  expect(token.status).toBe(200);
  const registration = sdkClient().auth().registration();
  const result = await registration.post_keys_for_user_password_registration(registrationRequest(email, PASSWORD, token.body as string));
  const kdf = (result.master_password_unlock.kdf as { argon2id: { iterations: number; memory: number; parallelism: number } }).argon2id;
  const masterKey = await deriveMasterKey(PASSWORD, email, { kdf: KdfType.Argon2id, iterations: kdf.iterations, memory: kdf.memory, parallelism: kdf.parallelism });
  return { email, made: result, hash: await masterPasswordHash(masterKey, PASSWORD) };
}

function login(account: V2Account, headers: Record<string, string> = CLIENT) {
  return server.request('POST', '/identity/connect/token', {
    headers,
    form: {
      grant_type: 'password',
      username: account.email,
      password: account.hash,
      scope: 'api offline_access',
      client_id: 'web',
      deviceType: '10',
      deviceIdentifier: '3d1b9c1e-8f0e-4a53-9a3c-0c6f0a4b5e21',
      deviceName: 'firefox',
    },
  });
}

function v2State(account: V2Account) {
  const state = account.made.account_cryptographic_state as { V2: { private_key: string; signed_public_key: string; signing_key: string; security_state: string } };
  return state.V2;
}

describe('a version-2 account, made by the official SDK', () => {
  let account: V2Account;
  let accessToken: string;
  let token: Record<string, unknown> & { AccountKeys: Record<string, Record<string, unknown>>; UserDecryptionOptions: { MasterPasswordUnlock: Record<string, unknown> } };
  beforeAll(async () => {
    account = await registerV2();
    const res = await login(account);
    expect(res.status, res.text).toBe(200);
    token = res.body;
    accessToken = res.body.access_token as string;
  });

  it('logs in and gets its version-2 keys back unchanged in the token answer', () => {
    const v2 = v2State(account);
    expect(token.PrivateKey).toBe(v2.private_key);
    expect(v2.private_key.startsWith('7.')).toBe(true);
    expect(token.AccountKeys).toMatchObject({
      object: 'privateKeys',
      publicKeyEncryptionKeyPair: { object: 'publicKeyEncryptionKeyPair', wrappedPrivateKey: v2.private_key, signedPublicKey: v2.signed_public_key },
      signatureKeyPair: { object: 'signatureKeyPair', wrappedSigningKey: v2.signing_key },
      securityState: { securityState: v2.security_state, securityVersion: 2 },
    });
    expect(token.UserDecryptionOptions.MasterPasswordUnlock).toMatchObject({
      MasterKeyEncryptedUserKey: account.made.master_password_unlock.masterKeyWrappedUserKey,
      Salt: account.email,
      ContainedKeyId: account.made.master_password_unlock.containedKeyId,
    });
  });

  it('syncs, and the SDK unlocks the account from the sync answer alone', async () => {
    const sync = await server.request('GET', '/api/sync', { token: accessToken, headers: CLIENT });
    expect(sync.status).toBe(200);
    const { profile, userDecryption } = sync.body as {
      profile: { id: string; accountKeys: { publicKeyEncryptionKeyPair: { wrappedPrivateKey: string; publicKey: string; signedPublicKey: string }; signatureKeyPair: { wrappedSigningKey: string; verifyingKey: string }; securityState: { securityState: string; securityVersion: number } } };
      userDecryption: { userKeyId: string; masterPasswordUnlock: { kdf: { kdfType: number; iterations: number; memory: number; parallelism: number }; masterKeyEncryptedUserKey: string; salt: string; containedKeyId: string } };
    };
    expect(profile.accountKeys).toEqual(token.AccountKeys);
    expect(userDecryption.userKeyId).toBe(account.made.master_password_unlock.containedKeyId);
    expect(userDecryption.masterPasswordUnlock.containedKeyId).toBe(userDecryption.userKeyId);

    // Unwrap by hand: the user key with the master password, the private key with the user key.
    const unlock = userDecryption.masterPasswordUnlock;
    const kdf = { argon2id: { iterations: unlock.kdf.iterations, memory: unlock.kdf.memory, parallelism: unlock.kdf.parallelism } };
    const userKey = sdk.PureCrypto.decrypt_user_key_with_master_password(unlock.masterKeyEncryptedUserKey, PASSWORD, account.email, kdf);
    expect(Buffer.from(userKey).toString('base64')).toBe(account.made.user_key);
    const keys = profile.accountKeys;
    const privateKey = sdk.PureCrypto.unwrap_decapsulation_key(keys.publicKeyEncryptionKeyPair.wrappedPrivateKey, userKey);
    expect(Buffer.from(sdk.PureCrypto.rsa_extract_public_key(privateKey)).toString('base64')).toBe(keys.publicKeyEncryptionKeyPair.publicKey);
    const verifyingKey = sdk.PureCrypto.verifying_key_for_signing_key(keys.signatureKeyPair.wrappedSigningKey, userKey);
    expect(Buffer.from(verifyingKey).toString('base64')).toBe(keys.signatureKeyPair.verifyingKey);
    const signed = sdk.PureCrypto.verify_and_unwrap_signed_public_key(Buffer.from(keys.publicKeyEncryptionKeyPair.signedPublicKey, 'base64'), verifyingKey);
    expect(Buffer.from(signed).toString('base64')).toBe(keys.publicKeyEncryptionKeyPair.publicKey);

    // And as a client does: the SDK checks the signatures and the security state while it unlocks.
    const client = sdkClient();
    await client.crypto().initialize_user_crypto({
      userId: profile.id as never,
      kdfParams: kdf,
      email: account.email,
      accountCryptographicState: {
        V2: {
          private_key: keys.publicKeyEncryptionKeyPair.wrappedPrivateKey as never,
          signed_public_key: keys.publicKeyEncryptionKeyPair.signedPublicKey as never,
          signing_key: keys.signatureKeyPair.wrappedSigningKey as never,
          security_state: keys.securityState.securityState,
        },
      },
      method: {
        masterPasswordUnlock: {
          password: PASSWORD,
          master_password_unlock: { kdf, masterKeyWrappedUserKey: unlock.masterKeyEncryptedUserKey as never, salt: unlock.salt, containedKeyId: unlock.containedKeyId as never },
        },
      },
    });
    expect(await client.crypto().get_user_encryption_key()).toBe(account.made.user_key);
  });

  it('stores and returns type-7 (COSE) encrypted strings where type 2 is accepted', async () => {
    const userKey = Buffer.from(account.made.user_key, 'base64');
    const name = sdk.PureCrypto.symmetric_encrypt_string('Bank', userKey);
    expect(name.startsWith('7.')).toBe(true);
    const folder = await server.request('POST', '/api/folders', { token: accessToken, json: { name } });
    expect(folder.status, folder.text).toBe(200);
    const keyId = account.made.master_password_unlock.containedKeyId as string;
    const item = await server.request('POST', '/api/ciphers', {
      token: accessToken,
      json: {
        type: 2,
        name: sdk.PureCrypto.symmetric_encrypt_string('Note', userKey),
        notes: sdk.PureCrypto.symmetric_encrypt_string('a secret', userKey),
        secureNote: { type: 0 },
        folderId: folder.body.id,
        encryptedByKeyId: keyId,
      },
    });
    expect(item.status, item.text).toBe(200);
    const sync = await server.request('GET', '/api/sync', { token: accessToken, headers: CLIENT });
    const stored = (sync.body.ciphers as { id: string; notes: string }[]).find((c) => c.id === item.body.id);
    expect(sdk.PureCrypto.symmetric_decrypt_string(stored!.notes, userKey)).toBe('a secret');
    expect(sdk.PureCrypto.symmetric_decrypt_string((sync.body.folders as { name: string }[])[0]!.name, userKey)).toBe('Bank');
  });

  it('refuses an item encrypted with another user key (encryptedByKeyId), storing nothing', async () => {
    const before = (await server.request('GET', '/api/sync', { token: accessToken })).body.ciphers.length as number;
    const userKey = Buffer.from(account.made.user_key, 'base64');
    const res = await server.request('POST', '/api/ciphers', {
      token: accessToken,
      json: { type: 2, name: sdk.PureCrypto.symmetric_encrypt_string('Old', userKey), secureNote: { type: 0 }, encryptedByKeyId: '0'.repeat(32) },
    });
    expect(res.status).toBe(400);
    expect(res.body.validationErrors).toEqual({ encryptedByKeyId: ['Cipher was not encrypted with the current user key. Please try again.'] });
    expect((await server.request('GET', '/api/sync', { token: accessToken })).body.ciphers).toHaveLength(before);
  });

  it("refuses clients older than 2025.11.0, or that do not say their version, with the official errors", async () => {
    const old = await login(account, { 'bitwarden-client-version': '2025.10.2' });
    expect(old.status).toBe(400);
    expect(old.body).toMatchObject({ error: 'invalid_client_version', ErrorModel: { Message: 'Please update your app to continue using Bitwarden' } });
    const silent = await login(account, {});
    expect(silent.status).toBe(400);
    expect(silent.body.error).toBe('version_header_missing');
    expect((await login(account, { 'bitwarden-client-version': '2025.11.0' })).status).toBe(200);
    // The personal API key (`bw login --apikey`) is held to it as well.
    const row = await server.database.db.selectFrom('users').select(['id', 'api_key']).where('email', '=', account.email).executeTakeFirstOrThrow();
    const apiKey = (headers: Record<string, string>) =>
      server.request('POST', '/identity/connect/token', {
        headers,
        form: { grant_type: 'client_credentials', scope: 'api', client_id: `user.${row.id}`, client_secret: row.api_key, deviceType: '8', deviceIdentifier: '5b0e7d0e-6a3e-4a43-9f7e-2f9a1c1d2e3f', deviceName: 'linux' },
      });
    expect((await apiKey({ 'bitwarden-client-version': '2024.12.0' })).body.error).toBe('invalid_client_version');
    expect((await apiKey(CLIENT)).status).toBe(200);
    // A version-1 account is not held to it.
    const v1 = await seedAccount(server);
    expect(v1.accessToken).toBeTruthy();
  });
});

/** The SDK's own registration body, caught on its way by a stand-in identity server. */
async function sdkRegistrationBody(): Promise<{ email: string; body: Record<string, unknown> }> {
  const email = `caught-${++made}-${Date.now()}@example.com`;
  const { body: token } = await server.request('POST', '/identity/accounts/register/send-verification-email', { json: { email } });
  let captured: Record<string, unknown> | undefined;
  const catcher = createServer((request, response) => {
    let text = '';
    request.on('data', (chunk: Buffer) => (text += chunk.toString()));
    request.on('end', () => {
      captured = JSON.parse(text) as Record<string, unknown>;
      response.setHeader('content-type', 'application/json');
      response.end('{"object":"registerFinish","captchaBypassToken":null}');
    });
  });
  await new Promise<void>((resolve) => catcher.listen(0, '127.0.0.1', resolve));
  const port = (catcher.address() as AddressInfo).port;
  try {
    await sdkClient(`http://127.0.0.1:${port}`).auth().registration().post_keys_for_user_password_registration(registrationRequest(email, token as string));
  } finally {
    await new Promise((resolve) => catcher.close(resolve));
  }
  return { email, body: captured! };
}

describe('registration with account keys', () => {
  async function registerWith(mutate: (keys: Record<string, unknown>) => void) {
    const { email, body } = await sdkRegistrationBody();
    mutate(body.accountKeys as Record<string, unknown>);
    const res = await server.request('POST', '/identity/accounts/register/finish', { json: body });
    const created = await server.database.db.selectFrom('users').select('id').where('email', '=', email).executeTakeFirst();
    return { res, created: Boolean(created) };
  }

  it.each([
    ['without its signed public key', (k: Record<string, Record<string, unknown>>) => (k.publicKeyEncryptionKeyPair!.signedPublicKey = null), 'accountKeys.publicKeyEncryptionKeyPair.signedPublicKey', 'together'],
    ['without its security state', (k: Record<string, Record<string, unknown> | null>) => (k.securityState = null), 'accountKeys.securityState', 'together'],
    ['with an unknown signature algorithm', (k: Record<string, Record<string, unknown>>) => (k.signatureKeyPair!.signatureAlgorithm = 'rsa'), 'accountKeys.signatureKeyPair.signatureAlgorithm', 'Unsupported'],
    ['with a signing key that is no encrypted string', (k: Record<string, Record<string, unknown>>) => (k.signatureKeyPair!.wrappedSigningKey = 'plain'), 'accountKeys.signatureKeyPair.wrappedSigningKey', 'encrypted string'],
  ])('refuses version-2 keys %s with a 400 naming the field, creating no account', async (_name, mutate, field, message) => {
    const { res, created } = await registerWith(mutate as (keys: Record<string, unknown>) => void);
    expect(res.status).toBe(400);
    expect(Object.keys(res.body.validationErrors)).toEqual([field]);
    expect(String(res.body.validationErrors[field][0])).toContain(message);
    expect(created).toBe(false);
  });
});

describe('POST /api/accounts/keys', () => {
  it('sets a whole set of version-2 keys and the user key id on an account without keys, once', async () => {
    const { body } = await sdkRegistrationBody();
    const keys = body.accountKeys as { accountPublicKey: string; userKeyEncryptedAccountPrivateKey: string; publicKeyEncryptionKeyPair: Record<string, unknown> };
    const userKeyId = (body.masterPasswordUnlock as { containedKeyId: string }).containedKeyId;
    const user = await seedAccount(server);
    await server.database.db.updateTable('users').set({ public_key: null, private_key: null }).where('id', '=', user.userId).execute();
    const post = (json: Record<string, unknown>) => server.request('POST', '/api/accounts/keys', { token: user.accessToken, json });
    const flat = { publicKey: keys.accountPublicKey, encryptedPrivateKey: keys.userKeyEncryptedAccountPrivateKey };

    const v1Only = await post({ ...flat, accountKeys: { ...keys, publicKeyEncryptionKeyPair: null, signatureKeyPair: null, securityState: null } });
    expect(v1Only.status).toBe(400);
    expect(v1Only.body.validationErrors).toEqual({ accountKeys: ['AccountKeys are only supported for V2 encryption.'] });

    const set = await post({ ...flat, accountKeys: keys, userKeyId });
    expect(set.status, set.text).toBe(200);
    expect(set.body.accountKeys).toMatchObject({
      publicKeyEncryptionKeyPair: { signedPublicKey: keys.publicKeyEncryptionKeyPair.signedPublicKey },
      signatureKeyPair: { object: 'signatureKeyPair' },
      securityState: { securityVersion: 2 },
    });
    const sync = await server.request('GET', '/api/sync', { token: user.accessToken });
    expect(sync.body.profile.accountKeys).toEqual(set.body.accountKeys);
    expect(sync.body.userDecryption.userKeyId).toBe(userKeyId);
    expect((await post({ publicKey: flat.publicKey, encryptedPrivateKey: '2.AAAA|AAAA|AAAA' })).body.message).toBe('The account already has a key pair.');
  });

  it('refuses, naming the field, version-2 keys on top of the same version-1 pair instead of a 200 storing nothing', async () => {
    const { body } = await sdkRegistrationBody();
    const keys = body.accountKeys as { accountPublicKey: string; userKeyEncryptedAccountPrivateKey: string };
    const userKeyId = (body.masterPasswordUnlock as { containedKeyId: string }).containedKeyId;
    const user = await seedAccount(server);
    await server.database.db.updateTable('users').set({ public_key: keys.accountPublicKey, private_key: keys.userKeyEncryptedAccountPrivateKey }).where('id', '=', user.userId).execute();
    const post = (json: Record<string, unknown>) => server.request('POST', '/api/accounts/keys', { token: user.accessToken, json });
    const flat = { publicKey: keys.accountPublicKey, encryptedPrivateKey: keys.userKeyEncryptedAccountPrivateKey };

    const upgrade = await post({ ...flat, accountKeys: keys, userKeyId });
    expect(upgrade.status).toBe(400);
    expect(Object.keys(upgrade.body.validationErrors)).toEqual(['accountKeys']);
    const newId = await post({ ...flat, userKeyId });
    expect(newId.status).toBe(400);
    expect(Object.keys(newId.body.validationErrors)).toEqual(['userKeyId']);
    const row = await server.database.db.selectFrom('users').selectAll().where('id', '=', user.userId).executeTakeFirstOrThrow();
    expect([row.wrapped_signing_key, row.user_key_id]).toEqual([null, null]);
    expect((await post(flat)).status).toBe(200);
  });

  it('records the user key id with a version-1 pair too, as registration does', async () => {
    const { body } = await sdkRegistrationBody();
    const keys = body.accountKeys as { accountPublicKey: string; userKeyEncryptedAccountPrivateKey: string };
    const userKeyId = (body.masterPasswordUnlock as { containedKeyId: string }).containedKeyId;
    const user = await seedAccount(server);
    await server.database.db.updateTable('users').set({ public_key: null, private_key: null }).where('id', '=', user.userId).execute();
    const set = await server.request('POST', '/api/accounts/keys', { token: user.accessToken, json: { publicKey: keys.accountPublicKey, encryptedPrivateKey: keys.userKeyEncryptedAccountPrivateKey, userKeyId } });
    expect(set.status, set.text).toBe(200);
    expect(set.body.accountKeys.signatureKeyPair).toBeNull();
    const sync = await server.request('GET', '/api/sync', { token: user.accessToken });
    expect(sync.body.userDecryption.userKeyId).toBe(userKeyId);
  });
});

describe('POST /api/accounts/key-management/user-key-id', () => {
  it('records the key id once: sync returns it, the same id again is fine, another is refused', async () => {
    const user = await seedAccount(server);
    const post = (userKeyId: string) => server.request('POST', '/api/accounts/key-management/user-key-id', { token: user.accessToken, json: { userKeyId } });
    const id = 'eac33bab6fc1714c9e984e959f174806';
    expect((await post(id)).status).toBe(200);
    const sync = await server.request('GET', '/api/sync', { token: user.accessToken });
    expect(sync.body.userDecryption).toMatchObject({ userKeyId: id, masterPasswordUnlock: { containedKeyId: id } });
    expect((await post(id)).status).toBe(200);
    const other = await post('0'.repeat(32));
    expect(other.status).toBe(400);
    expect(other.body.message).toBe('User key id is already set.');
    const malformed = await post('not-a-key-id');
    expect(malformed.status).toBe(400);
    expect(Object.keys(malformed.body.validationErrors)).toEqual(['userKeyId']);
  });
});

describe('the one rule for version-2 keys', () => {
  const full = { wrapped_signing_key: '7.AAAA', verifying_key: 'AAAA', security_state: 'AAAA', security_version: 2 };
  it('needs the signature pair and the security state, all four columns', () => {
    expect(hasV2Keys(full)).toBe(true);
    for (const column of Object.keys(full) as (keyof typeof full)[]) expect(hasV2Keys({ ...full, [column]: null })).toBe(false);
  });
  it('the keys answer agrees with the login rule on a half-written set', async () => {
    const user = await seedAccount(server);
    await server.database.db.updateTable('users').set({ wrapped_signing_key: '7.AAAA', security_state: 'AAAA' }).where('id', '=', user.userId).execute();
    const row = await server.database.db.selectFrom('users').selectAll().where('id', '=', user.userId).executeTakeFirstOrThrow();
    expect(hasV2Keys(row)).toBe(false);
    expect(accountKeysOf(row)?.signatureKeyPair).toBeNull();
  });
});
