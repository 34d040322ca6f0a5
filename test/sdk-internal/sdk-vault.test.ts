/**
 * The official clients' SDK (@bitwarden/sdk-internal) against Strongroom: it logs in, writes a vault
 * through Strongroom's routes and parses every answer with its own models, and decrypts what a sync
 * hands it as the web client hands it over. A refusal here is what an official client would show
 * as an empty vault or a failed unlock.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type * as Sdk from '@bitwarden/sdk-internal';
import { startTestServer, type TestServer } from '../support/test-server.js';
import {
  cipherCreateRequest,
  foundOrganizationWithSdkKeys,
  lastSdkExchange,
  loadSdk,
  registerV1Account,
  sdkClient,
  sdkLogin,
  syncIntoSdk,
  toWrappedAccountState,
  type ItemPlacement,
  type SdkAccount,
  type SdkSession,
} from '../support/sdk-internal.js';

const sdk = loadSdk();
let server: TestServer;
let account: SdkAccount;
let session: SdkSession;
let organizationId: string;
let collectionId: string;
let folderId: string;
const created = new Map<string, Sdk.CipherView>();
const createRequest = (name: string, type: Sdk.CipherViewType, placement: ItemPlacement = {}) => cipherCreateRequest(name, type, { notes: `notes of ${name}`, fields: FIELDS, ...placement });

const FIELDS: Sdk.FieldView[] = [
  { name: 'text field', value: 'text value', type: 0, linkedId: undefined },
  { name: 'hidden field', value: 'hidden value', type: 1, linkedId: undefined },
];

/** One item of each type the SDK and Strongroom both know (1 to 5), as a client's add form fills it in. */
const ITEMS: Record<string, Sdk.CipherViewType> = {
  login: {
    login: {
      username: 'alice',
      password: 's3cret password',
      passwordRevisionDate: undefined,
      uris: [{ uri: 'https://example.com/login', match: undefined, uriChecksum: undefined }],
      totp: 'JBSWY3DPEHPK3PXP',
      autofillOnPageLoad: undefined,
      fido2Credentials: undefined,
    },
  },
  secureNote: { secureNote: { type: 0 } },
  card: { card: { cardholderName: 'Alice Doe', expMonth: '12', expYear: '2030', code: '123', brand: 'Visa', number: '4111111111111111' } },
  identity: {
    identity: Object.fromEntries(
      'title firstName middleName lastName address1 address2 address3 city state postalCode country company email phone ssn username passportNumber licenseNumber'
        .split(' ')
        .map((k) => [k, `${k} value`]),
    ) as unknown as Sdk.IdentityView,
  },
  sshKey: { sshKey: sdk.generate_ssh_key('Ed25519') },
};

// Generous: four PBKDF2 derivations at 600,000 iterations in WASM and two RSA key pairs, on shared CPUs.
beforeAll(async () => {
  server = await startTestServer({ env: { DEPLOYMENT: 'cloud' } });
  account = await registerV1Account(server, 'alice@example.com');
  session = await sdkLogin(server, account);
  const folder = await session.client.vault().folders().create({ name: 'Work' });
  folderId = folder.id as unknown as string;
  for (const [kind, type] of Object.entries(ITEMS)) {
    created.set(kind, await session.client.vault().ciphers().create(createRequest(`${kind} item`, type, { folderId })));
  }
  ({ id: organizationId, collectionId } = await foundOrganizationWithSdkKeys(server, session));
  // The SDK's organization writes need the org key, which the clients take from a sync.
  await syncIntoSdk(server, session);
  created.set('org', await session.client.vault().ciphers().create(createRequest('org item', ITEMS.login!, { organizationId, collectionIds: [collectionId] })));
  await session.client.sends().create({
    name: 'A text Send',
    notes: 'send notes',
    viewType: { Text: { text: 'the secret text', hidden: false } },
    maxAccessCount: undefined,
    disabled: false,
    hideEmail: false,
    deletionDate: new Date(Date.now() + 7 * 86_400_000).toISOString(),
    expirationDate: undefined,
    auth: { type: 'none' },
  });
}, 240_000);

afterAll(async () => {
  await server?.close();
});

describe('the SDK logs in to Strongroom', () => {
  it('reads prelogin and the token answer, and unlocks with its master-password unlock data', async () => {
    expect(lastSdkExchange('POST', '/identity/accounts/prelogin/password').status).toBe(200);
    const token = JSON.parse(lastSdkExchange('POST', '/identity/connect/token').responseBody);
    expect(session.login.userDecryptionOptions.masterPasswordUnlock).toEqual({
      kdf: account.kdf,
      masterKeyWrappedUserKey: token.Key,
      salt: account.email,
    });
    expect(session.login.wrappedAccountCryptoState).toEqual({ V1: { private_key: token.PrivateKey } });
    // Unlocked: the user key the SDK holds is the one the account was made with.
    expect(await session.client.crypto().get_user_encryption_key()).toBe(Buffer.from(account.userKey).toString('base64'));
  });
});

