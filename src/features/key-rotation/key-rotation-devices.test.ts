import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loginAccount, seedAccount, TEST_DEVICE, type LoggedInUser } from '../../../test/support/accounts.js';
import {
  decryptEncString,
  deriveMasterKey,
  encryptToEncString,
  generateRsaKeyPair,
  generateSymmetricKey,
  masterPasswordHash,
  rsaDecryptEncString,
  rsaEncryptToEncString,
  stretchMasterKey,
  type SymmetricKey,
} from '../../../test/support/bw-crypto.js';
import { CALLER_LIMITS_OFF, startTestServer, type TestServer } from '../../../test/support/test-server.js';
import type { RotateUserAccountKeysRequest as Body } from './key-rotation.schemas.js';

/**
 * A key rotation of an account with trusted devices: the client reads each trusted device's public
 * key from the rotation data (wrapped with the old user key), wraps the new user key for it, and
 * the server stores the re-wrapped keys in the rotation's transaction; a trusted device left out
 * is refused, as the official DeviceRotationValidator refuses it.
 */
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ env: CALLER_LIMITS_OFF });
});
afterAll(async () => server.close());

const db = () => server.database.db;
const api = (user: LoggedInUser, method: string, path: string, json?: unknown) => server.request(method, path, { token: user.accessToken, ...(json === undefined ? {} : { json }) });
const WEB = { deviceType: '9', deviceIdentifier: '6c2e9a1f-4b3d-4f8e-a7c6-1d5b9e2f0a48', deviceName: 'chrome' };
const PHONE = { deviceType: '0', deviceIdentifier: 'e1f2a3b4-c5d6-4e7f-8a9b-0c1d2e3f4a5b', deviceName: 'android' };

/** Trusts a device as the client does; answers its private key, which only the device's key opens. */
async function trust(user: LoggedInUser, identifier: string): Promise<Buffer> {
  const pair = generateRsaKeyPair();
  const res = await api(user, 'PUT', `/api/devices/${identifier}/keys`, {
    encryptedUserKey: rsaEncryptToEncString(user.account.userKey.raw, pair.publicKeyB64),
    encryptedPublicKey: encryptToEncString(Buffer.from(pair.publicKeyB64, 'base64'), user.account.userKey),
    encryptedPrivateKey: encryptToEncString(pair.privateKeyDer, generateSymmetricKey()),
  });
  expect(res.status, res.text).toBe(200);
  return pair.privateKeyDer;
}

interface DeviceKeyData {
  object: string;
  id: string;
  encryptedPublicKey: string;
  encryptedUserKey: string;
}

/** The rotation the web vault builds for an empty vault, with the new user key wrapped for each trusted device listed. */
async function rotationOf(user: LoggedInUser): Promise<{ body: Body; userKey: SymmetricKey; listed: DeviceKeyData[] }> {
  const data = await api(user, 'GET', '/api/accounts/key-management/key-rotation-data');
  expect(data.status, data.text).toBe(200);
  const { account } = user;
  const userKey = generateSymmetricKey();
  const masterKey = deriveMasterKey('a brand new passphrase', account.email, 1);
  const listed = data.body.trustedDeviceKeyData as DeviceKeyData[];
  const deviceKeyUnlockData = listed.map((d) => {
    const publicKey = decryptEncString(d.encryptedPublicKey, account.userKey);
    return { deviceId: d.id, encryptedUserKey: rsaEncryptToEncString(userKey.raw, publicKey.toString('base64')), encryptedPublicKey: encryptToEncString(publicKey, userKey) };
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
      passkeyUnlockData: [],
      deviceKeyUnlockData,
    },
    accountKeys: { userKeyEncryptedAccountPrivateKey: encryptToEncString(account.privateKeyDer, userKey), accountPublicKey: account.publicKeyB64 },
    accountData: { ciphers: [], folders: [], sends: [] },
  } as unknown as Body;
  return { body, userKey, listed };
}

const rotate = (user: LoggedInUser, body: unknown) => api(user, 'POST', '/api/accounts/key-management/rotate-user-account-keys', body);
const deviceRows = (user: LoggedInUser) => db().selectFrom('devices').selectAll().where('user_id', '=', user.userId).orderBy('id').execute();

