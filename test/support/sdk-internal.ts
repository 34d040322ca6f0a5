/**
 * The official clients' WASM SDK (@bitwarden/sdk-internal, the crypto and vault core of the web
 * vault, browser extension and desktop app) driven against a test server as the clients drive it:
 * a `PasswordManagerClient` built with the server's URLs and a token provider, which itself calls
 * prelogin, the token endpoint and the vault routes and parses Strongroom's answers with its own
 * models; the unlock from the token answer's `UserDecryptionOptions`; sync answers handed to its
 * repositories and sync handlers as the clients map them (libs/common sync and `toSdk…`).
 *
 * A test file makes an account (`registerV1Account`, or the SDK's own `registerWithSdk`), `sdkLogin`s,
 * writes through the SDK (`session.client.vault().ciphers().create(cipherCreateRequest(…))`,
 * `foundOrganizationWithSdkKeys`), then hands it a sync with `syncIntoSdk` and decrypts with
 * `session.client.vault().ciphers().get_all()`. The module loads and initialises once per process
 * (`loadSdk`); every request the SDK made is in `sdkTraffic`.
 */
import { createRequire } from 'node:module';
import { pbkdf2Sync } from 'node:crypto';
import type * as Sdk from '@bitwarden/sdk-internal';
import type { TestServer } from './test-server.js';

type SdkModule = typeof Sdk;
let loaded: SdkModule | undefined;

/**
 * The SDK's Node build, initialised once per process: its WASM module takes about a second to
 * compile, and `init_sdk` installs a process-wide logger that must not be installed twice.
 */
export function loadSdk(): SdkModule {
  if (!loaded) {
    // The Node build is CommonJS and loads its .wasm synchronously beside it.
    loaded = createRequire(import.meta.url)('@bitwarden/sdk-internal') as SdkModule;
    loaded.init_sdk(loaded.LogLevel.Warn);
    recordSdkTraffic();
  }
  return loaded;
}

/** One HTTP exchange the SDK made, its bodies as text. */
export interface SdkExchange {
  method: string;
  path: string;
  requestBody: string;
  status: number;
  responseBody: string;
}

/** Every request the SDK made in this process, in order (tests' own requests use undici, not fetch). */
export const sdkTraffic: SdkExchange[] = [];

/** The servers SDK clients were pointed at: only requests to them are recorded. */
const sdkOrigins = new Set<string>();

/**
 * The SDK's HTTP client goes through the global fetch in a WASM build; wrapping it records what
 * Strongroom answered to each SDK call, so a refusal names the route and the body that caused it.
 * Requests to other origins (other test files sharing the worker) pass through untouched.
 */
function recordSdkTraffic(): void {
  const realFetch = globalThis.fetch;
  globalThis.fetch = async (input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]) => {
    const request = new Request(input, init);
    if (!sdkOrigins.has(new URL(request.url).origin)) return realFetch(request);
    const requestBody = request.body ? await request.clone().text() : '';
    const response = await realFetch(request);
    const responseBody = await response.clone().text();
    sdkTraffic.push({ method: request.method, path: new URL(request.url).pathname, requestBody, status: response.status, responseBody });
    return response;
  };
}

/** The last answer the SDK got from a route (method and path), for checking what it parsed. */
export function lastSdkExchange(method: string, path: string | RegExp): SdkExchange {
  const found = sdkTraffic.findLast((e) => e.method === method && (typeof path === 'string' ? e.path === path : path.test(e.path)));
  if (!found) throw new Error(`the SDK made no ${method} ${String(path)} request`);
  return found;
}

