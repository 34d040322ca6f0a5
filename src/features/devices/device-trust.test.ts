import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loginAccount, seedAccount, TEST_DEVICE, type LoggedInUser } from '../../../test/support/accounts.js';
import { decryptEncString, encryptToEncString, generateRsaKeyPair, generateSymmetricKey, rsaDecryptEncString, rsaEncryptToEncString, type SymmetricKey } from '../../../test/support/bw-crypto.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';

/**
 * The trusted-device routes: a device stores its wrapped keys, the account re-wraps or drops them,
 * and a removed device loses them. Keys are made as the clients make them (bw-crypto), and each
 * check opens what the server kept with the key only the device or the account holds.
 */
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server.close());

const db = () => server.database.db;
const WEB = { deviceType: '9', deviceIdentifier: '3b0c8a4e-2d6f-4e1a-9c7b-5a8d2f1e0c34', deviceName: 'chrome' };
const api = (user: LoggedInUser, method: string, path: string, json?: unknown, headers: Record<string, string> = {}) =>
  server.request(method, path, { token: user.accessToken, headers, ...(json === undefined ? {} : { json }) });

interface DeviceKeys {
  deviceKey: SymmetricKey;
  privateKeyDer: Buffer;
  publicKeyB64: string;
  body: { encryptedUserKey: string; encryptedPublicKey: string; encryptedPrivateKey: string };
}

/** What a client makes when it trusts itself: a device key and key pair, the user key wrapped for the pair. */
function deviceKeysFor(userKey: SymmetricKey): DeviceKeys {
  const deviceKey = generateSymmetricKey();
  const pair = generateRsaKeyPair();
  return {
    deviceKey,
    privateKeyDer: pair.privateKeyDer,
    publicKeyB64: pair.publicKeyB64,
    body: {
      encryptedUserKey: rsaEncryptToEncString(userKey.raw, pair.publicKeyB64),
      encryptedPublicKey: encryptToEncString(Buffer.from(pair.publicKeyB64, 'base64'), userKey),
      encryptedPrivateKey: encryptToEncString(pair.privateKeyDer, deviceKey),
    },
  };
}

const deviceRow = (userId: string, identifier: string) =>
  db().selectFrom('devices').selectAll().where('user_id', '=', userId).where('identifier', '=', identifier).executeTakeFirstOrThrow();

async function trust(user: LoggedInUser, identifier: string): Promise<DeviceKeys> {
  const keys = deviceKeysFor(user.account.userKey);
  const res = await api(user, 'PUT', `/api/devices/${identifier}/keys`, keys.body);
  expect(res.status, res.text).toBe(200);
  return keys;
}

describe('PUT /api/devices/{identifier}/keys', () => {
  it('trusts the device: the device list carries its keys, and its private key opens the user key', async () => {
    const user = await seedAccount(server);
    const keys = deviceKeysFor(user.account.userKey);
    const res = await api(user, 'PUT', `/api/devices/${TEST_DEVICE.deviceIdentifier}/keys`, keys.body);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ object: 'device', identifier: TEST_DEVICE.deviceIdentifier, isTrusted: true, encryptedUserKey: keys.body.encryptedUserKey, encryptedPublicKey: keys.body.encryptedPublicKey });
    const listed = await api(user, 'GET', '/api/devices');
    expect(listed.body.data[0]).toMatchObject({ isTrusted: true, encryptedUserKey: keys.body.encryptedUserKey });
    // What the device gets back opens with what only it holds: its device key, then its private key.
    const row = await deviceRow(user.userId, TEST_DEVICE.deviceIdentifier);
    const privateKey = decryptEncString(row.encrypted_private_key as string, keys.deviceKey);
    expect(rsaDecryptEncString(row.encrypted_user_key as string, privateKey).equals(user.account.userKey.raw)).toBe(true);
  });

  it('refuses a key that is no encrypted string, or a missing one, with a 400 naming it, and writes nothing', async () => {
    const user = await seedAccount(server);
    const keys = deviceKeysFor(user.account.userKey);
    const bad = await api(user, 'PUT', `/api/devices/${TEST_DEVICE.deviceIdentifier}/keys`, { ...keys.body, encryptedPrivateKey: 'not an enc string' });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toMatch(/encryptedPrivateKey/);
    const missing = await api(user, 'PUT', `/api/devices/${TEST_DEVICE.deviceIdentifier}/keys`, { encryptedUserKey: keys.body.encryptedUserKey, encryptedPublicKey: keys.body.encryptedPublicKey });
    expect(missing.status).toBe(400);
    expect(JSON.stringify(missing.body)).toMatch(/encryptedPrivateKey/);
    const row = await deviceRow(user.userId, TEST_DEVICE.deviceIdentifier);
    expect([row.encrypted_user_key, row.encrypted_public_key, row.encrypted_private_key]).toEqual([null, null, null]);
  });

  it("404s another account's device and an unknown one, and writes nothing", async () => {
    const owner = await seedAccount(server);
    const other = await seedAccount(server);
    await loginAccount(server, owner.account, WEB);
    const res = await api(other, 'PUT', `/api/devices/${WEB.deviceIdentifier}/keys`, deviceKeysFor(other.account.userKey).body);
    expect(res.status).toBe(404);
    expect((await api(other, 'PUT', `/api/devices/${randomUUID()}/keys`, deviceKeysFor(other.account.userKey).body)).status).toBe(404);
    expect((await deviceRow(owner.userId, WEB.deviceIdentifier)).encrypted_user_key).toBeNull();
  });
});

