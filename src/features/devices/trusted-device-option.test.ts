import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedMembership, seedOrganization } from '../../../test/support/orgs.js';
import { loadSdk, registerV1Account, SDK_DEVICE, sdkClient, sdkLogin, V1_KDF, type SdkSession } from '../../../test/support/sdk-internal.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import type * as Sdk from '@bitwarden/sdk-internal';
import { OrganizationUserStatusType, OrganizationUserType } from '../../platform/access/roles.js';
import { findDevice, findUserById } from '../../platform/auth/users.repository.js';
import { createTokenResponses } from '../identity/token-response.js';
import { MemberDecryptionType, saveSsoConfig } from '../sso/sso-config.repository.js';
import { trustedDeviceOption } from './trusted-device-option.js';

/**
 * `UserDecryptionOptions.TrustedDeviceOption` in the token answer of a login through an
 * organization's SSO. The SSO login itself is another part's (the `ssoLogin` hook); here the
 * token answer is built by the same composition the identity service uses (createTokenResponses
 * with the wired provider) for the login facts an SSO login hands it. The device is trusted with
 * keys the SDK's PureCrypto makes, and a fresh SDK client unlocks from what the answer carries.
 */
let server: TestServer;
let session: SdkSession;
let orgId: string;
let memberId: string;
/** The device key: only the trusted device holds it. */
let deviceKey: Uint8Array;

const db = () => server.database.db;

async function saveConfig(organizationId: string, memberDecryptionType: number) {
  const now = new Date().toISOString();
  await saveSsoConfig(db(), {
    organizationId,
    enabled: true,
    data: { configType: 1, memberDecryptionType, authority: 'https://idp.example.com', clientId: 'strongroom', clientSecret: 'sealed' },
    creationDate: now,
    revisionDate: now,
  });
}

/** The token answer an SSO login through `organizationId` on `identifier` would carry (no organization: any other login). */
async function tokenAnswer(identifier: string, organizationId?: string): Promise<Answer> {
  const user = await findUserById(db(), session.userId);
  const device = (await findDevice(db(), session.userId, identifier)) ?? null;
  const respond = createTokenResponses({ db: db(), decryptionOptions: trustedDeviceOption({ db: db() }) });
  return (await respond({ user: user!, device, ...(organizationId ? { ssoOrganizationId: organizationId } : {}) }, { accessToken: 'not used', expiresIn: 3600 }, 'api offline_access')) as unknown as Answer;
}

type Answer = { UserDecryptionOptions: { HasMasterPassword: boolean; TrustedDeviceOption?: Record<string, unknown> & { EncryptedPrivateKey: string; EncryptedUserKey: string } } };

const option = async (identifier: string, organizationId?: string) => (await tokenAnswer(identifier, organizationId)).UserDecryptionOptions.TrustedDeviceOption;

async function addDevice(type: number): Promise<string> {
  const identifier = randomUUID();
  const now = new Date().toISOString();
  await db().insertInto('devices').values({ id: randomUUID(), user_id: session.userId, type, identifier, name: 'other', push_token: null, creation_date: now, revision_date: now }).execute();
  return identifier;
}

beforeAll(async () => {
  server = await startTestServer();
  const account = await registerV1Account(server, 'tde.member@example.com');
  session = await sdkLogin(server, account);
  orgId = await seedOrganization(server);
  memberId = await seedMembership(server, { organizationId: orgId, userId: session.userId, type: OrganizationUserType.User });
  await saveConfig(orgId, MemberDecryptionType.TrustedDeviceEncryption);

  // What a client makes when it trusts itself (the SDK's own primitives): a device key, an RSA
  // key pair, the user key encapsulated for the pair, the private key wrapped with the device key.
  const { PureCrypto } = loadSdk();
  deviceKey = PureCrypto.make_user_key_aes256_cbc_hmac();
  const privateKey = PureCrypto.rsa_generate_keypair();
  const publicKey = PureCrypto.rsa_extract_public_key(privateKey);
  const res = await server.request('PUT', `/api/devices/${SDK_DEVICE.deviceIdentifier}/keys`, {
    token: session.token,
    json: {
      encryptedUserKey: PureCrypto.encapsulate_key_unsigned(account.userKey, publicKey),
      encryptedPublicKey: PureCrypto.wrap_encapsulation_key(publicKey, account.userKey),
      encryptedPrivateKey: PureCrypto.wrap_decapsulation_key(privateKey, deviceKey),
    },
  });
  expect(res.status, res.text).toBe(200);
}, 60_000);
afterAll(async () => server.close());