/** An in-memory `Repository<T>` of the SDK's client-managed state (the clients back it with their state providers). */
export class MemoryRepository<T> {
  readonly items = new Map<string, T>();
  async get(id: string): Promise<T | null> {
    return this.items.get(id) ?? null;
  }
  async list(): Promise<T[]> {
    return [...this.items.values()];
  }
  async set(id: string, value: T): Promise<void> {
    this.items.set(id, value);
  }
  async setBulk(values: [string, T][]): Promise<void> {
    for (const [id, value] of values) this.items.set(id, value);
  }
  async remove(id: string): Promise<void> {
    this.items.delete(id);
  }
  async removeBulk(ids: string[]): Promise<void> {
    for (const id of ids) this.items.delete(id);
  }
  async removeAll(): Promise<void> {
    this.items.clear();
  }
}

export interface SdkRepositories {
  cipher: MemoryRepository<Sdk.Cipher>;
  folder: MemoryRepository<Sdk.Folder>;
  send: MemoryRepository<Sdk.Send>;
  organization_shared_key: MemoryRepository<Sdk.OrganizationSharedKey>;
  local_user_data_key_state: MemoryRepository<Sdk.LocalUserDataKeyState>;
}

const BRIDGE_STATE = [
  'user_key', 'user_key_id', 'persistent_pin_envelope', 'ephemeral_pin_envelope', 'encrypted_pin', 'v2_upgrade_token',
  'account_cryptographic_state', 'masterpassword_unlock_data', 'webauthn_prf_unlock_data', 'kdf_config', 'v2_encrypted_migrations_grace_period_start',
] as const;

/** The key-management state the SDK keeps through the host (`WasmStateBridge`), in memory; `values` shows what a sync left. */
export function memoryStateBridge(): { bridge: Sdk.WasmStateBridge; values: Map<string, unknown> } {
  const values = new Map<string, unknown>();
  const bridge: Record<string, (value?: unknown) => Promise<unknown>> = {};
  for (const name of BRIDGE_STATE) {
    bridge[`set_${name}`] = async (value) => void values.set(name, value);
    bridge[`get_${name}`] = async () => values.get(name) ?? null;
    bridge[`clear_${name}`] = async () => void values.delete(name);
  }
  return { bridge: bridge as unknown as Sdk.WasmStateBridge, values };
}

/** What the web client tells the server it is: the SDK sends the device type by its enum name. */
export const SDK_DEVICE = { deviceType: 'ChromeBrowser', deviceIdentifier: '7d1e5c2a-8b4f-4a7e-9c3d-2f6b8a1e4c90', deviceName: 'chrome', clientVersion: '2026.10.0' } as const;

/**
 * The headers the web client's API service sends with every request; the sync leaves SSH keys out
 * for a client that does not say it is 2024.12 or later, as the official server does.
 */
export const CLIENT_HEADERS = { 'bitwarden-client-name': 'web', 'bitwarden-client-version': SDK_DEVICE.clientVersion, 'device-type': '9' };

export interface SdkClient {
  client: Sdk.PasswordManagerClient;
  repositories: SdkRepositories;
  state: Map<string, unknown>;
  /** The bearer token its token provider hands the SDK (set by `sdkLogin`). */
  token: string | undefined;
}

/** A client pointed at the test server as the web vault points it at its environment's URLs, before log in. */
export function sdkClient(server: TestServer): SdkClient {
  const sdk = loadSdk();
  sdkOrigins.add(new URL(server.baseUrl).origin);
  const holder = { token: undefined as string | undefined };
  const settings: Sdk.ClientSettings = {
    apiUrl: `${server.baseUrl}/api`,
    identityUrl: `${server.baseUrl}/identity`,
    userAgent: 'Strongroom SDK tests',
    deviceType: SDK_DEVICE.deviceType,
    deviceIdentifier: SDK_DEVICE.deviceIdentifier,
    bitwardenClientVersion: SDK_DEVICE.clientVersion,
  };
  const client = new sdk.PasswordManagerClient({ get_access_token: async () => holder.token }, settings, new sdk.ManagedSettingsClient());
  const repositories: SdkRepositories = {
    cipher: new MemoryRepository(),
    folder: new MemoryRepository(),
    send: new MemoryRepository(),
    organization_shared_key: new MemoryRepository(),
    local_user_data_key_state: new MemoryRepository(),
  };
  client.platform().state().register_client_managed_repositories(repositories);
  const { bridge, values } = memoryStateBridge();
  client.km_state_bridge().register_bridge_impl(bridge);
  const result: SdkClient = {
    client,
    repositories,
    state: values,
    get token() {
      return holder.token;
    },
    set token(value) {
      holder.token = value;
    },
  };
  return result;
}