describe('POST /api/devices/{identifier}/retrieve-keys', () => {
  it("answers the device's wrapped keys, and 404s another account's device", async () => {
    const user = await seedAccount(server);
    const other = await seedAccount(server);
    const keys = await trust(user, TEST_DEVICE.deviceIdentifier);
    const res = await api(user, 'POST', `/api/devices/${TEST_DEVICE.deviceIdentifier}/retrieve-keys`);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ object: 'protectedDevice', identifier: TEST_DEVICE.deviceIdentifier, encryptedUserKey: keys.body.encryptedUserKey, encryptedPublicKey: keys.body.encryptedPublicKey });
    expect(res.body.encryptedPrivateKey).toBeUndefined();
    await loginAccount(server, user.account, WEB);
    expect((await api(other, 'POST', `/api/devices/${WEB.deviceIdentifier}/retrieve-keys`)).status).toBe(404);
  });
});

describe('POST /api/devices/update-trust', () => {
  /** The asking device (TEST_DEVICE, the token's) and a second trusted one (WEB), both trusted with the old user key. */
  async function twoTrusted() {
    const user = await seedAccount(server);
    await loginAccount(server, user.account, WEB);
    const current = await trust(user, TEST_DEVICE.deviceIdentifier);
    const web = await trust(user, WEB.deviceIdentifier);
    const webId = (await deviceRow(user.userId, WEB.deviceIdentifier)).id;
    return { user, current, web, webId };
  }
  const rewrap = (newKey: SymmetricKey, keys: DeviceKeys) => ({
    encryptedUserKey: rsaEncryptToEncString(newKey.raw, keys.publicKeyB64),
    encryptedPublicKey: encryptToEncString(Buffer.from(keys.publicKeyB64, 'base64'), newKey),
  });

  it('re-wraps the asking device and the listed ones after the master password check; a trusted device left out is untrusted', async () => {
    const { user, current, web, webId } = await twoTrusted();
    const newKey = generateSymmetricKey();
    const body = { masterPasswordHash: user.account.masterPasswordHash, currentDevice: rewrap(newKey, current), otherDevices: [{ deviceId: webId, ...rewrap(newKey, web) }] };
    const res = await api(user, 'POST', '/api/devices/update-trust', body);
    expect(res.status, res.text).toBe(200);
    for (const [identifier, keys] of [[TEST_DEVICE.deviceIdentifier, current], [WEB.deviceIdentifier, web]] as const) {
      const row = await deviceRow(user.userId, identifier);
      expect(rsaDecryptEncString(row.encrypted_user_key as string, keys.privateKeyDer).equals(newKey.raw)).toBe(true);
      // The private key stays wrapped with the device key.
      expect(row.encrypted_private_key).toBe(keys.body.encryptedPrivateKey);
    }
    const again = await api(user, 'POST', '/api/devices/update-trust', { secret: user.account.masterPasswordHash, currentDevice: rewrap(newKey, current), otherDevices: [] });
    expect(again.status, again.text).toBe(200);
    const dropped = await deviceRow(user.userId, WEB.deviceIdentifier);
    expect([dropped.encrypted_user_key, dropped.encrypted_public_key, dropped.encrypted_private_key]).toEqual([null, null, null]);
  });

  it('refuses a wrong master password hash, the asking device among the others, or a malformed key, and writes nothing', async () => {
    const { user, current, web, webId } = await twoTrusted();
    const before = await db().selectFrom('devices').selectAll().where('user_id', '=', user.userId).orderBy('id').execute();
    const newKey = generateSymmetricKey();
    const wrong = await api(user, 'POST', '/api/devices/update-trust', { masterPasswordHash: 'd3Jvbmc=', currentDevice: rewrap(newKey, current), otherDevices: [] });
    expect(wrong.status).toBe(400);
    expect(wrong.text).toMatch(/User verification failed/);
    const currentId = (await deviceRow(user.userId, TEST_DEVICE.deviceIdentifier)).id;
    const self = await api(user, 'POST', '/api/devices/update-trust', {
      masterPasswordHash: user.account.masterPasswordHash,
      currentDevice: rewrap(newKey, current),
      otherDevices: [{ deviceId: webId, ...rewrap(newKey, web) }, { deviceId: currentId, ...rewrap(newKey, current) }],
    });
    expect(self.status).toBe(400);
    expect(Object.keys(self.body.validationErrors)).toEqual(['otherDevices[1].deviceId']);
    const malformed = await api(user, 'POST', '/api/devices/update-trust', { masterPasswordHash: user.account.masterPasswordHash, currentDevice: { ...rewrap(newKey, current), encryptedUserKey: 'plain' } });
    expect(malformed.status).toBe(400);
    expect(JSON.stringify(malformed.body)).toMatch(/currentDevice\.encryptedUserKey|encryptedUserKey/);
    expect(await db().selectFrom('devices').selectAll().where('user_id', '=', user.userId).orderBy('id').execute()).toEqual(before);
  });
});

