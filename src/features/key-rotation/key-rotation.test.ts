import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loginAccount, seedAccount, type LoggedInUser } from '../../../test/support/accounts.js';
import {
  decryptEncString,
  decryptText,
  deriveMasterKey,
  encryptText,
  encryptToEncString,
  generateRsaKeyPair,
  generateSymmetricKey,
  keyId,
  masterPasswordHash,
  rsaDecryptEncString,
  rsaEncryptToEncString,
  stretchMasterKey,
  symmetricKeyFrom,
  type SymmetricKey,
} from '../../../test/support/bw-crypto.js';
import { seedMembership, seedOrganization } from '../../../test/support/orgs.js';
import { recordingPushes, type RecordedPushes } from '../../../test/support/pushes.js';
import { textSendBody } from '../../../test/support/sends.js';
import { CALLER_LIMITS_OFF, startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { cipherBody, type CipherKind } from '../../../test/support/vault.js';
import { createAuditLog } from '../../platform/audit/audit-log.js';
import { EventType } from '../../platform/audit/event-type.js';
import { createPasswordHasher, type PasswordHasher } from '../../platform/auth/password-hasher.js';
import { PushType } from '../../platform/push/pushes.js';
import type { RotateUserAccountKeysRequest as Body } from './key-rotation.schemas.js';
import { createKeyRotation } from './key-rotation.service.js';

let server: TestServer;
let pushes: RecordedPushes;
beforeAll(async () => {
  pushes = recordingPushes();
  server = await startTestServer({ pushes, env: CALLER_LIMITS_OFF });
});
afterAll(async () => server.close());

const ROTATE = '/api/accounts/key-management/rotate-user-account-keys';
const db = () => server.database.db;

/**
 * An account with what a rotation must carry: a login and a note in the trash, a folder, a Send,
 * an emergency contact in recovery (and one not confirmed yet, holding no key), an enrollment in
 * account recovery, and an organization item that is not the user's to rotate.
 */
interface Vault {
  user: LoggedInUser;
  items: { id: string; kind: CipherKind }[];
  folderId: string;
  sendId: string;
  grantId: string;
  pendingGrantId: string;
  grantee: LoggedInUser;
  organizationId: string;
  orgPublicKey: string;
  orgPrivateKey: Buffer;
  orgItemId: string;
}

async function api(user: LoggedInUser, method: string, path: string, json?: unknown) {
  const res = await server.request(method, path, { token: user.accessToken, ...(json === undefined ? {} : { json }) });
  if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${res.text}`);
  return res.body as Record<string, unknown>;
}

async function seedVault(): Promise<Vault> {
  const user = await seedAccount(server);
  const key = user.account.userKey;
  const folderId = (await api(user, 'POST', '/api/folders', { name: encryptText('Work', key) })).id as string;
  const login = (await api(user, 'POST', '/api/ciphers', cipherBody('login', key, { folderId, favorite: true }))).id as string;
  const note = (await api(user, 'POST', '/api/ciphers', cipherBody('secureNote', key))).id as string;
  await api(user, 'PUT', `/api/ciphers/${note}/delete`);
  const deletionDate = new Date(Date.now() + 86_400_000).toISOString();
  const sendId = (await api(user, 'POST', '/api/sends', textSendBody(deletionDate, { key: encryptToEncString(randomBytes(16), key) }))).id as string;

  const grantee = await seedAccount(server);
  const now = new Date().toISOString();
  const grant = (status: number, keyEncrypted: string | null) => ({
    id: randomUUID(),
    grantor_id: user.userId,
    grantee_id: grantee.userId,
    email: null,
    key_encrypted: keyEncrypted,
    type: 1,
    status,
    wait_time_days: 7,
    recovery_initiated_date: status >= 3 ? now : null,
    last_notification_date: null,
    creation_date: now,
    revision_date: now,
  });
  const inRecovery = grant(3, rsaEncryptToEncString(key.raw, grantee.account.publicKeyB64));
  const pending = grant(1, null);
  await db().insertInto('emergency_access').values([inRecovery, pending]).execute();

  const orgKeys = generateRsaKeyPair();
  const organizationId = await seedOrganization(server, { overrides: { public_key: orgKeys.publicKeyB64 } });
  const membership = await seedMembership(server, { organizationId, userId: user.userId });
  await db()
    .updateTable('organization_users')
    .set({ reset_password_key: rsaEncryptToEncString(key.raw, orgKeys.publicKeyB64) })
    .where('id', '=', membership)
    .execute();
  const orgItemId = randomUUID();
  await db()
    .insertInto('ciphers')
    .values({ id: orgItemId, user_id: null, organization_id: organizationId, type: 2, data: '{}', key: null, reprompt: 0, attachments: null, creation_date: now, revision_date: now, deleted_date: null })
    .execute();
  return {
    user,
    items: [
      { id: login, kind: 'login' },
      { id: note, kind: 'secureNote' },
    ],
    folderId,
    sendId,
    grantId: inRecovery.id,
    pendingGrantId: pending.id,
    grantee,
    organizationId,
    orgPublicKey: orgKeys.publicKeyB64,
    orgPrivateKey: orgKeys.privateKeyDer,
    orgItemId,
  };
}

interface Rotation {
  body: Body;
  userKey: SymmetricKey;
  newHash: string;
  masterKey: Buffer;
}

/** The request a client builds: everything re-encrypted with a new user key, and a new master password. */
function rotationOf(vault: Vault, newPassword = 'a brand new passphrase'): Rotation {
  const { account } = vault.user;
  const userKey = generateSymmetricKey();
  // The server cannot tell how many iterations made the master key (seeded accounts use one, see testAccount).
  const masterKey = deriveMasterKey(newPassword, account.email, 1);
  const newHash = masterPasswordHash(masterKey, newPassword);
  const body = {
    oldMasterKeyAuthenticationHash: account.masterPasswordHash,
    accountUnlockData: {
      masterPasswordUnlockData: {
        kdfType: 0,
        kdfIterations: account.iterations,
        kdfMemory: null,
        kdfParallelism: null,
        email: account.email,
        masterKeyAuthenticationHash: newHash,
        masterKeyEncryptedUserKey: encryptToEncString(userKey.raw, stretchMasterKey(masterKey)),
        masterPasswordHint: 'the new one',
      },
      emergencyAccessUnlockData: [{ id: vault.grantId, keyEncrypted: rsaEncryptToEncString(userKey.raw, vault.grantee.account.publicKeyB64) }],
      organizationAccountRecoveryUnlockData: [{ organizationId: vault.organizationId, resetPasswordKey: rsaEncryptToEncString(userKey.raw, vault.orgPublicKey) }],
      passkeyUnlockData: [],
      deviceKeyUnlockData: [],
    },
    accountKeys: {
      userKeyEncryptedAccountPrivateKey: encryptToEncString(account.privateKeyDer, userKey),
      accountPublicKey: account.publicKeyB64,
      publicKeyEncryptionKeyPair: null,
      signatureKeyPair: null,
      securityState: null,
    },
    accountData: {
      ciphers: vault.items.map(({ id, kind }) => ({ ...cipherBody(kind, userKey, kind === 'login' ? { folderId: vault.folderId } : {}), id })),
      folders: [{ id: vault.folderId, name: encryptText('Work', userKey) }],
      sends: [{ ...textSendBody(new Date(Date.now() + 86_400_000).toISOString(), { key: encryptToEncString(randomBytes(16), userKey) }), id: vault.sendId }],
    },
  } as unknown as Body;
  return { body, userKey, newHash, masterKey };
}

const prepared = seedVault;

/** Everything a rotation writes, to show a refused one wrote none of it. */
async function snapshot(vault: Vault) {
  const userId = vault.user.userId;
  return {
    user: await db().selectFrom('users').select(['key', 'private_key', 'master_password_hash', 'security_stamp', 'master_password_hint', 'account_revision_date']).where('id', '=', userId).executeTakeFirstOrThrow(),
    ciphers: await db().selectFrom('ciphers').select(['id', 'data', 'revision_date']).where('user_id', '=', userId).orderBy('id').execute(),
    folders: await db().selectFrom('folders').select(['id', 'name']).where('user_id', '=', userId).orderBy('id').execute(),
    sends: await db().selectFrom('sends').select(['id', 'key', 'data']).where('user_id', '=', userId).orderBy('id').execute(),
    grants: await db().selectFrom('emergency_access').select(['id', 'key_encrypted', 'status']).where('grantor_id', '=', userId).orderBy('id').execute(),
    recovery: await db().selectFrom('organization_users').select(['reset_password_key']).where('user_id', '=', userId).execute(),
    events: await db().selectFrom('events').select('type').where('user_id', '=', userId).where('type', '=', EventType.User_RotatedKeys).execute(),
  };
}

const rotate = (vault: Vault, body: unknown) => server.request('POST', ROTATE, { token: vault.user.accessToken, json: body });

describe('POST /api/accounts/key-management/rotate-user-account-keys', () => {
  it('re-encrypts the whole account with the new key in one go and ends every session', async () => {
    const vault = await prepared();
    const { body, userKey, newHash, masterKey } = rotationOf(vault);
    pushes.clear();
    const res = await server.request('POST', ROTATE, { token: vault.user.accessToken, json: body, headers: { 'device-identifier': randomUUID() } });
    expect(res.status, res.text).toBe(200);

    const user = await db().selectFrom('users').selectAll().where('id', '=', vault.user.userId).executeTakeFirstOrThrow();
    expect(decryptEncString(user.key as string, stretchMasterKey(masterKey))).toEqual(userKey.raw);
    expect(decryptEncString(user.private_key as string, userKey)).toEqual(vault.user.account.privateKeyDer);
    expect(user.public_key).toBe(vault.user.account.publicKeyB64);
    expect(user.master_password_hint).toBe('the new one');
    expect(user.user_key_id).toBeNull();

    const grants = await db().selectFrom('emergency_access').selectAll().where('grantor_id', '=', vault.user.userId).execute();
    const rewrapped = grants.find((g) => g.id === vault.grantId)!;
    expect(rsaDecryptEncString(rewrapped.key_encrypted as string, vault.grantee.account.privateKeyDer)).toEqual(userKey.raw);
    expect(rewrapped).toMatchObject({ status: 2, recovery_initiated_date: null });
    expect(grants.find((g) => g.id === vault.pendingGrantId)).toMatchObject({ status: 1, key_encrypted: null });
    const membership = await db().selectFrom('organization_users').select('reset_password_key').where('user_id', '=', vault.user.userId).executeTakeFirstOrThrow();
    expect(rsaDecryptEncString(membership.reset_password_key as string, vault.orgPrivateKey)).toEqual(userKey.raw);
    expect((await snapshot(vault)).events).toHaveLength(1);
    // Every device, the rotating one too: the push names no context to skip.
    expect(pushes.of(PushType.LogOut).map((p) => [p.target, p.contextId])).toEqual([[{ user: vault.user.userId }, null]]);

    // The old tokens and the old password are refused; the new password logs in and reads everything with the new key.
    expect((await server.request('GET', '/api/sync', { token: vault.user.accessToken })).status).toBe(401);
    const refresh = await server.request('POST', '/identity/connect/token', { form: { grant_type: 'refresh_token', client_id: 'cli', refresh_token: vault.user.refreshToken } });
    expect(refresh.status).toBe(400);
    await expect(loginAccount(server, vault.user.account)).rejects.toThrow(/login failed: 400/);
    const again = await loginAccount(server, { ...vault.user.account, masterPasswordHash: newHash });
    const sync = await api(again, 'GET', '/api/sync');
    const ciphers = sync.ciphers as { id: string; name: string; deletedDate: string | null; folderId: string | null; favorite: boolean; organizationId: string | null }[];
    const own = ciphers.filter((c) => !c.organizationId);
    expect(own.map((c) => decryptText(c.name, userKey)).sort()).toEqual(['login item', 'secureNote item']);
    expect(own.find((c) => c.id === vault.items[1]!.id)!.deletedDate).not.toBeNull();
    expect(own.find((c) => c.id === vault.items[0]!.id)).toMatchObject({ folderId: vault.folderId, favorite: true });
    expect(decryptText((sync.folders as { name: string }[])[0]!.name, userKey)).toBe('Work');
    const send = (sync.sends as { key: string }[])[0]!;
    expect(decryptEncString(send.key, userKey)).toHaveLength(16);
    expect((sync.profile as { key: string }).key).toBe(user.key);
    const orgItem = await db().selectFrom('ciphers').select('data').where('id', '=', vault.orgItemId).executeTakeFirstOrThrow();
    expect(orgItem.data).toBe('{}');
  });

  it('also rotates with the same password', async () => {
    const vault = await prepared();
    const rotation = rotationOf(vault, vault.user.account.password);
    const res = await rotate(vault, rotation.body);
    expect(res.status, res.text).toBe(200);
    const again = await loginAccount(server, vault.user.account);
    const profile = await api(again, 'GET', '/api/accounts/profile');
    expect(symmetricKeyFrom(decryptEncString(profile.key as string, stretchMasterKey(vault.user.account.masterKey))).raw).toEqual(rotation.userKey.raw);
  });

  const refusals: [string, (body: Body, vault: Vault) => void, string, string][] = [
    ['a missing item (the trashed one)', (b) => b.accountData.ciphers.pop(), 'accountData.ciphers', 'All existing ciphers must be included in the rotation.'],
    ['an extra item', (b) => b.accountData.ciphers.push({ ...b.accountData.ciphers[0]!, id: randomUUID() }), 'accountData.ciphers[2].id', 'Sync and try again'],
    ['an item sent twice', (b) => b.accountData.ciphers.push(b.accountData.ciphers[0]!), 'accountData.ciphers[2].id', 'more than once'],
    ["an organization's item", (b, v) => b.accountData.ciphers.push({ ...b.accountData.ciphers[1]!, id: v.orgItemId }), 'accountData.ciphers[2].id', 'Sync and try again'],
    ['a missing folder', (b) => (b.accountData.folders = []), 'accountData.folders', 'All existing folders must be included in the rotation.'],
    ['a missing Send', (b) => (b.accountData.sends = []), 'accountData.sends', 'All existing sends must be included in the rotation.'],
    ['a missing emergency access grant', (b) => (b.accountUnlockData.emergencyAccessUnlockData = []), 'accountUnlockData.emergencyAccessUnlockData', 'All existing emergency access keys must be included in the rotation.'],
    [
      'a grant without a key (not confirmed)',
      (b, v) => b.accountUnlockData.emergencyAccessUnlockData!.push({ id: v.pendingGrantId, keyEncrypted: b.accountUnlockData.emergencyAccessUnlockData![0]!.keyEncrypted }),
      'accountUnlockData.emergencyAccessUnlockData[1].id',
      'Sync and try again',
    ],
    [
      'a missing recovery enrollment',
      (b) => (b.accountUnlockData.organizationAccountRecoveryUnlockData = []),
      'accountUnlockData.organizationAccountRecoveryUnlockData',
      'All existing reset password keys must be included in the rotation.',
    ],
    ['a wrong old master password hash', (b) => (b.oldMasterKeyAuthenticationHash = Buffer.alloc(32).toString('base64')), 'oldMasterKeyAuthenticationHash', 'Incorrect password.'],
    ['a KDF change', (b) => (b.accountUnlockData.masterPasswordUnlockData.kdfIterations = 700_000), 'accountUnlockData.masterPasswordUnlockData.kdfIterations', "KDF settings must stay the account's"],
    ['a move to Argon2id', (b) => Object.assign(b.accountUnlockData.masterPasswordUnlockData, { kdfType: 1, kdfIterations: 3, kdfMemory: 64, kdfParallelism: 4 }), 'accountUnlockData.masterPasswordUnlockData.kdfType', "KDF settings must stay the account's"],
    ['a salt change (another email)', (b) => (b.accountUnlockData.masterPasswordUnlockData.email = 'someone.else@example.com'), 'accountUnlockData.masterPasswordUnlockData.email', 'email or salt'],
    ['another public key', (b) => (b.accountKeys.accountPublicKey = generateRsaKeyPair().publicKeyB64), 'accountKeys.accountPublicKey', 'must stay the same'],
    [
      'no account keys in either form',
      (b) => Object.assign(b.accountKeys, { userKeyEncryptedAccountPrivateKey: null, accountPublicKey: null, publicKeyEncryptionKeyPair: null }),
      'accountKeys.userKeyEncryptedAccountPrivateKey',
      'account keys are required',
    ],
    ['a malformed new user key id', (b) => Object.assign(b, { newUserKeyId: 'not a key id' }), 'newUserKeyId', ''],
    [
      'a signature key pair without the rest of the version-2 keys',
      (b) => Object.assign(b.accountKeys, { signatureKeyPair: { signatureAlgorithm: 'ed25519', wrappedSigningKey: '7.AAAA', verifyingKey: 'AAAA' } }),
      'accountKeys.publicKeyEncryptionKeyPair',
      'together',
    ],
    [
      'an unknown signature algorithm',
      (b) =>
        Object.assign(b.accountKeys, {
          publicKeyEncryptionKeyPair: { wrappedPrivateKey: '7.AAAA', publicKey: b.accountKeys.accountPublicKey, signedPublicKey: 'AAAA' },
          signatureKeyPair: { signatureAlgorithm: 'rsa', wrappedSigningKey: '7.AAAA', verifyingKey: 'AAAA' },
          securityState: { securityState: 'AAAA', securityVersion: 2 },
        }),
      'accountKeys.signatureKeyPair.signatureAlgorithm',
      'Unsupported signature algorithm',
    ],
    [
      'a passkey this server does not hold',
      (b, v) => b.accountUnlockData.passkeyUnlockData!.push({ id: randomUUID(), encryptedUserKey: encryptText('k', v.user.account.userKey), encryptedPublicKey: encryptText('p', v.user.account.userKey) }),
      'accountUnlockData.passkeyUnlockData[0].id',
      "not one of the account's",
    ],
    ['an item name that is no EncString', (b) => (b.accountData.ciphers[0]!.name = 'plain text'), 'accountData.ciphers[0].name', ''],
    ['an item changing type', (b, v) => (b.accountData.ciphers[1] = { ...cipherBody('card', v.user.account.userKey), id: b.accountData.ciphers[1]!.id } as unknown as Body['accountData']['ciphers'][number]), 'accountData.ciphers[1].type', "cannot change an item's type"],
    ['a Send changing type', (b) => Object.assign(b.accountData.sends[0]!, { type: 1, file: { fileName: b.accountData.sends[0]!.name } }), 'accountData.sends[0].type', 'type'],
  ];

  it("rotates an account whose KDF is below today's minimum, keeping it, and sets the hint the request sends", async () => {
    const vault = await prepared();
    // Made when 5,000 iterations were allowed: the rotation only requires the KDF to stay as it is.
    await db().updateTable('users').set({ kdf_iterations: 5_000, master_password_hint: 'the old hint' }).where('id', '=', vault.user.userId).execute();
    const { body } = rotationOf(vault);
    body.accountUnlockData.masterPasswordUnlockData.kdfIterations = 5_000;
    delete body.accountUnlockData.masterPasswordUnlockData.masterPasswordHint;
    const res = await rotate(vault, body);
    expect(res.status, res.text).toBe(200);
    const user = await db().selectFrom('users').select(['kdf', 'kdf_iterations', 'master_password_hint']).where('id', '=', vault.user.userId).executeTakeFirstOrThrow();
    expect(user).toEqual({ kdf: 0, kdf_iterations: 5_000, master_password_hint: null });
  });

  it("keeps the new user key's id when the client sends it", async () => {
    const vault = await prepared();
    const { body, userKey } = rotationOf(vault);
    Object.assign(body, { newUserKeyId: keyId(userKey).toUpperCase() });
    const res = await rotate(vault, body);
    expect(res.status, res.text).toBe(200);
    expect(await db().selectFrom('users').select('user_key_id').where('id', '=', vault.user.userId).executeTakeFirstOrThrow()).toEqual({ user_key_id: keyId(userKey) });
  });

  it('upgrades a version-1 account to version-2 keys, and then refuses a rotation back to version 1', async () => {
    const vault = await prepared();
    const { body } = rotationOf(vault);
    // Shapes only: the server stores these without opening them (docs/account-keys.md).
    const v2 = {
      publicKeyEncryptionKeyPair: { wrappedPrivateKey: '7.AAAA', publicKey: vault.user.account.publicKeyB64, signedPublicKey: 'c2lnbmVk' },
      signatureKeyPair: { signatureAlgorithm: 'ed25519', wrappedSigningKey: '7.BBBB', verifyingKey: 'dmVyaWZ5' },
      securityState: { securityState: 'c3RhdGU=', securityVersion: 2 },
    };
    Object.assign(body.accountKeys, v2);
    const res = await rotate(vault, body);
    expect(res.status, res.text).toBe(200);
    const user = await db().selectFrom('users').selectAll().where('id', '=', vault.user.userId).executeTakeFirstOrThrow();
    expect(user).toMatchObject({
      private_key: '7.AAAA',
      signed_public_key: 'c2lnbmVk',
      signature_algorithm: 'ed25519',
      wrapped_signing_key: '7.BBBB',
      verifying_key: 'dmVyaWZ5',
      security_state: 'c3RhdGU=',
      security_version: 2,
    });

    const again = await prepared();
    await db().updateTable('users').set({ wrapped_signing_key: '7.BBBB', verifying_key: 'dmVyaWZ5', security_state: 'c3RhdGU=', security_version: 2, signed_public_key: 'c2lnbmVk', signature_algorithm: 'ed25519' }).where('id', '=', again.user.userId).execute();
    const back = await rotate(again, rotationOf(again).body);
    expect(back.status).toBe(400);
    expect(Object.keys(back.body.validationErrors)).toEqual(['accountKeys.signatureKeyPair']);
  });

  it('takes the account keys from publicKeyEncryptionKeyPair alone, as later clients may send them', async () => {
    const vault = await prepared();
    const { body, userKey } = rotationOf(vault);
    const wrapped = body.accountKeys.userKeyEncryptedAccountPrivateKey!;
    body.accountKeys = { userKeyEncryptedAccountPrivateKey: null, accountPublicKey: null, publicKeyEncryptionKeyPair: { wrappedPrivateKey: wrapped, publicKey: vault.user.account.publicKeyB64, signedPublicKey: null } };
    const res = await rotate(vault, body);
    expect(res.status, res.text).toBe(200);
    const user = await db().selectFrom('users').select('private_key').where('id', '=', vault.user.userId).executeTakeFirstOrThrow();
    expect(decryptEncString(user.private_key as string, userKey)).toEqual(vault.user.account.privateKeyDer);
  });

  it("writes only what the new key encrypts: an item's re-prompt stays when the client leaves it out", async () => {
    const vault = await prepared();
    const itemId = vault.items[0]!.id;
    await db().updateTable('ciphers').set({ reprompt: 1 }).where('id', '=', itemId).execute();
    const { body } = rotationOf(vault);
    delete (body.accountData.ciphers[0] as { reprompt?: unknown }).reprompt;
    const res = await rotate(vault, body);
    expect(res.status, res.text).toBe(200);
    expect(await db().selectFrom('ciphers').select(['type', 'reprompt']).where('id', '=', itemId).executeTakeFirstOrThrow()).toEqual({ type: 1, reprompt: 1 });
  });

  it.each(refusals)('refuses %s with a 400 naming the field and changes nothing', async (_name, change, field, message) => {
    const vault = await prepared();
    const { body } = rotationOf(vault);
    change(body, vault);
    const before = await snapshot(vault);
    const res = await rotate(vault, body);
    expect(res.status, res.text).toBe(400);
    expect(Object.keys(res.body.validationErrors ?? {})).toEqual([field]);
    expect(String(res.body.validationErrors[field][0])).toContain(message);
    expect(await snapshot(vault)).toEqual(before);
    expect((await server.request('GET', '/api/accounts/revision-date', { token: vault.user.accessToken })).status).toBe(200);
  });

  const othersIds: [string, (body: Body, other: Vault) => void, string][] = [
    ["another user's item", (b, o) => (b.accountData.ciphers[0]!.id = o.items[0]!.id), 'accountData.ciphers[0].id'],
    ["another user's folder", (b, o) => (b.accountData.folders[0]!.id = o.folderId), 'accountData.folders[0].id'],
    ["another user's Send", (b, o) => (b.accountData.sends[0]!.id = o.sendId), 'accountData.sends[0].id'],
    ["another user's emergency access grant", (b, o) => (b.accountUnlockData.emergencyAccessUnlockData![0]!.id = o.grantId), 'accountUnlockData.emergencyAccessUnlockData[0].id'],
  ];

  it.each(othersIds)("refuses %s in place of the account's own, and changes neither account", async (_name, change, field) => {
    const vault = await prepared();
    const other = await prepared();
    const { body } = rotationOf(vault);
    change(body, other);
    const [before, otherBefore] = [await snapshot(vault), await snapshot(other)];
    const res = await rotate(vault, body);
    expect(res.status, res.text).toBe(400);
    expect(Object.keys(res.body.validationErrors ?? {})).toEqual([field]);
    expect(String(res.body.validationErrors[field][0])).toContain('Sync and try again');
    expect([await snapshot(vault), await snapshot(other)]).toEqual([before, otherBefore]);
  });

  it('refuses anonymous callers', async () => {
    expect((await server.request('POST', ROTATE, { json: {} })).status).toBe(401);
  });
});

describe('attachments', () => {
  const meta = (key: string | null, fileName: string) => ({ fileName, key, size: 10, validated: true, uploadStarted: new Date().toISOString() });
  const setAttachments = async (id: string, attachments: Record<string, unknown>): Promise<void> => {
    await db().updateTable('ciphers').set({ attachments: JSON.stringify(attachments) }).where('id', '=', id).execute();
  };
  const storedAttachments = async (id: string) =>
    JSON.parse((await db().selectFrom('ciphers').select('attachments').where('id', '=', id).executeTakeFirstOrThrow()).attachments as string) as Record<string, { fileName: string; key: string }>;

  it('re-wraps the file name and key of each attachment of an item without an item key', async () => {
    const vault = await prepared();
    const oldKey = vault.user.account.userKey;
    const itemId = vault.items[0]!.id;
    await setAttachments(itemId, { att1: meta(encryptToEncString(randomBytes(64), oldKey), encryptText('a.txt', oldKey)) });
    const { body, userKey } = rotationOf(vault);
    const fileKey = randomBytes(64);
    body.accountData.ciphers[0]!.attachments2 = { att1: { fileName: encryptText('a.txt', userKey), key: encryptToEncString(fileKey, userKey) } };
    const res = await rotate(vault, body);
    expect(res.status, res.text).toBe(200);
    const stored = (await storedAttachments(itemId)).att1!;
    expect(decryptText(stored.fileName, userKey)).toBe('a.txt');
    expect(decryptEncString(stored.key, userKey)).toEqual(fileKey);
  });

  it('keeps the attachments of an item with its own key, which the client re-wraps', async () => {
    const vault = await prepared();
    const itemKey = generateSymmetricKey();
    const itemId = vault.items[0]!.id;
    const attachment = meta(encryptToEncString(randomBytes(64), itemKey), encryptText('b.txt', itemKey));
    await setAttachments(itemId, { att2: attachment });
    await db().updateTable('ciphers').set({ key: encryptToEncString(itemKey.raw, vault.user.account.userKey) }).where('id', '=', itemId).execute();
    const { body, userKey } = rotationOf(vault);
    body.accountData.ciphers[0]!.key = encryptToEncString(itemKey.raw, userKey);
    const res = await rotate(vault, body);
    expect(res.status, res.text).toBe(200);
    expect((await storedAttachments(itemId)).att2).toEqual(attachment);
  });

  const refusals: [string, (vault: Vault) => Promise<void>, (body: Body) => void, string, string][] = [
    [
      'an attachment without a key of its own',
      (v) => setAttachments(v.items[0]!.id, { old1: meta(null, encryptText('old.txt', v.user.account.userKey)) }),
      (b) => (b.accountData.ciphers[0]!.attachments2 = { old1: { fileName: b.accountData.ciphers[0]!.name, key: null } }),
      'accountData.ciphers[0]',
      'Fix its old attachments',
    ],
    [
      'an attachment left out of an item without an item key',
      (v) => setAttachments(v.items[1]!.id, { att3: meta(encryptToEncString(randomBytes(64), v.user.account.userKey), encryptText('c.txt', v.user.account.userKey)) }),
      () => {},
      'accountData.ciphers[1].attachments2',
      'att3',
    ],
    [
      'an attachment sent without its file name',
      (v) => setAttachments(v.items[1]!.id, { att4: meta(encryptToEncString(randomBytes(64), v.user.account.userKey), encryptText('d.txt', v.user.account.userKey)) }),
      (b) => (b.accountData.ciphers[1]!.attachments2 = { att4: { fileName: null, key: b.accountData.ciphers[1]!.name } }),
      'accountData.ciphers[1].attachments2',
      'att4',
    ],
  ];

  it.each(refusals)('refuses %s with a 400 naming the item and changes nothing', async (_name, seed, change, field, message) => {
    const vault = await prepared();
    await seed(vault);
    const { body } = rotationOf(vault);
    change(body);
    const before = await snapshot(vault);
    const res = await rotate(vault, body);
    expect(res.status, res.text).toBe(400);
    expect(Object.keys(res.body.validationErrors ?? {})).toEqual([field]);
    expect(String(res.body.validationErrors[field][0])).toContain(message);
    expect(await snapshot(vault)).toEqual(before);
  });
});

describe('a password change committed while a rotation waits', () => {
  /** The rotation use case with a hasher that lets `change` commit between the password check and the transaction. */
  function rotationRacing(change: () => Promise<void>) {
    const real = createPasswordHasher({ iterations: 1000 });
    const hasher: PasswordHasher = {
      verify: (secret, stored) => real.verify(secret, stored),
      hash: async (secret) => {
        const hash = await real.hash(secret);
        await change();
        return hash;
      },
    };
    return createKeyRotation({ db: db(), audit: createAuditLog({ clock: server.clock }), clock: server.clock, pushes: recordingPushes(), hasher });
  }
  const caller = (vault: Vault) => ({ userId: vault.user.userId, client: { ipAddress: null, deviceType: null, deviceIdentifier: null, clientVersion: null }, log: { info() {}, warn() {} } });

  it.each([
    ['a new password hash', { master_password_hash: 'another password' }],
    ['a new security stamp (another rotation)', { security_stamp: 'another stamp' }],
  ])('is seen under the lock (%s): the rotation is refused and writes nothing', async (_name, values) => {
    const vault = await prepared();
    const { body } = rotationOf(vault);
    const before = await snapshot(vault);
    const rotation = rotationRacing(async () => {
      await db().updateTable('users').set(values).where('id', '=', vault.user.userId).execute();
    });
    const error = await rotation.rotate(caller(vault), body).then(
      () => null,
      (e: unknown) => e as { statusCode: number; validationErrors: Record<string, string[]> },
    );
    expect(error?.statusCode).toBe(400);
    expect(Object.keys(error!.validationErrors)).toEqual(['oldMasterKeyAuthenticationHash']);
    expect(error!.validationErrors.oldMasterKeyAuthenticationHash![0]).toContain('Sync and try again');
    const after = await snapshot(vault);
    expect({ ...after, user: { key: after.user.key, private_key: after.user.private_key } }).toEqual({ ...before, user: { key: before.user.key, private_key: before.user.private_key } });
  });
});

describe('GET /api/accounts/key-management/key-rotation-data', () => {
  it('lists the organizations and emergency contacts the new key must be wrapped for', async () => {
    const vault = await prepared();
    const res = await server.request('GET', '/api/accounts/key-management/key-rotation-data', { token: vault.user.accessToken });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      object: 'keyRotationData',
      organizationPasswordResetKeyData: [{ object: 'organizationPasswordResetKeyData', organizationId: vault.organizationId, organizationName: 'Test Org', organizationPublicKey: vault.orgPublicKey }],
      emergencyAccessKeyData: [
        {
          object: 'emergencyAccessKeyData',
          id: vault.grantId,
          granteeId: vault.grantee.userId,
          granteeName: vault.grantee.account.name,
          granteeEmail: vault.grantee.account.email,
          publicKey: vault.grantee.account.publicKeyB64,
        },
      ],
      trustedDeviceKeyData: [],
      passkeyKeyData: [],
    });
  });
});

describe('what the rotation data lists and the rotation requires', () => {
  it('agree: a grant holding a key whose grantee is gone is neither listed nor required, and stays as it was', async () => {
    const vault = await prepared();
    const now = new Date().toISOString();
    // The grantee deleted their account: the grant keeps a key nobody can be wrapped for again.
    const orphan = { id: randomUUID(), grantor_id: vault.user.userId, grantee_id: null, email: 'gone@example.com', key_encrypted: '4.b2xk', type: 1, status: 2, wait_time_days: 7, recovery_initiated_date: null, last_notification_date: null, creation_date: now, revision_date: now };
    await db().insertInto('emergency_access').values(orphan).execute();
    const data = await server.request('GET', '/api/accounts/key-management/key-rotation-data', { token: vault.user.accessToken });
    expect((data.body.emergencyAccessKeyData as { id: string }[]).map((g) => g.id)).toEqual([vault.grantId]);
    const res = await rotate(vault, rotationOf(vault).body);
    expect(res.status, res.text).toBe(200);
    expect(await db().selectFrom('emergency_access').select(['key_encrypted', 'status']).where('id', '=', orphan.id).executeTakeFirstOrThrow()).toEqual({ key_encrypted: '4.b2xk', status: 2 });
  });
});
