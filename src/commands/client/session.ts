/**
 * A user's session with a running Strongroom, opened as an official client opens one, for the
 * operator commands that act as a user (`strongroom orgs …`, Secrets Manager commands). The
 * master password is derived here and only its hash is sent; keys are unwrapped and wrapped on
 * this machine.
 *
 * Interface (other commands build on exactly this):
 *   openUserSession({ serverUrl, email, password, caFile?, twoFactorCode?, newDeviceCode? }) → UserSession
 *   UserSession.request(method, path, json?)  path under the server URL ("/api/…"); parsed JSON,
 *                                             or a CommandFailure with the server's message
 *   UserSession.userKey, .privateKeyDer, .publicKeyB64, .email
 *   UserSession.organizations()               the account's confirmed organizations (its profile), read once
 *   UserSession.organizationKey(orgId)        the org key (64 bytes) from that profile
 *   UserSession.close()
 *   crypto.ts: encryptString(text, key) / decryptString(enc, key), encryptBytes / decryptBytes,
 *              generateSymmetricKey(), rsaWrap(keyBytes, publicKeyB64), rsaUnwrap
 *   features/accounts/client-keys.ts: generateRsaKeyPair(), shared with account creation
 *   server.ts: SESSION_OPTIONS, SESSION_USAGE, sessionTarget(values, config) → { serverUrl, caFile?, … },
 *              readMasterPassword(io, email)
 * Symmetric keys are Buffers of 64 raw bytes.
 */
import { createHash } from 'node:crypto';
import { hostname, platform, userInfo } from 'node:os';
import { deriveMasterKey, masterPasswordHash, stretchMasterKey } from '../../features/accounts/client-keys.js';
import { KdfType, normalizeEmail, type KdfSettings } from '../../platform/auth/kdf.js';
import { CommandFailure, ExitCode } from '../options.js';
import { decryptBytes, publicKeyOf, rsaUnwrap } from './crypto.js';
import { endpointOf, send, serverMessage, type HttpAnswer, type ServerEndpoint } from './http.js';

export interface UserSessionOptions {
  serverUrl: string;
  email: string;
  password: string;
  /** A PEM file of the CA that signed the server's certificate, when the system does not trust it. */
  caFile?: string;
  /** A code from the account's authenticator app, when two-step login is on. */
  twoFactorCode?: string;
  /** The code the server mailed for new-device verification. */
  newDeviceCode?: string;
}

/** One of the account's confirmed organizations, as its profile (`GET /api/accounts/profile`) lists it. */
export interface ProfileOrganization {
  id: string;
  name: string;
  /** The organization key, wrapped to the account's public key. */
  key: string | null;
  accessSecretsManager?: boolean;
  useSecretsManager?: boolean;
}

export interface UserSession {
  readonly email: string;
  readonly userKey: Buffer;
  readonly privateKeyDer: Buffer;
  readonly publicKeyB64: string;
  request<T = unknown>(method: string, path: string, json?: unknown): Promise<T>;
  /** The server's answer whatever its status, for the callers to whom a refusal is an answer too. */
  answer(method: string, path: string, json?: unknown): Promise<HttpAnswer>;
  organizations(): Promise<ProfileOrganization[]>;
  organizationKey(orgId: string): Promise<Buffer>;
  close(): void;
}

/** The official client id of the CLI, and the device types of its builds. */
const CLIENT_ID = 'cli';
const CLI_DEVICE_TYPES: Partial<Record<NodeJS.Platform, number>> = { win32: 23, darwin: 24 };
const LINUX_CLI = 25;
const AUTHENTICATOR_PROVIDER = 0;

/**
 * The same device identifier on every run from one machine account: the server remembers known
 * devices (new-device verification, new-login mails), and a fresh one per run would register a
 * device each time. Derived rather than stored, so the command writes nothing on this machine.
 */