describe('the SDK writes a vault through Strongroom and parses its answers', () => {
  it('parses each created item (types 1 to 5 and an organization item) with its API model', () => {
    for (const [kind, view] of created) {
      expect(view.name, kind).toBe(`${kind === 'org' ? 'org' : kind} item`);
      expect(view.id, kind).toMatch(/^[0-9a-f-]{36}$/);
      expect(view.fields?.map((f) => f.value), kind).toEqual(['text value', 'hidden value']);
    }
    expect(created.get('org')!.organizationId).toBe(organizationId);
    expect(created.get('login')!.folderId).toBe(folderId);
  });
});

describe('a sync, handed to the SDK as the web client hands it', () => {
  let sync: Record<string, unknown>;
  beforeAll(async () => {
    sync = await syncIntoSdk(server, session);
  });

  it('decrypts every item, with every field the client wrote', async () => {
    const { successes, failures } = await session.client.vault().ciphers().get_all();
    expect(failures).toEqual([]);
    expect(successes.map((c) => c.name).sort()).toEqual([...created.keys()].map((k) => `${k} item`).sort());
    const byName = new Map(successes.map((c) => [c.name, c]));
    for (const [kind, view] of created) {
      const synced = byName.get(`${kind} item`)!;
      expect(synced.notes, kind).toBe(`notes of ${kind} item`);
      expect(synced.fields, kind).toEqual(view.fields);
      expect({ login: synced.login, card: synced.card, identity: synced.identity, secureNote: synced.secureNote, sshKey: synced.sshKey }, kind).toEqual({
        login: view.login,
        card: view.card,
        identity: view.identity,
        secureNote: view.secureNote,
        sshKey: view.sshKey,
      });
    }
    expect(byName.get('login item')!.login!.password).toBe('s3cret password');
    expect(byName.get('card item')!.card!.number).toBe('4111111111111111');
  });

  it('decrypts the folders, the Sends and the organization\'s collections', async () => {
    expect((await session.client.vault().folders().list()).map((f) => f.name)).toEqual(['Work']);
    const sends = await session.client.sends().list();
    expect(sends.map((s) => [s.name, s.notes, s.text?.text])).toEqual([['A text Send', 'send notes', 'the secret text']]);
    const collections = session.client.vault().collections().decrypt_list(sync.collections as Sdk.Collection[]);
    expect(collections.map((c) => [c.name, c.organizationId])).toEqual([['Default collection', organizationId]]);
  });

  it('keeps the unlock data and account keys the sync served in the SDK\'s state', () => {
    const unlock = (sync.userDecryption as { masterPasswordUnlock: Record<string, unknown> }).masterPasswordUnlock;
    expect(session.state.get('masterpassword_unlock_data')).toMatchObject({ masterKeyWrappedUserKey: unlock.masterKeyEncryptedUserKey, salt: account.email, kdf: account.kdf });
    expect(session.state.get('account_cryptographic_state')).toEqual(session.login.wrappedAccountCryptoState);
  });
});

describe('the profile answer', () => {
  it('carries account keys a fresh client initialises from, as the clients do after a restart', async () => {
    const profile = await server.request('GET', '/api/accounts/profile', { token: session.token });
    expect(profile.status).toBe(200);
    const fresh = sdkClient(server);
    await fresh.client.crypto().initialize_user_crypto({
      userId: session.userId as unknown as Sdk.UserId,
      kdfParams: account.kdf,
      email: account.email,
      accountCryptographicState: toWrappedAccountState(profile.body.accountKeys),
      method: { decryptedKey: { decrypted_user_key: Buffer.from(account.userKey).toString('base64') } },
    });
    await fresh.client.crypto().initialize_org_crypto({
      organizationKeys: new Map((profile.body.organizations as { id: Sdk.OrganizationId; key: Sdk.UnsignedSharedKey }[]).map((o) => [o.id, o.key])),
    });
    const collections = await server.request('GET', '/api/collections', { token: session.token });
    expect(fresh.client.vault().collections().decrypt_list(collections.body.data).map((c) => c.name)).toEqual(['Default collection']);
  });
});

describe('the SDK changes an item through Strongroom', () => {
  it('edits, trashes and restores an item, parsing each answer', async () => {
    const card = created.get('card')!;
    const ciphers = session.client.vault().ciphers();
    const edited = await ciphers.edit({
      id: card.id!,
      organizationId: undefined,
      folderId: card.folderId,
      favorite: true,
      reprompt: sdk.CipherRepromptType.None,
      name: 'card item, renamed',
      notes: card.notes,
      fields: card.fields ?? [],
      type: { card: { ...card.card!, code: '456' } },
      revisionDate: card.revisionDate,
      archivedDate: undefined,
      attachments: [],
      key: undefined,
    });
    expect([edited.name, edited.card?.code, edited.favorite]).toEqual(['card item, renamed', '456', true]);
    await ciphers.soft_delete(card.id!);
    expect(lastSdkExchange('PUT', `/api/ciphers/${card.id as unknown as string}/delete`).status).toBe(200);
    const restored = await ciphers.restore(card.id!);
    expect([restored.name, restored.card?.number, restored.deletedDate]).toEqual(['card item, renamed', '4111111111111111', undefined]);
  });
});