describe('TrustedDeviceOption', () => {
  it("carries the trusted device's keys, from which a fresh SDK client unlocks the vault with the device key", async () => {
    const answer = await tokenAnswer(SDK_DEVICE.deviceIdentifier, orgId);
    const tde = answer.UserDecryptionOptions.TrustedDeviceOption!;
    expect(tde).toEqual({
      HasAdminApproval: false,
      HasLoginApprovingDevice: false,
      HasManageResetPasswordPermission: false,
      IsTdeOffboarding: false,
      EncryptedPrivateKey: expect.stringMatching(/^2\./),
      EncryptedUserKey: expect.stringMatching(/^4\./),
    });
    // The master password unlock stays beside it for an account that has one.
    expect(answer.UserDecryptionOptions.HasMasterPassword).toBe(true);

    const fresh = sdkClient(server);
    await fresh.client.crypto().initialize_user_crypto({
      userId: session.userId as unknown as Sdk.UserId,
      kdfParams: V1_KDF,
      email: session.account.email,
      accountCryptographicState: session.login.wrappedAccountCryptoState!,
      method: { deviceKey: { device_key: Buffer.from(deviceKey).toString('base64'), protected_device_private_key: tde.EncryptedPrivateKey as Sdk.EncString, device_protected_user_key: tde.EncryptedUserKey as Sdk.UnsignedSharedKey } },
    });
    expect(await fresh.client.crypto().get_user_encryption_key()).toBe(Buffer.from(session.account.userKey).toString('base64'));
  });

  it('is absent from a login not through SSO, and from one through an organization without trusted devices', async () => {
    expect(await option(SDK_DEVICE.deviceIdentifier)).toBeUndefined();
    const other = await seedOrganization(server);
    await saveConfig(other, MemberDecryptionType.MasterPassword);
    expect(await option(SDK_DEVICE.deviceIdentifier, other)).toBeUndefined();
    expect(await option(SDK_DEVICE.deviceIdentifier, await seedOrganization(server))).toBeUndefined();
    // A real password login through the token endpoint, as the SDK reads it, carries none either.
    const again = await sdkLogin(server, session.account);
    expect(again.login.userDecryptionOptions.trustedDeviceOption).toBeUndefined();
  });

  it('gives a new device no keys, and says whether another device could approve it', async () => {
    const fresh = await addDevice(25);
    // The trusted web vault (type 9) can approve; the keys are not this device's to have.
    expect(await option(fresh, orgId)).toMatchObject({ HasLoginApprovingDevice: true, EncryptedPrivateKey: null, EncryptedUserKey: null });
    // The CLI cannot approve: from the web vault, the only other device is a CLI, then an Android phone.
    expect((await option(SDK_DEVICE.deviceIdentifier, orgId))!.HasLoginApprovingDevice).toBe(false);
    const phone = await addDevice(0);
    expect((await option(SDK_DEVICE.deviceIdentifier, orgId))!.HasLoginApprovingDevice).toBe(true);
    // A phone the account removed approves nothing.
    await db().updateTable('devices').set({ active: false }).where('identifier', '=', phone).execute();
    expect((await option(SDK_DEVICE.deviceIdentifier, orgId))!.HasLoginApprovingDevice).toBe(false);
    await db().updateTable('devices').set({ active: true }).where('identifier', '=', phone).execute();
  });

  it('says whether an admin can approve (account recovery enrollment) and whether the member manages account recovery', async () => {
    const member = (changes: Record<string, unknown>) => db().updateTable('organization_users').set(changes).where('id', '=', memberId).execute();
    await member({ reset_password_key: '4.ZW5yb2xsZWQ=' });
    expect(await option(SDK_DEVICE.deviceIdentifier, orgId)).toMatchObject({ HasAdminApproval: true, HasManageResetPasswordPermission: false });
    await member({ type: OrganizationUserType.Custom, permissions: JSON.stringify({ manageResetPassword: true }) });
    expect((await option(SDK_DEVICE.deviceIdentifier, orgId))!.HasManageResetPasswordPermission).toBe(true);
    await member({ type: OrganizationUserType.Admin, permissions: null });
    expect((await option(SDK_DEVICE.deviceIdentifier, orgId))!.HasManageResetPasswordPermission).toBe(true);
    await member({ status: OrganizationUserStatusType.Revoked });
    expect((await option(SDK_DEVICE.deviceIdentifier, orgId))!.HasManageResetPasswordPermission).toBe(false);
    await member({ status: OrganizationUserStatusType.Confirmed, type: OrganizationUserType.User, reset_password_key: null });
  });

  it('marks TDE offboarding: no master password, a trusted device, and an organization back on master passwords', async () => {
    const other = await seedOrganization(server);
    await saveConfig(other, MemberDecryptionType.MasterPassword);
    await db().updateTable('users').set({ master_password_hash: null }).where('id', '=', session.userId).execute();
    expect(await option(SDK_DEVICE.deviceIdentifier, other)).toMatchObject({ IsTdeOffboarding: true, EncryptedUserKey: expect.stringMatching(/^4\./) });
    const answer = await tokenAnswer(SDK_DEVICE.deviceIdentifier, other);
    expect(answer.UserDecryptionOptions.HasMasterPassword).toBe(false);
    // An untrusted device has nothing to offboard with; the organization still on trusted devices is no offboarding.
    expect(await option(await addDevice(9), other)).toBeUndefined();
    expect((await option(SDK_DEVICE.deviceIdentifier, orgId))!.IsTdeOffboarding).toBe(false);
  });
});