describe('POST /api/devices/untrust', () => {
  it("drops the listed devices' keys; a list naming another account's device is 404 and changes nothing", async () => {
    const user = await seedAccount(server);
    const other = await seedAccount(server);
    await trust(user, TEST_DEVICE.deviceIdentifier);
    await trust(other, TEST_DEVICE.deviceIdentifier);
    const mine = (await deviceRow(user.userId, TEST_DEVICE.deviceIdentifier)).id;
    const theirs = (await deviceRow(other.userId, TEST_DEVICE.deviceIdentifier)).id;
    const refused = await api(user, 'POST', '/api/devices/untrust', { devices: [mine, theirs] });
    expect(refused.status).toBe(404);
    expect((await deviceRow(user.userId, TEST_DEVICE.deviceIdentifier)).encrypted_user_key).not.toBeNull();
    expect((await deviceRow(other.userId, TEST_DEVICE.deviceIdentifier)).encrypted_user_key).not.toBeNull();
    const bad = await api(user, 'POST', '/api/devices/untrust', { devices: ['nope'] });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toMatch(/devices/);
    const res = await api(user, 'POST', '/api/devices/untrust', { devices: [mine.toUpperCase()] });
    expect(res.status, res.text).toBe(200);
    const row = await deviceRow(user.userId, TEST_DEVICE.deviceIdentifier);
    expect([row.encrypted_user_key, row.encrypted_public_key, row.encrypted_private_key]).toEqual([null, null, null]);
    expect((await api(user, 'GET', `/api/devices/identifier/${TEST_DEVICE.deviceIdentifier}`)).body.isTrusted).toBe(false);
  });
});

describe('POST /api/devices/lost-trust', () => {
  it('logs the report, and asks for the device type', async () => {
    const user = await seedAccount(server);
    expect((await api(user, 'POST', '/api/devices/lost-trust')).status).toBe(400);
    const res = await api(user, 'POST', '/api/devices/lost-trust', undefined, { 'device-type': '9' });
    expect(res.status, res.text).toBe(200);
    expect(server.logs.text()).toContain('received no decryption keys');
  });
});