function cliDeviceIdentifier(): string {
  const hex = createHash('sha256').update(`strongroom-cli\0${hostname()}\0${userInfo().username}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${((parseInt(hex[16] ?? '0', 16) & 3) | 8).toString(16)}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

function kdfOf(prelogin: unknown): KdfSettings {
  const p = (prelogin ?? {}) as { kdf?: unknown; kdfIterations?: unknown; kdfMemory?: unknown; kdfParallelism?: unknown };
  const number = (v: unknown) => (typeof v === 'number' && Number.isSafeInteger(v) && v > 0 ? v : null);
  const iterations = number(p.kdfIterations);
  if ((p.kdf !== KdfType.PBKDF2_SHA256 && p.kdf !== KdfType.Argon2id) || iterations === null) {
    throw new CommandFailure('The server answered the prelogin without KDF settings this command knows.', ExitCode.Internal);
  }
  return { kdf: p.kdf, iterations, memory: number(p.kdfMemory), parallelism: number(p.kdfParallelism) };
}

/** Why a refused login was refused, with what to do when the command can do it. */
function loginRefusal(answer: HttpAnswer, options: UserSessionOptions): CommandFailure {
  const body = (answer.body ?? {}) as Record<string, unknown>;
  const providers = (body.TwoFactorProviders2 ?? null) as Record<string, unknown> | null;
  if (providers) {
    const message =
      String(AUTHENTICATOR_PROVIDER) in providers
        ? 'Two-step login is on for this account: run the command again with --code <code from your authenticator app>.'
        : 'Two-step login is on for this account with a method this command cannot answer (it takes authenticator app codes with --code).';
    return new CommandFailure(message, ExitCode.Refused);
  }
  const message = serverMessage(answer);
  if (/new device verification required/i.test(message) && options.newDeviceCode === undefined) {
    return new CommandFailure(`The server asks to verify this new device and mailed a code to ${options.email}: run the command again with --new-device-code <code>.`, ExitCode.Refused);
  }
  return new CommandFailure(`The login was refused: ${message}`, ExitCode.Refused);
}

/** A refused request as the command ends on it: the server's message, exit 1; a server error names the request, exit 70. */
export function answerFailure(answer: HttpAnswer, method: string, path: string): CommandFailure {
  const message = serverMessage(answer);
  if (answer.status >= 500) return new CommandFailure(`The server failed on ${method} ${path}: ${message}`, ExitCode.Internal);
  return new CommandFailure(message, ExitCode.Refused);
}

interface TokenAnswer {
  access_token?: unknown;
  Key?: unknown;
  PrivateKey?: unknown;
  UserDecryptionOptions?: { MasterPasswordUnlock?: { MasterKeyWrappedUserKey?: unknown } };
  AccountKeys?: { publicKeyEncryptionKeyPair?: { wrappedPrivateKey?: unknown } };
}

function form(fields: Record<string, string | undefined>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(fields)) if (value !== undefined) params.set(name, value);
  return params.toString();
}

async function postJson(endpoint: ServerEndpoint, path: string, json: unknown, headers: Record<string, string> = {}): Promise<HttpAnswer> {
  return send(endpoint, 'POST', path, { headers: { 'content-type': 'application/json; charset=utf-8', ...headers }, body: JSON.stringify(json) });
}

export async function openUserSession(options: UserSessionOptions): Promise<UserSession> {
  const endpoint = endpointOf(options.serverUrl, options.caFile);
  const email = normalizeEmail(options.email);
  const deviceIdentifier = cliDeviceIdentifier();
  const deviceType = CLI_DEVICE_TYPES[platform()] ?? LINUX_CLI;

  const prelogin = await postJson(endpoint, '/identity/accounts/prelogin', { email }, { 'device-identifier': deviceIdentifier });
  if (prelogin.status !== 200) throw answerFailure(prelogin, 'POST', '/identity/accounts/prelogin');
  const masterKey = await deriveMasterKey(options.password, email, kdfOf(prelogin.body));
  const token = await send(endpoint, 'POST', '/identity/connect/token', {
    headers: { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8', 'device-type': String(deviceType) },
    body: form({
      scope: 'api',
      client_id: CLIENT_ID,
      deviceType: String(deviceType),
      deviceIdentifier,
      deviceName: 'strongroom',
      grant_type: 'password',
      username: email,
      password: await masterPasswordHash(masterKey, options.password),
      ...(options.twoFactorCode !== undefined ? { twoFactorToken: options.twoFactorCode, twoFactorProvider: String(AUTHENTICATOR_PROVIDER), twoFactorRemember: '0' } : {}),
      newDeviceOtp: options.newDeviceCode,
    }),
  });
  if (token.status !== 200) throw token.status >= 500 ? answerFailure(token, 'POST', '/identity/connect/token') : loginRefusal(token, options);
  const answer = (token.body ?? {}) as TokenAnswer;
  // PrivateKey and Key are the older fields; newer servers may send only the structured ones.
  const wrappedUserKey = answer.Key ?? answer.UserDecryptionOptions?.MasterPasswordUnlock?.MasterKeyWrappedUserKey;
  const wrappedPrivateKey = answer.PrivateKey ?? answer.AccountKeys?.publicKeyEncryptionKeyPair?.wrappedPrivateKey;
  if (typeof answer.access_token !== 'string' || typeof wrappedUserKey !== 'string' || typeof wrappedPrivateKey !== 'string') {
    throw new CommandFailure('The server logged in without sending the account keys (an account without a master password cannot use this command).', ExitCode.Refused);
  }
  const accessToken = answer.access_token;
  const userKey = decryptBytes(wrappedUserKey, stretchMasterKey(masterKey));
  const privateKeyDer = decryptBytes(wrappedPrivateKey, userKey);
  let organizations: Promise<ProfileOrganization[]> | undefined;

  async function answerOf(method: string, path: string, json?: unknown): Promise<HttpAnswer> {
    const headers: Record<string, string> = { authorization: `Bearer ${accessToken}`, 'device-type': String(deviceType) };
    return json === undefined
      ? send(endpoint, method, path, { headers })
      : send(endpoint, method, path, { headers: { ...headers, 'content-type': 'application/json; charset=utf-8' }, body: JSON.stringify(json) });
  }

  async function request<T>(method: string, path: string, json?: unknown): Promise<T> {
    const answer = await answerOf(method, path, json);
    if (answer.status < 200 || answer.status >= 300) throw answerFailure(answer, method, path);
    return answer.body as T;
  }

  function organizationsOf(): Promise<ProfileOrganization[]> {
    // The profile lists the same organizations, keys and flags as the sync without the vault's
    // items; a command reads it at most once, as its own memberships do not change under it.
    organizations ??= request<{ organizations?: ProfileOrganization[] }>('GET', '/api/accounts/profile').then((profile) => profile.organizations ?? []);
    return organizations;
  }

  return {
    email,
    userKey,
    privateKeyDer,
    publicKeyB64: publicKeyOf(privateKeyDer),
    request,
    answer: answerOf,
    organizations: organizationsOf,
    async organizationKey(orgId: string): Promise<Buffer> {
      const id = orgId.toLowerCase();
      const wrapped = (await organizationsOf()).find((org) => org.id.toLowerCase() === id)?.key;
      if (!wrapped) throw new CommandFailure(`${email} has no key to organization ${orgId} (not a confirmed member).`, ExitCode.Refused);
      return rsaUnwrap(wrapped, privateKeyDer);
    },
    close() {
      userKey.fill(0);
      privateKeyDer.fill(0);
      organizations = undefined;
    },
  };
}
