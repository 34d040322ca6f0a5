import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type * as Sdk from '@bitwarden/sdk-internal';
import { createUser, type LoggedInUser } from '../../../test/support/accounts.js';
import { decryptEncString, encryptText, rsaDecryptEncString, rsaEncryptToEncString, symmetricKeyFrom, type SymmetricKey } from '../../../test/support/bw-crypto.js';
import { loginThroughIdp } from '../../../test/support/oidc-idp.js';
import { createOrganization } from '../../../test/support/org-founding.js';
import { cipherCreateRequest, loadSdk, SDK_DEVICE, sdkClient, sdkTraffic, syncIntoSdk, toWrappedAccountState, type SdkClient, type SdkSession } from '../../../test/support/sdk-internal.js';
import { cliAuthorizeUrl, codeGrantForm, startSsoWorld, type SsoWorld } from '../../../test/support/sso-login.js';
import { cipherBody } from '../../../test/support/vault.js';
import { OrganizationUserStatusType } from '../../platform/access/roles.js';
import { EventType } from '../../platform/audit/event-type.js';
import { PolicyType } from '../policies/policy-type.js';

/**
 * Trusted device encryption end to end: SSO with no master password, against the real
 * oidc-provider, with the official SDK doing what the clients do. A new member logs in on device
 * A (just in time), and the SDK's own `post_keys_for_tde_registration` posts the keys, enrolls in
 * account recovery and trusts A; device B is approved from A and trusts itself; device C is
 * approved by an owner with the member's account recovery key. Each device proves it holds the
 * user key by decrypting what A wrote. One story, told in order.
 */

type Json = Record<string, unknown>;
const MEMBER = { sub: 'tde-sub', email: 'tina@acme.example', name: 'Tina', password: 'pw-tina' };
/** The clients' default KDF, which the SDK asks for even when no master password exists. */
const KDF: Sdk.Kdf = { pBKDF2: { iterations: 600_000 } };

let world: SsoWorld;
let owner: LoggedInUser;
let orgId: string;
let orgKey: SymmetricKey;
let identifier: string;

beforeAll(async () => {
  world = await startSsoWorld([[MEMBER]], { DEPLOYMENT: 'cloud' });
  owner = await createUser(world.server);
  ({ id: orgId, orgKey } = await createOrganization(world.server, owner, { planType: 20 }));
  identifier = `tde-${randomUUID().slice(0, 8)}`;
}, 60_000);
afterAll(async () => world?.close());

const server = () => world.server;
const db = () => world.server.database.db;
const api = (token: string, method: string, path: string, json?: unknown, headers: Record<string, string> = {}) =>
  server().request(method, path, { token, headers, ...(json === undefined ? {} : { json }) });

interface Device {
  deviceType: string;
  deviceIdentifier: string;
  deviceName: string;
}
const webDevice = (deviceType = '9'): Device => ({ deviceType, deviceIdentifier: randomUUID(), deviceName: 'chrome' });

/** The web vault's SSO login on `device`: authorize, the IdP's page, the code back at sso-connector.html, the token grant. */
async function ssoLogin(device: Device): Promise<Json> {
  const redirectUri = `${world.publicUrl}/sso-connector.html`;
  const start = await cliAuthorizeUrl(world, identifier, { client_id: 'web', redirect_uri: redirectUri });
  const browser = await loginThroughIdp(start.url, { login: MEMBER.email, password: MEMBER.password });
  const code = browser.location?.searchParams.get('code');
  expect(code, browser.body).toBeTruthy();
  // A version-2 account's login needs the client's version, as officially.
  const token = await server().request('POST', '/identity/connect/token', { headers: { 'bitwarden-client-version': SDK_DEVICE.clientVersion }, form: { ...codeGrantForm(code!, start.verifier, redirectUri, 'web'), ...device } });
  expect(token.status, token.text).toBe(200);
  return token.body as Json;
}

const trustOption = (token: Json) => (token.UserDecryptionOptions as Json).TrustedDeviceOption as Json;
const userIdOf = (token: Json) => JSON.parse(Buffer.from(String(token.access_token).split('.')[1] ?? '', 'base64url').toString()).sub as string;

/** An SDK client on a device, holding the device's access token. */
function sdkOn(token: Json): SdkClient {
  const client = sdkClient(server());
  client.token = String(token.access_token);
  return client;
}