/** A client-side account: what the person knows and what the client made. */
export interface SdkAccount {
  email: string;
  password: string;
  kdf: Sdk.Kdf;
  /** The raw user key (64 bytes AES-CBC-HMAC for v1; the SDK's serialized key for v2). */
  userKey: Uint8Array;
  /** SPKI DER of the account's public key, base64. */
  publicKey: string;
}

/** PBKDF2-SHA256 at the clients' default: the SDK refuses fewer than 5,000 and the server fewer than 600,000. */
export const V1_KDF: Sdk.Kdf = { pBKDF2: { iterations: 600_000 } };

function kdfFields(kdf: Sdk.Kdf) {
  return 'pBKDF2' in kdf
    ? { kdfType: 0, iterations: kdf.pBKDF2.iterations, memory: null, parallelism: null }
    : { kdfType: 1, iterations: kdf.argon2id.iterations, memory: kdf.argon2id.memory, parallelism: kdf.argon2id.parallelism };
}

/**
 * Registers a version-1 account (AES-CBC-HMAC user key, RSA key pair) with keys the SDK's
 * PureCrypto makes, posted as the web client posts `/identity/accounts/register/finish`.
 * The authentication hash is the master key's PBKDF2 with one iteration, which the SDK's KDF
 * helper refuses (too few iterations), so node computes that one step.
 */
export async function registerV1Account(server: TestServer, email: string, password = 'correct horse battery staple', kdf: Sdk.Kdf = V1_KDF): Promise<SdkAccount> {
  const { PureCrypto } = loadSdk();
  const salt = email.trim().toLowerCase();
  const userKey = PureCrypto.make_user_key_aes256_cbc_hmac();
  const wrappedUserKey = PureCrypto.encrypt_user_key_with_master_password(userKey, password, salt, kdf);
  const privateKey = PureCrypto.rsa_generate_keypair();
  const publicKey = Buffer.from(PureCrypto.rsa_extract_public_key(privateKey)).toString('base64');
  const wrappedPrivateKey = PureCrypto.wrap_decapsulation_key(privateKey, userKey);
  const masterKey = PureCrypto.derive_kdf_material(Buffer.from(password, 'utf8'), Buffer.from(salt, 'utf8'), kdf);
  const authHash = pbkdf2Sync(masterKey, Buffer.from(password, 'utf8'), 1, 32, 'sha256').toString('base64');
  const fields = kdfFields(kdf);
  const res = await server.request('POST', '/identity/accounts/register/finish', {
    json: {
      email,
      masterPasswordHash: authHash,
      masterPasswordHint: null,
      userSymmetricKey: wrappedUserKey,
      userAsymmetricKeys: { publicKey, encryptedPrivateKey: wrappedPrivateKey },
      kdf: fields.kdfType,
      kdfIterations: fields.iterations,
      kdfMemory: fields.memory,
      kdfParallelism: fields.parallelism,
      masterPasswordAuthentication: { salt, kdf: fields, masterPasswordAuthenticationHash: authHash },
      masterPasswordUnlock: { salt, kdf: fields, masterKeyWrappedUserKey: wrappedUserKey },
    },
  });
  if (res.status !== 200) throw new Error(`registration failed: ${res.status} ${res.text}`);
  return { email, password, kdf, userKey, publicKey };
}

