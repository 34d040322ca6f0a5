import { ManagedSettingsClient, PasswordManagerClient, PureCrypto, type Cipher, type CipherView, type EncString, type UserId } from '@bitwarden/sdk-internal';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actor, seedCollection, type Actor } from '../../../test/support/admin.js';
import { seedAccount, type LoggedInUser } from '../../../test/support/accounts.js';
import { generateSymmetricKey } from '../../../test/support/bw-crypto.js';
import { seedOrganization } from '../../../test/support/orgs.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { cipherBody, schemaErrors } from '../../../test/support/vault.js';
import { OrganizationUserType } from '../../platform/access/roles.js';
import { CipherDetailsResponse, CipherMiniResponse, CipherResponse, SEALED_DATA_MAX_LENGTH } from './ciphers.schemas.js';

/**
 * Items sealed whole: an account at security version 2, made with the official clients' SDK
 * (@bitwarden/sdk-internal), creates its personal items through the SDK's CiphersClient, which
 * seals each into one `data` text and sends no name. The server stores that text, answers it
 * as the string `data`, and the SDK decrypts the synced items back.
 */

let server: TestServer;
let user: LoggedInUser;
let sdk: PasswordManagerClient;
const CLIENT = { 'bitwarden-client-version': '2026.9.0' };
const USER_EMAIL = 'sealed@example.com';
const KDF = { pBKDF2: { iterations: 600_000 } };

type Item = Record<string, unknown>;
const call = (method: string, path: string, json?: unknown, token = user.accessToken) =>
  server.request(method, `/api${path}`, { token, headers: CLIENT, ...(json === undefined ? {} : { json }) });

/** A client for `userId` whose account is at security version 2, as the SDK upgrades one. */
async function v2Client(baseUrl: string, id: string, token: string): Promise<PasswordManagerClient> {
  const userId = id as unknown as UserId;
  // make_keys_for_user_crypto_v2 upgrades an unlocked version-1 account, so unlock one first.
  const v1Key = PureCrypto.make_user_key_aes256_cbc_hmac();
  const v1 = new PasswordManagerClient({ get_access_token: () => Promise.resolve(token) }, {}, new ManagedSettingsClient());
  await v1.crypto().initialize_user_crypto({
    userId,
    email: USER_EMAIL,
    kdfParams: KDF,
    accountCryptographicState: { V1: { private_key: PureCrypto.wrap_decapsulation_key(PureCrypto.rsa_generate_keypair(), v1Key) as EncString } },
    method: { decryptedKey: { decrypted_user_key: Buffer.from(v1Key).toString('base64') } },
  });
  const keys = v1.crypto().make_keys_for_user_crypto_v2();
  const client = new PasswordManagerClient(
    { get_access_token: () => Promise.resolve(token) },
    { apiUrl: `${baseUrl}/api`, identityUrl: `${baseUrl}/identity`, bitwardenClientVersion: '2026.9.0' },
    new ManagedSettingsClient(),
  );
  await client.crypto().initialize_user_crypto({
    userId,
    email: USER_EMAIL,
    kdfParams: KDF,
    accountCryptographicState: {
      V2: { private_key: keys.privateKey, signed_public_key: keys.signedPublicKey, signing_key: keys.signingKey, security_state: keys.securityState },
    },
    method: { decryptedKey: { decrypted_user_key: keys.userKey } },
  });
  return client;
}

/** A server item as the SDK's Cipher: nulls become absent, as the clients' API models read them. */
function toSdkCipher(item: Item): Cipher {
  const out: Record<string, unknown> = { collectionIds: [], localData: undefined };
  for (const [k, v] of Object.entries(item)) if (k !== 'object') out[k] = v ?? undefined;
  return out as unknown as Cipher;
}

async function createSealed(name: string, notes: string, password: string): Promise<CipherView> {
  return sdk.vault().ciphers().create({
    organizationId: undefined,
    collectionIds: [],
    folderId: undefined,
    name,
    notes,
    favorite: false,
    reprompt: 0,
    type: { login: { username: 'alice', password, passwordRevisionDate: undefined, uris: undefined, totp: undefined, autofillOnPageLoad: undefined, fido2Credentials: undefined } },
    fields: [],
  });
}