describe('POST /api/devices/{id}/deactivate and DELETE /api/devices/{id}', () => {
  it('removes the device from the list with its keys and sessions; a new login brings it back untrusted', async () => {
    const user = await seedAccount(server);
    const web = await loginAccount(server, user.account, WEB);
    await trust(user, WEB.deviceIdentifier);
    const id = (await deviceRow(user.userId, WEB.deviceIdentifier)).id;
    const res = await api(user, 'POST', `/api/devices/${id}/deactivate`);
    expect(res.status, res.text).toBe(200);
    const listed = await api(user, 'GET', '/api/devices');
    expect((listed.body.data as { identifier: string }[]).map((d) => d.identifier)).toEqual([TEST_DEVICE.deviceIdentifier]);
    const row = await deviceRow(user.userId, WEB.deviceIdentifier);
    expect([row.encrypted_user_key, row.encrypted_public_key, row.encrypted_private_key]).toEqual([null, null, null]);
    expect(Boolean(row.active)).toBe(false);
    // Gone from the single read too, as from the list.
    expect((await api(user, 'GET', `/api/devices/identifier/${WEB.deviceIdentifier}`)).status).toBe(404);
    const refreshed = await server.request('POST', '/identity/connect/token', { form: { grant_type: 'refresh_token', client_id: 'web', refresh_token: web.refreshToken } });
    expect(refreshed.status).toBe(400);
    // Removing it again changes nothing; logging in from it brings it back, untrusted.
    expect((await api(user, 'DELETE', `/api/devices/${id}`)).status).toBe(200);
    await loginAccount(server, user.account, WEB);
    const back = await api(user, 'GET', `/api/devices/identifier/${WEB.deviceIdentifier}`);
    expect(back.body).toMatchObject({ id, isTrusted: false });
    expect((await api(user, 'GET', '/api/devices')).body.data).toHaveLength(2);
  });

  it('a removed device cannot trust itself again with a token it still holds, nor read or re-wrap keys', async () => {
    const user = await seedAccount(server);
    const web = await loginAccount(server, user.account, WEB);
    const keys = await trust(user, WEB.deviceIdentifier);
    const id = (await deviceRow(user.userId, WEB.deviceIdentifier)).id;
    expect((await api(user, 'POST', `/api/devices/${id}/deactivate`)).status).toBe(200);
    // The removed device's access token still runs until it expires.
    const self = await api(web, 'PUT', `/api/devices/${WEB.deviceIdentifier}/keys`, deviceKeysFor(user.account.userKey).body);
    expect(self.status).toBe(404);
    expect((await api(user, 'PUT', `/api/devices/${WEB.deviceIdentifier}/keys`, deviceKeysFor(user.account.userKey).body)).status).toBe(404);
    expect((await api(web, 'POST', `/api/devices/${WEB.deviceIdentifier}/retrieve-keys`)).status).toBe(404);
    const rewrapped = { encryptedUserKey: keys.body.encryptedUserKey, encryptedPublicKey: keys.body.encryptedPublicKey };
    const updated = await api(web, 'POST', '/api/devices/update-trust', { masterPasswordHash: user.account.masterPasswordHash, currentDevice: rewrapped, otherDevices: [] });
    expect(updated.status).toBe(404);
    const row = await deviceRow(user.userId, WEB.deviceIdentifier);
    expect([row.encrypted_user_key, row.encrypted_public_key, row.encrypted_private_key, Boolean(row.active)]).toEqual([null, null, null, false]);
    // Named by an active device's re-wrap, a removed one holding keys (from before removals were
    // refused) is not re-trusted: its keys go.
    const current = await trust(user, TEST_DEVICE.deviceIdentifier);
    await db().updateTable('devices').set({ encrypted_user_key: keys.body.encryptedUserKey, encrypted_public_key: keys.body.encryptedPublicKey, encrypted_private_key: keys.body.encryptedPrivateKey }).where('id', '=', id).execute();
    const fromCurrent = await api(user, 'POST', '/api/devices/update-trust', {
      masterPasswordHash: user.account.masterPasswordHash,
      currentDevice: { encryptedUserKey: current.body.encryptedUserKey, encryptedPublicKey: current.body.encryptedPublicKey },
      otherDevices: [{ deviceId: id, ...rewrapped }],
    });
    expect(fromCurrent.status, fromCurrent.text).toBe(200);
    expect((await deviceRow(user.userId, WEB.deviceIdentifier)).encrypted_user_key).toBeNull();
  });

  it('a removed device that still held keys (written before removals were refused) logs in again without them', async () => {
    const user = await seedAccount(server);
    await loginAccount(server, user.account, WEB);
    const keys = deviceKeysFor(user.account.userKey).body;
    await db()
      .updateTable('devices')
      .set({ active: false, encrypted_user_key: keys.encryptedUserKey, encrypted_public_key: keys.encryptedPublicKey, encrypted_private_key: keys.encryptedPrivateKey })
      .where('user_id', '=', user.userId)
      .where('identifier', '=', WEB.deviceIdentifier)
      .execute();
    await loginAccount(server, user.account, WEB);
    const row = await deviceRow(user.userId, WEB.deviceIdentifier);
    expect([row.encrypted_user_key, row.encrypted_public_key, row.encrypted_private_key, Boolean(row.active)]).toEqual([null, null, null, true]);
    // An active trusted device keeps its keys across logins.
    const current = await trust(user, TEST_DEVICE.deviceIdentifier);
    await loginAccount(server, user.account);
    expect((await deviceRow(user.userId, TEST_DEVICE.deviceIdentifier)).encrypted_user_key).toBe(current.body.encryptedUserKey);
  });

  it("404s another account's device and changes nothing", async () => {
    const user = await seedAccount(server);
    const other = await seedAccount(server);
    await trust(user, TEST_DEVICE.deviceIdentifier);
    const id = (await deviceRow(user.userId, TEST_DEVICE.deviceIdentifier)).id;
    expect((await api(other, 'POST', `/api/devices/${id}/deactivate`)).status).toBe(404);
    expect((await api(other, 'DELETE', `/api/devices/${id}`)).status).toBe(404);
    const row = await deviceRow(user.userId, TEST_DEVICE.deviceIdentifier);
    expect(Boolean(row.active)).toBe(true);
    expect(row.encrypted_user_key).not.toBeNull();
    expect((await api(user, 'POST', '/api/devices/not-a-guid/deactivate')).status).toBe(400);
  });
});