/** What the web vault's registration form hands the SDK: the account's fields, no invitation. */
export function registrationRequest(email: string, password: string, emailVerificationToken?: string): Sdk.UserMasterPasswordRegistrationRequest {
  return {
    email,
    salt: email.trim().toLowerCase(),
    master_password: password,
    master_password_hint: undefined,
    email_verification_token: emailVerificationToken,
    sales_assisted_token: undefined,
    organization_user_id: undefined,
    org_invite_token: undefined,
    org_sponsored_free_family_plan_token: undefined,
    accept_emergency_access_invite_token: undefined,
    accept_emergency_access_id: undefined,
    provider_invite_token: undefined,
    provider_user_id: undefined,
    open_org_invite: undefined,
  };
}

/**
 * Registers through the SDK's own registration (`post_keys_for_user_password_registration`):
 * the SDK makes the keys (version 2 in this release: COSE user key, signing key, security state)
 * and posts them itself.
 */
export async function registerWithSdk(server: TestServer, email: string, password = 'correct horse battery staple'): Promise<SdkAccount & { registration: Sdk.UserMasterPasswordRegistrationResponse }> {
  const { client } = sdkClient(server);
  const registration = await client.auth().registration().post_keys_for_user_password_registration(registrationRequest(email, password));
  // The public key is in what the SDK posted, not in what it answers.
  const posted = JSON.parse(lastSdkExchange('POST', '/identity/accounts/register/finish').requestBody) as { accountKeys?: { accountPublicKey?: string } };
  return { email, password, kdf: registration.master_password_unlock.kdf, userKey: Buffer.from(registration.user_key, 'base64'), publicKey: posted.accountKeys?.accountPublicKey ?? '', registration };
}

export interface SdkSession extends SdkClient {
  account: SdkAccount;
  userId: string;
  /** The token answer as the SDK parsed it. */
  login: Sdk.LoginSuccessResponse;
}

/**
 * Logs in as the web client does with the SDK: prelogin and the password grant made by the SDK
 * itself, then `initialize_user_crypto` with the master-password unlock data the SDK read from the
 * token answer's `UserDecryptionOptions`, and the account keys it read there.
 */
export async function sdkLogin(server: TestServer, account: SdkAccount): Promise<SdkSession> {
  const session = sdkClient(server);
  const login = session.client.auth().login();
  const prelogin = await login.get_password_prelogin(account.email);
  const answer = await login.login_via_password({
    loginRequest: { clientId: 'web', device: { deviceType: SDK_DEVICE.deviceType, deviceIdentifier: SDK_DEVICE.deviceIdentifier, deviceName: SDK_DEVICE.deviceName, devicePushToken: undefined } },
    email: account.email,
    password: account.password,
    preloginResponse: prelogin,
  });
  const success = answer.Authenticated;
  session.token = success.accessToken;
  const userId = JSON.parse(Buffer.from(success.accessToken.split('.')[1] ?? '', 'base64url').toString()).sub as string;
  const unlock = success.userDecryptionOptions.masterPasswordUnlock;
  if (!unlock) throw new Error('the token answer carries no master-password unlock data the SDK could read');
  if (!success.wrappedAccountCryptoState) throw new Error('the token answer carries no account keys the SDK could read');
  await session.client.crypto().initialize_user_crypto({
    userId: userId as unknown as Sdk.UserId,
    kdfParams: prelogin.kdf,
    email: account.email,
    accountCryptographicState: success.wrappedAccountCryptoState,
    method: { masterPasswordUnlock: { password: account.password, master_password_unlock: unlock } },
  });
  // The web client hands the SDK the server's boolean feature flags as soon as it has a client.
  const config = await server.request('GET', '/api/config');
  const flags = Object.entries((config.body?.featureStates ?? {}) as Record<string, unknown>).filter((entry): entry is [string, boolean] => typeof entry[1] === 'boolean');
  await session.client.platform().load_flags(new Map(flags));
  return Object.assign(session, { account, userId, login: success });
}