/** Unlocks an SDK client with `method`, with the account keys its sync carries (as the clients read them after login). */
async function unlock(client: SdkClient, userId: string, method: Sdk.InitUserCryptoMethod): Promise<SdkSession> {
  const sync = await api(client.token!, 'GET', '/api/sync');
  expect(sync.status, sync.text).toBe(200);
  await client.client.crypto().initialize_user_crypto({
    userId: userId as unknown as Sdk.UserId,
    kdfParams: KDF,
    email: MEMBER.email,
    accountCryptographicState: toWrappedAccountState((sync.body as { profile: { accountKeys: Json } }).profile.accountKeys),
    method,
  });
  return client as SdkSession;
}

/** The names of the items the device decrypts after a sync; fails on any it cannot decrypt. */
async function decryptedNames(session: SdkSession): Promise<string[]> {
  await syncIntoSdk(server(), session);
  const { successes, failures } = await session.client.vault().ciphers().get_all();
  expect(failures).toEqual([]);
  return successes.map((c) => c.name).sort();
}

/** What DeviceTrustService.trustDevice makes on the device, and the body it puts to /devices/{identifier}/keys. */
function deviceTrust(userKey: Uint8Array) {
  const { PureCrypto } = loadSdk();
  const deviceKey = PureCrypto.make_aes256_cbc_hmac_key() as unknown as string;
  const privateKey = PureCrypto.rsa_generate_keypair();
  const publicKey = PureCrypto.rsa_extract_public_key(privateKey);
  return {
    deviceKey,
    body: {
      encryptedUserKey: PureCrypto.encapsulate_key_unsigned(userKey, publicKey),
      encryptedPublicKey: PureCrypto.wrap_encapsulation_key(publicKey, userKey),
      encryptedPrivateKey: PureCrypto.wrap_decapsulation_key(privateKey, Buffer.from(deviceKey, 'base64')),
    },
  };
}

/** A device's auth request key pair, as the login-with-device page makes it. */
function requestKeys() {
  const { PureCrypto } = loadSdk();
  const privateKey = PureCrypto.rsa_generate_keypair();
  return { privateKey, publicKeyB64: Buffer.from(PureCrypto.rsa_extract_public_key(privateKey)).toString('base64') };
}

const eventsOf = (type: EventType, userId: string) =>
  db().selectFrom('events').select(['organization_id', 'organization_user_id', 'acting_user_id', 'device_type']).where('type', '=', type).where((eb) => eb.or([eb('user_id', '=', userId), eb('organization_user_id', 'in', eb.selectFrom('organization_users').select('id').where('user_id', '=', userId))])).orderBy('seq').execute();