async function syncItems(): Promise<Item[]> {
  const res = await call('GET', '/sync');
  expect(res.status, res.text).toBe(200);
  return (res.body as { ciphers: Item[] }).ciphers;
}

/** What the SDK sent for a sealed item, taken back from the server's answer: its type, key and sealed text. */
const sealedBody = (item: Item, overrides: Item = {}) => ({ type: item.type, key: item.key, data: item.data, ...overrides });

beforeAll(async () => {
  server = await startTestServer();
  user = await seedAccount(server, { email: USER_EMAIL });
  sdk = await v2Client(server.baseUrl, user.userId, user.accessToken);
}, 120_000);
afterAll(async () => server?.close());

describe('an item sealed whole', () => {
  it('is created by the SDK of a version-2 account, synced as a string and decrypted back', async () => {
    const view = await createSealed('bank login', 'sealed notes', 'hunter2');
    expect(view.name).toBe('bank login');
    const synced = (await syncItems()).find((c) => c.id === view.id)!;
    expect(typeof synced.data).toBe('string');
    expect(JSON.parse(synced.data as string)).toHaveProperty('format_version', 1);
    // Answered as the official server answers it: no name, no sub-objects; the content is in `data` only.
    expect(synced).toMatchObject({ name: null, notes: null, login: null, fields: null, passwordHistory: null, type: 1 });
    expect(schemaErrors(CipherDetailsResponse, synced)).toEqual([]);
    const back = await sdk.vault().ciphers().decrypt(toSdkCipher(synced));
    expect(back).toMatchObject({ name: 'bank login', notes: 'sealed notes', login: { username: 'alice', password: 'hunter2' } });
    const single = (await call('GET', `/ciphers/${view.id as unknown as string}`)).body as Item;
    expect(single.data).toBe(synced.data);
    expect(schemaErrors(CipherResponse, single)).toEqual([]);
  });

  it('is replaced by a new sealed text on update, and the SDK reads the new one', async () => {
    const first = await createSealed('first', 'n1', 'p1');
    const second = await createSealed('second', 'n2', 'p2');
    const items = await syncItems();
    const source = items.find((c) => c.id === second.id)!;
    const updated = await call('PUT', `/ciphers/${first.id as unknown as string}`, sealedBody(source));
    expect(updated.status, updated.text).toBe(200);
    expect((updated.body as Item).data).toBe(source.data);
    const synced = (await syncItems()).find((c) => c.id === first.id)!;
    expect(await sdk.vault().ciphers().decrypt(toSdkCipher(synced))).toMatchObject({ name: 'second', notes: 'n2' });
  });

  it('is imported, and the name and sub-objects sent beside it are dropped', async () => {
    const view = await createSealed('to import', 'n', 'p');
    const source = (await syncItems()).find((c) => c.id === view.id)!;
    const body = cipherBody('login', generateSymmetricKey());
    const res = await call('POST', '/ciphers/import', { folders: [], ciphers: [{ ...body, ...sealedBody(source) }], folderRelationships: [] });
    expect(res.status, res.text).toBe(200);
    const imported = (await syncItems()).filter((c) => c.data === source.data && c.id !== view.id);
    expect(imported).toHaveLength(1);
    expect(imported[0]).toMatchObject({ name: null, login: null, notes: null });
    expect(await sdk.vault().ciphers().decrypt(toSdkCipher(imported[0]!))).toMatchObject({ name: 'to import' });
  });

  it('is moved into an organization, imported into one and exported, as a string', async () => {
    const org = await seedOrganization(server, { name: 'Sealed Co' });
    const owner: Actor = await actor(server, org, 'sealed-owner@example.com', { type: OrganizationUserType.Owner });
    const collection = await seedCollection(server, org, { users: [[owner.memberId]] });
    const created = await call('POST', '/ciphers', cipherBody('login', generateSymmetricKey()), owner.token);
    expect(created.status, created.text).toBe(200);
    const view = await createSealed('sealed for org', 'n', 'p');
    const source = (await syncItems()).find((c) => c.id === view.id)!;
    const shared = await call('PUT', `/ciphers/${(created.body as Item).id as string}/share`, { cipher: sealedBody(source, { organizationId: org }), collectionIds: [collection] }, owner.token);
    expect(shared.status, shared.text).toBe(200);
    expect((shared.body as Item).data).toBe(source.data);
    const admin = await call('GET', `/ciphers/organization-details?organizationId=${org}`, undefined, owner.token);
    expect(admin.status, admin.text).toBe(200);
    const row = (admin.body as { data: Item[] }).data.find((c) => c.data === source.data)!;
    expect(row).toMatchObject({ name: null, login: null });
    const mini = Object.fromEntries(Object.entries(row).filter(([k]) => k !== 'collectionIds'));
    expect(schemaErrors(CipherMiniResponse, { ...mini, object: 'cipherMini' })).toEqual([]);

    // An organization import and the organization export carry it the same way.
    const imported = await call(
      'POST',
      `/ciphers/import-organization?organizationId=${org}`,
      { ciphers: [sealedBody(source, { organizationId: org })], collections: [], collectionRelationships: [] },
      owner.token,
    );
    expect(imported.status, imported.text).toBe(200);
    const exported = await call('GET', `/organizations/${org}/export`, undefined, owner.token);
    expect(exported.status, exported.text).toBe(200);
    const sealedInExport = (exported.body as { ciphers: Item[] }).ciphers.filter((c) => c.data === source.data);
    expect(sealedInExport).toHaveLength(2);
    for (const item of sealedInExport) expect(item).toMatchObject({ name: null, login: null });
  });
});