// Sync answers are parsed by the clients' TypeScript models and handed to the SDK as its domain
// models; the mappings below are the clients' (`Cipher.toSdkCipher`, `AccountKeysResponse
// .toWrappedAccountCryptographicState`, `UserDecryptionResponse.toSdk`), kept to the renames and
// conversions they make, so a field Strongroom serves under another name or type stays a failure.

type Json = Record<string, unknown>;

/** A served cipher as the SDK's `Cipher`: the served object, with the one field the domain model names differently. */
export function toSdkCipher(served: Json): Sdk.Cipher {
  const sshKey = served.sshKey as Json | null | undefined;
  return {
    ...served,
    sshKey: sshKey ? { privateKey: sshKey.privateKey, publicKey: sshKey.publicKey, fingerprint: sshKey.keyFingerprint } : undefined,
  } as unknown as Sdk.Cipher;
}

function sdkKdf(kdf: Json): Sdk.Kdf {
  return kdf.kdfType === 0
    ? { pBKDF2: { iterations: kdf.iterations as number } }
    : { argon2id: { iterations: kdf.iterations as number, memory: kdf.memory as number, parallelism: kdf.parallelism as number } };
}

/** The sync's `profile.accountKeys` as the SDK's account state: V1 without signature keys, V2 with them. */
export function toWrappedAccountState(accountKeys: Json): Sdk.WrappedAccountCryptographicState {
  const pair = accountKeys.publicKeyEncryptionKeyPair as Json;
  const signature = accountKeys.signatureKeyPair as Json | null;
  const security = accountKeys.securityState as Json | null;
  if (!signature && !security) return { V1: { private_key: pair.wrappedPrivateKey as Sdk.EncString } };
  if (!signature || !security) throw new Error('signatureKeyPair and securityState must come together');
  return {
    V2: {
      private_key: pair.wrappedPrivateKey as Sdk.EncString,
      signing_key: signature.wrappedSigningKey as Sdk.EncString,
      signed_public_key: pair.signedPublicKey as Sdk.SignedPublicKey,
      security_state: security.securityState as string,
    },
  };
}

/** The crypto parts of a sync answer, as the web client's sync service hands them to the crypto sync handler. */
export function toCryptoSyncData(sync: Json): Sdk.CryptoSyncData {
  const decryption = sync.userDecryption as Json | null | undefined;
  const unlock = decryption?.masterPasswordUnlock as Json | null | undefined;
  const profile = sync.profile as Json;
  return {
    userDecryption: decryption
      ? {
          masterPasswordUnlock: unlock
            ? {
                kdf: sdkKdf(unlock.kdf as Json),
                masterKeyWrappedUserKey: unlock.masterKeyEncryptedUserKey as Sdk.EncString,
                salt: unlock.salt as string,
                ...(unlock.containedKeyId ? { containedKeyId: unlock.containedKeyId as Sdk.KeyId } : {}),
              }
            : undefined,
          ...(decryption.userKeyId ? { userKeyId: decryption.userKeyId as Sdk.KeyId } : {}),
          ...(decryption.webAuthnPrfOptions ? { webAuthnPrfOptions: decryption.webAuthnPrfOptions as Sdk.WebAuthnPrfUnlockOption[] } : {}),
        }
      : undefined,
    accountCryptographicState: profile.accountKeys ? toWrappedAccountState(profile.accountKeys as Json) : undefined,
  };
}

/**
 * GET /api/sync, then what the web client does with the answer: items and folders into the SDK's
 * repositories, the organizations' keys into `initialize_org_crypto`, the crypto parts into the
 * crypto sync handler and the Sends, as served, into the Send sync handler. Returns the answer.
 */