describe('trusted devices: SSO without a master password', () => {
  const A = webDevice('9');
  let tokenA: Json;
  let userId: string;
  let sessionA: SdkSession;
  let userKey: Uint8Array;
  let memberId: string;

  it('the owner chooses trusted devices; the policies it needs come on with it', async () => {
    const { idp, clientId, clientSecret } = world.idps[0]!;
    const data = { configType: 1, memberDecryptionType: 2, authority: idp.issuer, clientId, clientSecret, redirectBehavior: 0, getClaimsFromUserInfoEndpoint: false };
    const saved = await api(owner.accessToken, 'POST', `/api/organizations/${orgId}/sso`, { enabled: true, identifier, data });
    expect(saved.status, saved.text).toBe(200);
    const policies = (await api(owner.accessToken, 'GET', `/api/organizations/${orgId}/policies`)).body.data as { type: number; enabled: boolean; data: Json | null }[];
    expect(policies.filter((p) => p.enabled).map((p) => p.type).sort()).toEqual([PolicyType.SingleOrg, PolicyType.RequireSso, PolicyType.ResetPassword].sort());
    expect(policies.find((p) => p.type === (PolicyType.ResetPassword as number))?.data).toEqual({ autoEnrollEnabled: true });
  });

  it('device A: a just-in-time member with no master password; the SDK registers keys, enrolls and trusts A', async () => {
    tokenA = await ssoLogin(A);
    userId = userIdOf(tokenA);
    expect(tokenA.UserDecryptionOptions).toMatchObject({ HasMasterPassword: false });
    // Nobody could approve yet: no other device, no recovery enrollment, and A holds no keys.
    expect(trustOption(tokenA)).toEqual({ HasAdminApproval: false, HasLoginApprovingDevice: false, HasManageResetPasswordPermission: false, IsTdeOffboarding: false, EncryptedPrivateKey: null, EncryptedUserKey: null });
    const member = await db().selectFrom('organization_users').selectAll().where('organization_id', '=', orgId).where('user_id', '=', userId).executeTakeFirstOrThrow();
    expect(member.status).toBe(OrganizationUserStatusType.Accepted);
    memberId = member.id;

    // What the login-decryption-options page does for a new member: the organization's public key, then the SDK.
    const orgKeys = await api(String(tokenA.access_token), 'GET', `/api/organizations/${orgId}/keys`);
    expect(orgKeys.status, orgKeys.text).toBe(200);
    // Its public key, as officially to any signed-in user; the wrapped private key is for confirmed members.
    expect(orgKeys.body).toMatchObject({ publicKey: expect.any(String), privateKey: null });
    const client = sdkOn(tokenA);
    const from = sdkTraffic.length;
    const registered = await client.client
      .auth()
      .registration()
      .post_keys_for_tde_registration({ org_id: orgId as unknown as Sdk.OrganizationId, org_public_key: orgKeys.body.publicKey, user_id: userId as unknown as Sdk.UserId, device_identifier: A.deviceIdentifier, trust_device: true });
    const calls = sdkTraffic.slice(from).map((e) => [e.method, e.path, e.status]);
    expect(calls).toEqual([
      ['POST', '/api/accounts/keys', 200],
      ['PUT', `/api/organizations/${orgId}/users/${userId}/reset-password-enrollment`, 200],
      ['PUT', `/api/devices/${A.deviceIdentifier}/keys`, 200],
    ]);
    // The enrollment carries the key and no master password hash at all.
    const enrollment = JSON.parse(sdkTraffic[from + 1]!.requestBody) as Json;
    expect(enrollment.resetPasswordKey).toMatch(/^4\./);
    expect(enrollment.masterPasswordHash ?? null).toBeNull();
    expect(registered.account_cryptographic_state).toHaveProperty('V2');
    userKey = Buffer.from(registered.user_key, 'base64');

    sessionA = await unlock(client, userId, { decryptedKey: { decrypted_user_key: registered.user_key } });
    const login: Sdk.LoginView = { username: 'tina', password: 'pw', passwordRevisionDate: undefined, uris: undefined, totp: undefined, autofillOnPageLoad: undefined, fido2Credentials: undefined };
    await sessionA.client.vault().ciphers().create(cipherCreateRequest('Tina personal login', { login }));
    expect(await decryptedNames(sessionA)).toEqual(['Tina personal login']);
    expect(await eventsOf(EventType.OrganizationUser_ResetPassword_Enroll, userId)).toHaveLength(1);
  });

  it('once the owner confirms the member, A decrypts an organization item', async () => {
    const publicKey = (await api(owner.accessToken, 'GET', `/api/users/${userId}/public-key`)).body.publicKey as string;
    const ownerMemberId = (await db().selectFrom('organization_users').select('id').where('organization_id', '=', orgId).where('user_id', '=', owner.userId).executeTakeFirstOrThrow()).id;
    const confirmed = await api(owner.accessToken, 'POST', `/api/organizations/${orgId}/users/${memberId}/confirm`, { key: rsaEncryptToEncString(orgKey.raw, publicKey) });
    expect(confirmed.status, confirmed.text).toBe(200);
    const collection = await api(owner.accessToken, 'POST', `/api/organizations/${orgId}/collections`, {
      name: encryptText('Team', orgKey),
      groups: [],
      users: [ownerMemberId, memberId].map((id) => ({ id, readOnly: false, hidePasswords: false, manage: id === ownerMemberId })),
    });
    expect(collection.status, collection.text).toBe(200);
    const item = await api(owner.accessToken, 'POST', '/api/ciphers/create', {
      cipher: cipherBody('secureNote', orgKey, { organizationId: orgId, name: encryptText('Team wifi', orgKey), fields: null }),
      collectionIds: [collection.body.id],
    });
    expect(item.status, item.text).toBe(200);
    expect(await decryptedNames(sessionA)).toEqual(['Team wifi', 'Tina personal login']);
  });

  const B = webDevice('10');
  let bTrust: ReturnType<typeof deviceTrust>;

  it('device B: approved from A, it unwraps the user key, decrypts, and trusts itself', async () => {
    const tokenB = await ssoLogin(B);
    expect(trustOption(tokenB)).toMatchObject({ HasLoginApprovingDevice: true, HasAdminApproval: true, EncryptedPrivateKey: null, EncryptedUserKey: null });

    // B asks (login with device, type 0), A sees it pending and approves with the user key encapsulated for B.
    const keys = requestKeys();
    const asked = await server().request('POST', '/api/auth-requests', {
      headers: { 'device-type': B.deviceType, 'device-identifier': B.deviceIdentifier },
      json: { email: MEMBER.email, publicKey: keys.publicKeyB64, deviceIdentifier: B.deviceIdentifier, accessCode: 'a'.repeat(25), type: 0 },
    });
    expect(asked.status, asked.text).toBe(200);
    const pending = await api(String(tokenA.access_token), 'GET', '/api/auth-requests/pending');
    const request = (pending.body.data as Json[]).find((r) => r.id === asked.body.id);
    expect(request).toMatchObject({ publicKey: keys.publicKeyB64, requestDeviceIdentifier: B.deviceIdentifier });
    const aKey = Buffer.from(await sessionA.client.crypto().get_user_encryption_key(), 'base64');
    const key = loadSdk().PureCrypto.encapsulate_key_unsigned(aKey, Buffer.from(String(request!.publicKey), 'base64'));
    const approved = await api(String(tokenA.access_token), 'PUT', `/api/auth-requests/${asked.body.id}`, { key, masterPasswordHash: null, deviceIdentifier: A.deviceIdentifier, requestApproved: true });
    expect(approved.status, approved.text).toBe(200);

    // B, already logged in through SSO, reads the answer with its token and unlocks with its request key.
    const answer = await api(String(tokenB.access_token), 'GET', `/api/auth-requests/${asked.body.id}`);
    expect(answer.body).toMatchObject({ requestApproved: true, key });
    const sessionB = await unlock(sdkOn(tokenB), userId, { authRequest: { request_private_key: Buffer.from(keys.privateKey).toString('base64'), method: { userKey: { protected_user_key: answer.body.key } } } });
    expect(await decryptedNames(sessionB)).toEqual(['Team wifi', 'Tina personal login']);
    const bKey = Buffer.from(await sessionB.client.crypto().get_user_encryption_key(), 'base64');
    expect(bKey.equals(Buffer.from(userKey))).toBe(true);

    bTrust = deviceTrust(bKey);
    const trusted = await api(String(tokenB.access_token), 'PUT', `/api/devices/${B.deviceIdentifier}/keys`, bTrust.body);
    expect(trusted.status, trusted.text).toBe(200);
    expect(trusted.body).toMatchObject({ identifier: B.deviceIdentifier, isTrusted: true });
  });

  it('a fresh login on B gets its keys back and unlocks with no approval', async () => {
    const again = await ssoLogin(B);
    expect(trustOption(again)).toMatchObject({ EncryptedPrivateKey: bTrust.body.encryptedPrivateKey, EncryptedUserKey: bTrust.body.encryptedUserKey });
    const option = trustOption(again);
    const session = await unlock(sdkOn(again), userId, {
      deviceKey: { device_key: bTrust.deviceKey, protected_device_private_key: option.EncryptedPrivateKey as Sdk.EncString, device_protected_user_key: option.EncryptedUserKey as Sdk.UnsignedSharedKey },
    });
    expect(await decryptedNames(session)).toEqual(['Team wifi', 'Tina personal login']);
  });

  /** The owner's web vault approving a device: the member's escrowed key, opened with the organization's private key, encapsulated for the request. */
  async function ownerWraps(requestPublicKey: string): Promise<string> {
    const details = await api(owner.accessToken, 'GET', `/api/organizations/${orgId}/users/${memberId}/reset-password-details`);
    expect(details.status, details.text).toBe(200);
    const ownerRow = await db().selectFrom('organization_users').select('key').where('organization_id', '=', orgId).where('user_id', '=', owner.userId).executeTakeFirstOrThrow();
    const ownerOrgKey = symmetricKeyFrom(rsaDecryptEncString(ownerRow.key ?? '', owner.account.privateKeyDer));
    const orgPrivateKey = decryptEncString(details.body.encryptedPrivateKey, ownerOrgKey);
    const escrowed = rsaDecryptEncString(details.body.resetPasswordKey, orgPrivateKey);
    return loadSdk().PureCrypto.encapsulate_key_unsigned(escrowed, Buffer.from(requestPublicKey, 'base64'));
  }

  async function adminRequest(device: Device, token: Json) {
    const keys = requestKeys();
    const asked = await api(String(token.access_token), 'POST', '/api/auth-requests/admin-request', { email: MEMBER.email, publicKey: keys.publicKeyB64, deviceIdentifier: device.deviceIdentifier, accessCode: 'c'.repeat(25), type: 2 }, { 'device-type': device.deviceType });
    expect(asked.status, asked.text).toBe(200);
    return { keys, id: asked.body.id as string };
  }

  it('device C: an owner approves it with the account recovery key, and C decrypts', async () => {
    const C = webDevice('9');
    const tokenC = await ssoLogin(C);
    expect(trustOption(tokenC)).toMatchObject({ HasAdminApproval: true, EncryptedUserKey: null });
    const { keys, id } = await adminRequest(C, tokenC);
    const listed = await api(owner.accessToken, 'GET', `/api/organizations/${orgId}/auth-requests`);
    const pending = (listed.body.data as Json[]).find((r) => r.id === id);
    expect(pending).toMatchObject({ organizationUserId: memberId, publicKey: keys.publicKeyB64 });
    const encryptedUserKey = await ownerWraps(String(pending!.publicKey));
    const approved = await api(owner.accessToken, 'POST', `/api/organizations/${orgId}/auth-requests/${id}`, { requestApproved: true, encryptedUserKey });
    expect(approved.status, approved.text).toBe(200);

    const answer = await api(String(tokenC.access_token), 'GET', `/api/auth-requests/${id}`);
    expect(answer.body).toMatchObject({ requestApproved: true, key: encryptedUserKey });
    const sessionC = await unlock(sdkOn(tokenC), userId, { authRequest: { request_private_key: Buffer.from(keys.privateKey).toString('base64'), method: { userKey: { protected_user_key: answer.body.key } } } });
    expect(await decryptedNames(sessionC)).toEqual(['Team wifi', 'Tina personal login']);

    // The request is recorded for the user, and for the organization asked.
    const requested = await eventsOf(EventType.User_RequestedDeviceApproval, userId);
    expect(requested.map((e) => e.organization_id).sort()).toEqual([null, orgId].sort());
    expect(await eventsOf(EventType.OrganizationUser_ApprovedAuthRequest, userId)).toEqual([expect.objectContaining({ organization_id: orgId, organization_user_id: memberId, acting_user_id: owner.userId })]);
    // Every SSO login of the member was recorded, with its device's type: A, B twice, C.
    expect((await eventsOf(EventType.User_LoggedIn, userId)).map((e) => e.device_type)).toEqual([9, 10, 10, 9]);
  });

  it('a denied request gives no key', async () => {
    const D = webDevice('9');
    const tokenD = await ssoLogin(D);
    const { id } = await adminRequest(D, tokenD);
    const denied = await api(owner.accessToken, 'POST', `/api/organizations/${orgId}/auth-requests/deny`, { ids: [id] });
    expect(denied.status, denied.text).toBe(200);
    const answer = await api(String(tokenD.access_token), 'GET', `/api/auth-requests/${id}`);
    expect(answer.body).toMatchObject({ requestApproved: false, key: null });
    expect(await eventsOf(EventType.OrganizationUser_RejectedAuthRequest, userId)).toHaveLength(1);
  });

  it('a device untrusted from A gets no keys at its next login', async () => {
    const devices = (await api(String(tokenA.access_token), 'GET', '/api/devices')).body.data as Json[];
    const b = devices.find((d) => d.identifier === B.deviceIdentifier);
    expect(b).toMatchObject({ isTrusted: true });
    const untrusted = await api(String(tokenA.access_token), 'POST', '/api/devices/untrust', { devices: [b!.id] });
    expect(untrusted.status, untrusted.text).toBe(200);
    const again = await ssoLogin(B);
    expect(trustOption(again)).toMatchObject({ EncryptedPrivateKey: null, EncryptedUserKey: null, HasLoginApprovingDevice: true });
  });
});