describe('a key rotation with trusted devices', () => {
  it('lists the trusted devices, re-wraps each with the new user key, and keeps their private keys', async () => {
    const user = await seedAccount(server);
    await loginAccount(server, user.account, WEB);
    await loginAccount(server, user.account, PHONE);
    const privateKeys = new Map([
      [TEST_DEVICE.deviceIdentifier, await trust(user, TEST_DEVICE.deviceIdentifier)],
      [WEB.deviceIdentifier, await trust(user, WEB.deviceIdentifier)],
    ]);
    const before = await deviceRows(user);
    const { body, userKey, listed } = await rotationOf(user);
    // The phone holds no keys: it is neither listed nor required.
    expect(listed.map((d) => d.id).sort()).toEqual(before.filter((d) => d.encrypted_user_key).map((d) => d.id).sort());
    expect(listed[0]?.object).toBe('trustedDeviceKeyData');

    const res = await rotate(user, body);
    expect(res.status, res.text).toBe(200);
    for (const row of await deviceRows(user)) {
      const privateKey = privateKeys.get(row.identifier);
      if (!privateKey) {
        expect(row.encrypted_user_key).toBeNull();
        continue;
      }
      expect(rsaDecryptEncString(row.encrypted_user_key as string, privateKey).equals(userKey.raw)).toBe(true);
      expect(decryptEncString(row.encrypted_public_key as string, userKey).toString('base64')).toBe(decryptEncString(before.find((b) => b.id === row.id)!.encrypted_public_key as string, user.account.userKey).toString('base64'));
      expect(row.encrypted_private_key).toBe(before.find((b) => b.id === row.id)?.encrypted_private_key);
    }
  });

  it('leaves a removed device out of the rotation data and the rotation, and drops keys it still held', async () => {
    const user = await seedAccount(server);
    await loginAccount(server, user.account, WEB);
    await trust(user, WEB.deviceIdentifier);
    const web = (await deviceRows(user)).find((d) => d.identifier === WEB.deviceIdentifier)!;
    // Removed, yet holding keys: as a removed device could trust itself again before that was refused.
    await db().updateTable('devices').set({ active: false }).where('id', '=', web.id).execute();
    const { body, listed } = await rotationOf(user);
    expect(listed).toEqual([]);
    const res = await rotate(user, body);
    expect(res.status, res.text).toBe(200);
    const row = (await deviceRows(user)).find((d) => d.id === web.id)!;
    expect([row.encrypted_user_key, row.encrypted_public_key, row.encrypted_private_key]).toEqual([null, null, null]);
  });

  it('refuses a rotation that leaves a trusted device out, names an untrusted one, or sends a malformed key, and writes nothing', async () => {
    const user = await seedAccount(server);
    await loginAccount(server, user.account, WEB);
    await loginAccount(server, user.account, PHONE);
    await trust(user, TEST_DEVICE.deviceIdentifier);
    await trust(user, WEB.deviceIdentifier);
    const before = await deviceRows(user);
    const { body } = await rotationOf(user);
    const unlock = body.accountUnlockData;
    const devices = unlock.deviceKeyUnlockData!;

    const missing = await rotate(user, { ...body, accountUnlockData: { ...unlock, deviceKeyUnlockData: devices.slice(1) } });
    expect(missing.status).toBe(400);
    expect(missing.body.validationErrors).toEqual({ 'accountUnlockData.deviceKeyUnlockData': ['All existing trusted devices must be included in the rotation.'] });
    const phone = before.find((d) => d.identifier === PHONE.deviceIdentifier)!;
    const untrusted = await rotate(user, { ...body, accountUnlockData: { ...unlock, deviceKeyUnlockData: [...devices, { ...devices[0]!, deviceId: phone.id }] } });
    expect(untrusted.status).toBe(400);
    expect(Object.keys(untrusted.body.validationErrors)).toEqual(['accountUnlockData.deviceKeyUnlockData[2].deviceId']);
    const malformed = await rotate(user, { ...body, accountUnlockData: { ...unlock, deviceKeyUnlockData: [{ ...devices[0]!, encryptedUserKey: 'plain' }, devices[1]] } });
    expect(malformed.status).toBe(400);
    expect(JSON.stringify(malformed.body)).toMatch(/deviceKeyUnlockData/);

    expect(await deviceRows(user)).toEqual(before);
    // The old master password still logs in: nothing of the rotation was written.
    await loginAccount(server, user.account);
  });
});