export async function syncIntoSdk(server: TestServer, session: SdkSession): Promise<Json> {
  const res = await server.request('GET', '/api/sync', { token: session.token, headers: CLIENT_HEADERS });
  if (res.status !== 200) throw new Error(`sync failed: ${res.status} ${res.text}`);
  const sync = res.body as Json;
  const profile = sync.profile as Json;
  const organizations = (profile.organizations ?? []) as Json[];
  await session.client.crypto().initialize_org_crypto({
    organizationKeys: new Map(organizations.map((o) => [o.id as Sdk.OrganizationId, o.key as Sdk.UnsignedSharedKey])),
  });
  const byId = <T>(list: Json[], map: (item: Json) => T): [string, T][] => list.map((item) => [item.id as string, map(item)]);
  await session.repositories.cipher.removeAll();
  await session.repositories.cipher.setBulk(byId(sync.ciphers as Json[], toSdkCipher));
  await session.repositories.folder.removeAll();
  await session.repositories.folder.setBulk(byId(sync.folders as Json[], (f) => f as unknown as Sdk.Folder));
  await session.client.crypto_sync_handler().on_sync(toCryptoSyncData(sync));
  await session.client.send_sync_handler().on_sync(sync.sends as Sdk.Send[]);
  return sync;
}

/** Where a new item goes: an organization and its collections, a folder. */
export interface ItemPlacement {
  organizationId?: string;
  collectionIds?: string[];
  folderId?: string;
}

/**
 * The SDK's create request for an item of any type it knows (`{ login: … }`, `{ bankAccount: … }`):
 * `session.client.vault().ciphers().create(cipherCreateRequest(…))` encrypts it, posts it to
 * Strongroom and parses the answer with the SDK's API model.
 */
export function cipherCreateRequest(name: string, type: Sdk.CipherViewType, options: ItemPlacement & { notes?: string; fields?: Sdk.FieldView[] } = {}): Sdk.CipherCreateRequest {
  return {
    organizationId: options.organizationId as unknown as Sdk.OrganizationId | undefined,
    collectionIds: (options.collectionIds ?? []) as unknown as Sdk.CollectionId[],
    folderId: options.folderId as unknown as Sdk.FolderId | undefined,
    name,
    notes: options.notes,
    favorite: false,
    reprompt: loadSdk().CipherRepromptType.None,
    type,
    fields: options.fields ?? [],
  };
}

/**
 * Founds an organization (cloud server: DEPLOYMENT=cloud) as the web vault does, with keys the SDK
 * makes: an org key encapsulated to the founder's public key, an org key pair, the first
 * collection's name under the org key. Returns its id and that collection's id; a sync
 * (`syncIntoSdk`) then hands the SDK the org key.
 */
export async function foundOrganizationWithSdkKeys(server: TestServer, founder: SdkSession): Promise<{ id: string; collectionId: string }> {
  const { PureCrypto } = loadSdk();
  const orgKey = PureCrypto.make_user_key_aes256_cbc_hmac();
  const orgPrivateKey = PureCrypto.rsa_generate_keypair();
  const res = await server.request('POST', '/api/organizations', {
    token: founder.token,
    json: {
      name: 'Acme',
      billingEmail: 'billing@acme.test',
      planType: 20,
      key: PureCrypto.encapsulate_key_unsigned(orgKey, Buffer.from(founder.account.publicKey, 'base64')),
      keys: { publicKey: Buffer.from(PureCrypto.rsa_extract_public_key(orgPrivateKey)).toString('base64'), encryptedPrivateKey: PureCrypto.wrap_decapsulation_key(orgPrivateKey, orgKey) },
      collectionName: PureCrypto.symmetric_encrypt_string('Default collection', orgKey),
    },
  });
  if (res.status !== 200) throw new Error(`organization creation failed: ${res.status} ${res.text}`);
  const collections = await server.request('GET', `/api/organizations/${res.body.id}/collections`, { token: founder.token });
  if (collections.status !== 200) throw new Error(`collections failed: ${collections.status} ${collections.text}`);
  return { id: res.body.id as string, collectionId: collections.body.data[0].id as string };
}