describe('items sent field by field', () => {
  it('have no data member, and a data text that is not a sealed item is ignored', async () => {
    const key = generateSymmetricKey();
    const res = await call('POST', '/ciphers', { ...cipherBody('login', key), data: '{"name":"plain","login":{}}' });
    expect(res.status, res.text).toBe(200);
    expect(res.body).not.toHaveProperty('data');
    expect(typeof (res.body as Item).name).toBe('string');
    expect((res.body as Item).login).not.toBeNull();
  });
});

describe('what is refused', () => {
  const key = generateSymmetricKey();
  const sealed = (version: unknown) => JSON.stringify({ format_version: version, wrapped_cek: 'x', envelope: 'y' });
  const refusals: [string, Item, string][] = [
    ['data that is not a string', { type: 1, data: { format_version: 1 } }, 'data'],
    ['a sealed text over the bound', { type: 1, data: `{"format_version":1,"pad":"${'a'.repeat(SEALED_DATA_MAX_LENGTH)}"}` }, 'data'],
    ['a format_version no client reads', { type: 1, data: sealed('1') }, 'data'],
    ['a format_version of 0', { type: 1, data: sealed(0) }, 'data'],
    ['no name and no sealed text', { type: 1, login: {} }, 'name'],
    ['a sealed item of a type the server does not know', { type: 9, data: sealed(1) }, 'type'],
  ];

  it.each(refusals)('%s, with a 400 naming the field, on create, update and import', async (_, body, field) => {
    const before = (await syncItems()).length;
    const created = await call('POST', '/ciphers', body);
    expect(created.status, created.text).toBe(400);
    expect(Object.keys((created.body as { validationErrors: object }).validationErrors)).toEqual([field]);
    const existing = await call('POST', '/ciphers', cipherBody('login', key));
    const updated = await call('PUT', `/ciphers/${(existing.body as Item).id as string}`, body);
    expect(updated.status, updated.text).toBe(400);
    expect(Object.keys((updated.body as { validationErrors: object }).validationErrors)).toEqual([field]);
    const imported = await call('POST', '/ciphers/import', { folders: [], ciphers: [cipherBody('login', key), body], folderRelationships: [] });
    expect(imported.status, imported.text).toBe(400);
    expect(Object.keys((imported.body as { validationErrors: object }).validationErrors)).toEqual([`ciphers[1].${field}`]);
    expect(await syncItems()).toHaveLength(before + 1);
  });
});