describe('devicePendingAuthRequest in GET /api/devices', () => {
  it("names a device's newest unanswered login request of the last 15 minutes, and nothing once it is answered or old", async () => {
    const user = await seedAccount(server);
    await loginAccount(server, user.account, WEB);
    const request = (id: string, minutesAgo: number, approved: boolean | null = null) => {
      const at = new Date(Date.now() - minutesAgo * 60_000).toISOString();
      return db()
        .insertInto('auth_requests')
        .values({ id, user_id: user.userId, type: 0, request_device_identifier: WEB.deviceIdentifier, request_device_type: 9, request_ip_address: null, response_device_id: null, access_code: 'code', public_key: 'cHVibGlj', key: null, master_password_hash: null, approved, creation_date: at, response_date: null, authentication_date: null })
        .execute();
    };
    const pendingOf = async () => {
      const res = await api(user, 'GET', '/api/devices');
      return (res.body.data as { identifier: string; devicePendingAuthRequest: unknown }[]).map((d) => [d.identifier, d.devicePendingAuthRequest]);
    };
    await request(randomUUID(), 30);
    expect(await pendingOf()).toEqual([[TEST_DEVICE.deviceIdentifier, null], [WEB.deviceIdentifier, null]]);
    const fresh = randomUUID();
    await request(fresh, 2);
    expect((await pendingOf())[1]).toEqual([WEB.deviceIdentifier, { id: fresh, creationDate: expect.any(String) }]);
    // A newer answered request hides the older pending one, as officially.
    await request(randomUUID(), 1, false);
    expect((await pendingOf())[1]).toEqual([WEB.deviceIdentifier, null]);
  });
});
