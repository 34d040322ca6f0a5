import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { TEST_DEVICE } from '../../../test/support/accounts.js';
import { ENC } from '../../../test/support/admin.js';
import { decryptEncString, deriveMasterKey, encryptToEncString, generateSymmetricKey, rsaDecryptEncString, rsaEncryptToEncString, stretchMasterKey, symmetricKeyFrom } from '../../../test/support/bw-crypto.js';
import { pooledRsaKeyPair } from '../../../test/support/key-pool.js';
import { newMasterPassword } from '../../../test/support/master-password-kdf.js';
import { memberOf } from '../../../test/support/members.js';
import { loginThroughIdp } from '../../../test/support/oidc-idp.js';
import { cliAuthorizeUrl, codeGrantForm, ssoOrganization, startSsoWorld, type SsoWorld } from '../../../test/support/sso-login.js';
import { OrganizationUserStatusType as Status, OrganizationUserType as Role } from '../../platform/access/roles.js';

/**
 * A person new to the server, start to finish, as the first acceptance line reads: the
 * organization's identity provider vouches for them, they are made a member just in time, set
 * their first master password on the page the clients send them to, the owner confirms them, and
 * they see the organization's collection; after that their master password logs in and unlocks.
 */

const EMAIL = 'newcomer@acme.example';
const PASSWORD = 'the newcomer chose this one';
let world: SsoWorld;
beforeAll(async () => {
  world = await startSsoWorld([[{ sub: 'newcomer-sub', email: EMAIL, email_verified: true, name: 'New Comer', password: 'idp-pw' }]]);
});
afterAll(async () => world?.close());

describe('a new person through single sign-on', () => {
  it('is made a member just in time, sets a master password, is confirmed and sees the collection', async () => {
    const server = world.server;
    const { orgId, identifier } = await ssoOrganization(server, world.idps[0]!);
    // SSO is offered to every organization, whatever its plan's own flag says.
    await server.database.db.updateTable('organizations').set({ use_sso: false }).where('id', '=', orgId).execute();
    const owner = await memberOf(server, orgId, { type: Role.Owner });

    // The CLI's login: the IdP's word makes the account and its membership.
    const start = await cliAuthorizeUrl(world, identifier);
    const browser = await loginThroughIdp(start.url, { login: 'newcomer-sub', password: 'idp-pw' });
    const code = browser.location?.searchParams.get('code');
    expect(code, browser.body).toBeTruthy();
    const token = await server.request('POST', '/identity/connect/token', { form: codeGrantForm(code!, start.verifier) });
    expect(token.status, token.text).toBe(200);
    // No master password and no keys yet: the clients send the person to set one.
    expect(token.body.Key).toBeUndefined();
    expect(token.body.UserDecryptionOptions).toMatchObject({ HasMasterPassword: false });
    expect(token.body.UserDecryptionOptions.MasterPasswordUnlock).toBeUndefined();
    const accessToken = String(token.body.access_token);

    // The set-password page: a user key wrapped by the new master key, a key pair wrapped by the user key.
    const userKey = generateSymmetricKey();
    const pair = pooledRsaKeyPair();
    const next = await newMasterPassword(EMAIL, PASSWORD, { kdfType: 0, iterations: 600_000 }, userKey);
    const set = await server.request('POST', '/api/accounts/set-password', {
      token: accessToken,
      json: {
        masterPasswordAuthentication: next.authenticationData,
        masterPasswordUnlock: next.unlockData,
        accountKeys: { accountPublicKey: pair.publicKeyB64, userKeyEncryptedAccountPrivateKey: encryptToEncString(pair.privateKeyDer, userKey) },
        masterPasswordHint: null,
        orgIdentifier: identifier,
      },
    });
    expect(set.status, set.text).toBe(200);

    // The owner confirms the accepted member with the org key wrapped to its public key, and gives it a collection.
    const members = await server.request('GET', `/api/organizations/${orgId}/users`, { token: owner.accessToken });
    const row = (members.body.data as { id: string; email: string; status: number; userId: string }[]).find((m) => m.email === EMAIL);
    expect(row).toMatchObject({ status: Status.Accepted });
    const publicKey = await server.request('GET', `/api/users/${row!.userId}/public-key`, { token: owner.accessToken });
    expect(publicKey.body.publicKey).toBe(pair.publicKeyB64);
    const orgKey = generateSymmetricKey();
    const confirm = await server.request('POST', `/api/organizations/${orgId}/users/${row!.id}/confirm`, { token: owner.accessToken, json: { key: rsaEncryptToEncString(orgKey.raw, pair.publicKeyB64) } });
    expect(confirm.status, confirm.text).toBe(200);
    const collection = await server.request('POST', `/api/organizations/${orgId}/collections`, {
      token: owner.accessToken,
      json: { name: ENC, externalId: null, groups: [], users: [{ id: row!.id, readOnly: true, hidePasswords: false, manage: false }] },
    });
    expect(collection.status, collection.text).toBe(200);

    // The member's sync (the session SSO gave it goes on) shows the organization and its collection.
    const sync = await server.request('GET', '/api/sync', { token: accessToken });
    expect(sync.status, sync.text).toBe(200);
    const body = sync.body as { profile: { organizations: { id: string; ssoBound: boolean; key: string }[] }; collections: { id: string }[] };
    expect(body.profile.organizations.map((o) => [o.id, o.ssoBound])).toEqual([[orgId, true]]);
    expect(body.collections.map((c) => c.id)).toEqual([collection.body.id]);
    // The org key it was given opens with its private key.
    expect(rsaDecryptEncString(body.profile.organizations[0]!.key, pair.privateKeyDer).equals(orgKey.raw)).toBe(true);

    // And the new master password logs in and unlocks the user key it wrapped.
    const login = await server.request('POST', '/identity/connect/token', {
      form: { grant_type: 'password', username: EMAIL, password: next.masterPasswordHash, scope: 'api offline_access', client_id: 'cli', ...TEST_DEVICE, deviceIdentifier: randomUUID() },
    });
    expect(login.status, login.text).toBe(200);
    const unlock = login.body.UserDecryptionOptions.MasterPasswordUnlock;
    const opened = symmetricKeyFrom(decryptEncString(unlock.MasterKeyEncryptedUserKey, stretchMasterKey(deriveMasterKey(PASSWORD, unlock.Salt, unlock.Kdf.Iterations))));
    expect(opened.raw.equals(userKey.raw)).toBe(true);
  });
});
