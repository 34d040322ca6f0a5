import { randomBytes } from 'node:crypto';
import type { CDPSession, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventType } from '../../src/platform/audit/event-type.js';
import { createUser, TEST_DEVICE } from '../support/accounts.js';
import { eventsOf } from '../support/admin.js';
import { testService } from '../support/services.js';
import type { TestServer } from '../support/test-server.js';
import { openStandIn, type StandIn } from '../support/virtual-authenticator.js';

/**
 * Log in with a passkey in Chromium, with the DevTools protocol's virtual authenticator (PRF on):
 * a stand-in page on the server's own origin does what the web vault does through the official
 * routes. It registers a passkey with navigator.credentials.create and the PRF extension, wraps
 * a user key for the PRF output as the clients do (an RSA key pair: the user key under its public
 * key, its private key under the PRF key, its public key under the user key), logs in with
 * `grant_type=webauthn`, and unwraps the user key again with the login's PRF output from the
 * token answer's WebAuthnPrfOption. WebAuthn wants a domain: PUBLIC_URL is http://localhost:<port>.
 */
const CHROMIUM = testService('chromium');

/** The stand-in page (plain JavaScript: this project's TypeScript has no DOM types). */
const PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>Passkey stand-in</title></head><body><p>Passkey stand-in</p><script>
const fromB64u = (t) => Uint8Array.from(atob(t.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0));
const toB64 = (b) => btoa(String.fromCharCode(...new Uint8Array(b)));
const toB64u = (b) => toB64(b).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
const fromB64 = (t) => Uint8Array.from(atob(t), (c) => c.charCodeAt(0));
const subtle = crypto.subtle;
const salt = () => subtle.digest('SHA-256', new TextEncoder().encode('passwordless-login'));
const hmac = async (key, data) => new Uint8Array(await subtle.sign('HMAC', await subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']), data));
// The clients' PRF key: HKDF-Expand of the PRF output into 32 bytes for "enc" and 32 for "mac".
const prfKey = async (prf) => ({ enc: await hmac(prf, new Uint8Array([...new TextEncoder().encode('enc'), 1])), mac: await hmac(prf, new Uint8Array([...new TextEncoder().encode('mac'), 1])) });
const splitKey = (bytes) => ({ enc: bytes.slice(0, 32), mac: bytes.slice(32, 64) });
async function encrypt(key, data) {
  const iv = crypto.getRandomValues(new Uint8Array(16));
  const ct = new Uint8Array(await subtle.encrypt({ name: 'AES-CBC', iv }, await subtle.importKey('raw', key.enc, 'AES-CBC', false, ['encrypt']), data));
  return '2.' + toB64(iv) + '|' + toB64(ct) + '|' + toB64(await hmac(key.mac, new Uint8Array([...iv, ...ct])));
}
async function decrypt(key, text) {
  const [iv, ct, mac] = text.slice(2).split('|').map(fromB64);
  if (toB64(await hmac(key.mac, new Uint8Array([...iv, ...ct]))) !== toB64(mac)) throw new Error('bad mac');
  return new Uint8Array(await subtle.decrypt({ name: 'AES-CBC', iv }, await subtle.importKey('raw', key.enc, 'AES-CBC', false, ['decrypt']), ct));
}
const RSA = { name: 'RSA-OAEP', hash: 'SHA-1' };
async function keySet(prf, userKey) {
  const pair = await subtle.generateKey({ ...RSA, modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]) }, true, ['encrypt', 'decrypt']);
  const publicKey = new Uint8Array(await subtle.exportKey('spki', pair.publicKey));
  const privateKey = new Uint8Array(await subtle.exportKey('pkcs8', pair.privateKey));
  return {
    encryptedUserKey: '4.' + toB64(await subtle.encrypt(RSA, pair.publicKey, userKey)),
    encryptedPublicKey: await encrypt(splitKey(userKey), publicKey),
    encryptedPrivateKey: await encrypt(await prfKey(prf), privateKey),
  };
}
async function call(method, path, token, body) {
  const response = await fetch(path, { method, headers: { ...(token ? { authorization: 'Bearer ' + token } : {}), 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: response.status, body: await response.json().catch(() => null) };
}
const requestOptions = async (o, allow) => ({ publicKey: { challenge: fromB64u(o.challenge), rpId: o.rpId, timeout: o.timeout, userVerification: o.userVerification,
  allowCredentials: allow, extensions: { prf: { eval: { first: await salt() } } } } });
window.registerPasskey = async (token, masterPasswordHash, name, userKeyB64) => {
  const started = await call('POST', '/api/webauthn/attestation-options', token, { masterPasswordHash });
  const o = started.body.options;
  const credential = await navigator.credentials.create({ publicKey: {
    rp: o.rp, challenge: fromB64u(o.challenge), user: { ...o.user, id: fromB64u(o.user.id) }, pubKeyCredParams: o.pubKeyCredParams,
    timeout: o.timeout, attestation: o.attestation, authenticatorSelection: o.authenticatorSelection,
    excludeCredentials: (o.excludeCredentials || []).map((c) => ({ type: 'public-key', id: fromB64u(c.id) })),
    extensions: { prf: { eval: { first: await salt() } } } } });
  const prfCreated = credential.getClientExtensionResults().prf || {};
  let prf = prfCreated.results && prfCreated.results.first;
  if (!prf && prfCreated.enabled) {
    // As the web vault does when the authenticator answers PRF only on get: assert the new passkey once.
    const got = await navigator.credentials.get(await requestOptions({ challenge: o.challenge, rpId: o.rp.id, timeout: o.timeout, userVerification: 'required' }, [{ type: 'public-key', id: credential.rawId }]));
    prf = got.getClientExtensionResults().prf.results.first;
  }
  const keys = prf ? await keySet(new Uint8Array(prf), fromB64(userKeyB64)) : {};
  const deviceResponse = { id: credential.id, rawId: toB64u(credential.rawId), type: credential.type, extensions: {},
    response: { attestationObject: toB64u(credential.response.attestationObject), clientDataJson: toB64u(credential.response.clientDataJSON), transports: credential.response.getTransports() } };
  const saved = await call('POST', '/api/webauthn', token, { deviceResponse, name, token: started.body.token, supportsPrf: Boolean(prfCreated.enabled), ...keys });
  return { rpId: o.rp.id, prfEnabled: Boolean(prfCreated.enabled), saved };
};
window.logInWithPasskey = async (device) => {
  const started = await call('GET', '/identity/accounts/webauthn/assertion-options');
  const o = started.body.options;
  const credential = await navigator.credentials.get(await requestOptions(o, []));
  const prf = credential.getClientExtensionResults().prf.results.first;
  const deviceResponse = { id: credential.id, rawId: toB64u(credential.rawId), type: credential.type, extensions: {},
    response: { authenticatorData: toB64u(credential.response.authenticatorData), signature: toB64u(credential.response.signature),
      clientDataJSON: toB64u(credential.response.clientDataJSON), userHandle: toB64u(credential.response.userHandle) } };
  const form = new URLSearchParams({ grant_type: 'webauthn', client_id: 'web', scope: 'api offline_access', token: started.body.token, deviceResponse: JSON.stringify(deviceResponse), ...device });
  const response = await fetch('/identity/connect/token', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form });
  const body = await response.json();
  let userKey = null;
  const option = body.UserDecryptionOptions && body.UserDecryptionOptions.WebAuthnPrfOption;
  if (option) {
    // The web vault's unlock: the PRF key opens the private key, which opens the user key.
    const privateKey = await subtle.importKey('pkcs8', await decrypt(await prfKey(new Uint8Array(prf)), option.EncryptedPrivateKey), RSA, false, ['decrypt']);
    userKey = toB64(await subtle.decrypt(RSA, privateKey, fromB64(option.EncryptedUserKey.slice(2))));
  }
  return { status: response.status, body, userKey, options: o };
};
</script></body></html>`;

/** The page's functions, as page.evaluate sees them (its callbacks run in the page, so they name nothing of this file). */
type PageFunctions = Record<'registerPasskey' | 'logInWithPasskey', (...args: unknown[]) => Promise<unknown>>;

describe.skipIf(!CHROMIUM)('log in with a passkey in Chromium (virtual authenticator with PRF)', { timeout: 120_000 }, () => {
  let server: TestServer;
  let page: Page;
  let cdp: CDPSession;
  let authenticatorId: string;
  let standIn: StandIn | undefined;

  beforeAll(async () => {
    standIn = await openStandIn(CHROMIUM ?? '', 'passkey-stand-in.html', PAGE, { ctap2Version: 'ctap2_1', hasPrf: true });
    ({ server, page, cdp, authenticatorId } = standIn);
  }, 60_000);

  afterAll(async () => {
    await standIn?.close();
  });

  it('registers a login passkey with PRF, logs in with it and unlocks the user key with its PRF output', async () => {
    const user = await createUser(server);
    const userKey = randomBytes(64).toString('base64');
    const registered = (await page.evaluate(([token, hash, key]) => (globalThis as unknown as PageFunctions).registerPasskey(token, hash, 'Virtual passkey', key), [user.accessToken, user.account.masterPasswordHash, userKey] as const)) as {
      rpId: string;
      prfEnabled: boolean;
      saved: { status: number; body: Record<string, unknown> };
    };
    expect(registered.rpId).toBe('localhost');
    expect(registered.prfEnabled).toBe(true);
    expect(registered.saved.status, JSON.stringify(registered.saved.body)).toBe(200);
    expect(registered.saved.body).toMatchObject({ object: 'webauthnCredential', name: 'Virtual passkey', prfStatus: 0 });
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    expect(credentials).toHaveLength(1);
    expect(credentials[0]?.isResidentCredential).toBe(true);

    const logins = async () => (await eventsOf(server, EventType.User_LoggedIn)).filter((e) => e.user_id === user.userId).length;
    const before = await logins();
    const login = (await page.evaluate((device) => (globalThis as unknown as PageFunctions).logInWithPasskey(device), TEST_DEVICE)) as { status: number; body: Record<string, unknown>; userKey: string | null; options: Record<string, unknown> };
    expect(login.options).toMatchObject({ rpId: 'localhost', allowCredentials: [], userVerification: 'required' });
    expect(login.status, JSON.stringify(login.body)).toBe(200);
    expect(login.body).toMatchObject({ token_type: 'Bearer', UserDecryptionOptions: { WebAuthnPrfOption: { CredentialId: credentials[0]?.credentialId.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '') } } });
    // The server only kept what the page wrapped: the page's PRF output opens it again.
    expect(login.userKey).toBe(userKey);
    expect(await logins()).toBe(before + 1);

    const sync = await server.request('GET', '/api/sync', { token: String(login.body.access_token) });
    expect(sync.body.userDecryption.webAuthnPrfOptions).toHaveLength(1);
  });
});
