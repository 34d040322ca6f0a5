import type { CDPSession, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventType } from '../../src/platform/audit/event-type.js';
import { createUser, passwordGrantForm } from '../support/accounts.js';
import { eventsOf } from '../support/admin.js';
import { testService } from '../support/services.js';
import type { TestServer } from '../support/test-server.js';
import { openStandIn, type StandIn } from '../support/virtual-authenticator.js';

/**
 * WebAuthn as a second factor with Chromium's virtual authenticator (DevTools protocol
 * `WebAuthn.*`): a stand-in page on the server's own origin registers a key through the
 * official routes with navigator.credentials.create, and answers the password grant's
 * assertion options with navigator.credentials.get. WebAuthn wants a domain as relying
 * party, so the server's PUBLIC_URL is http://localhost:<port> (a secure context).
 */
const CHROMIUM = testService('chromium');

/** The stand-in page (plain JavaScript: this project's TypeScript has no DOM types). */
const PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>WebAuthn stand-in</title></head><body><p>WebAuthn stand-in</p><script>
const fromB64u = (text) => Uint8Array.from(atob(text.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0));
const toB64u = (buffer) => btoa(String.fromCharCode(...new Uint8Array(buffer))).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
async function api(method, path, token, body) {
  const response = await fetch('/api' + path, { method, headers: { authorization: 'Bearer ' + token, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, body: await response.json() };
}
window.registerKey = async (token, masterPasswordHash, id, name) => {
  const read = await api('POST', '/two-factor/get-webauthn', token, { masterPasswordHash });
  const started = await api('POST', '/two-factor/get-webauthn-challenge', token, { userVerificationToken: read.body.userVerificationToken });
  const o = started.body.options;
  const credential = await navigator.credentials.create({ publicKey: {
    rp: o.rp, challenge: fromB64u(o.challenge), user: { ...o.user, id: fromB64u(o.user.id) }, pubKeyCredParams: o.pubKeyCredParams,
    timeout: o.timeout, attestation: o.attestation, authenticatorSelection: o.authenticatorSelection,
    excludeCredentials: (o.excludeCredentials || []).map((c) => ({ type: 'public-key', id: fromB64u(c.id) })),
  } });
  const deviceResponse = { id: credential.id, rawId: toB64u(credential.rawId), type: credential.type, extensions: {},
    response: { AttestationObject: toB64u(credential.response.attestationObject), clientDataJson: toB64u(credential.response.clientDataJSON) } };
  const saved = await api('PUT', '/two-factor/webauthn', token, { userVerificationToken: read.body.userVerificationToken, id, name, deviceResponse });
  return { options: o, saved };
};
window.assertion = async (o) => {
  const credential = await navigator.credentials.get({ publicKey: { challenge: fromB64u(o.challenge), rpId: o.rpId, timeout: o.timeout,
    userVerification: o.userVerification, allowCredentials: o.allowCredentials.map((c) => ({ type: 'public-key', id: fromB64u(c.id) })) } });
  return JSON.stringify({ id: credential.id, rawId: toB64u(credential.rawId), type: credential.type, extensions: {},
    response: { authenticatorData: toB64u(credential.response.authenticatorData), signature: toB64u(credential.response.signature),
      clientDataJson: toB64u(credential.response.clientDataJSON), userHandle: credential.response.userHandle ? toB64u(credential.response.userHandle) : null } });
};
</script></body></html>`;

describe.skipIf(!CHROMIUM)('WebAuthn second factor in Chromium (virtual authenticator)', { timeout: 120_000 }, () => {
  let server: TestServer;
  let page: Page;
  let cdp: CDPSession;
  let authenticatorId: string;
  let standIn: StandIn | undefined;

  beforeAll(async () => {
    standIn = await openStandIn(CHROMIUM ?? '', 'webauthn-stand-in.html', PAGE);
    ({ server, page, cdp, authenticatorId } = standIn);
  }, 60_000);

  afterAll(async () => {
    await standIn?.close();
  });

  it('registers a key from the page on the configured origin and completes a password login with its assertion', async () => {
    const user = await createUser(server);
    const { options, saved } = (await page.evaluate(
      ([token, hash]) => (globalThis as unknown as { registerKey: (...a: unknown[]) => Promise<unknown> }).registerKey(token, hash, 1, 'Virtual key'),
      [user.accessToken, user.account.masterPasswordHash] as const,
    )) as { options: { rp: { id: string } }; saved: { status: number; body: unknown } };
    expect(options.rp.id).toBe('localhost');
    expect(saved).toEqual({ status: 200, body: { object: 'twoFactorWebAuthnUpdate', webAuthn: { enabled: true, keys: [{ name: 'Virtual key', id: 1, migrated: false }] } } });
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    expect(credentials).toHaveLength(1);

    const login = (extra: Record<string, string> = {}) => server.request('POST', '/identity/connect/token', { form: { ...passwordGrantForm(user.account), ...extra } });
    const assertion = async (): Promise<string> => {
      const challenged = await login();
      expect(challenged.body.error_description).toBe('Two factor required.');
      expect(challenged.body.TwoFactorProviders).toEqual(['7']);
      const assertionOptions = challenged.body.TwoFactorProviders2['7'];
      expect(assertionOptions).toMatchObject({ rpId: 'localhost' });
      return page.evaluate((o) => (globalThis as unknown as { assertion: (o: unknown) => Promise<string> }).assertion(o), assertionOptions);
    };

    const logins = async () => (await eventsOf(server, EventType.User_LoggedIn)).filter((e) => e.user_id === user.userId).length;
    const before = await logins();
    const token = await assertion();
    const ok = await login({ twoFactorToken: token, twoFactorProvider: '7' });
    expect(ok.status, ok.text).toBe(200);
    expect(await logins()).toBe(before + 1);
    // The assertion is spent with its challenge.
    const replay = await login({ twoFactorToken: token, twoFactorProvider: '7' });
    expect(replay.body.ErrorModel.Message).toBe('Two-step token is invalid. Try again.');
    // A second login: the authenticator's counter went up and the server kept it.
    const signCount = (await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials[0]?.signCount;
    expect((await login({ twoFactorToken: await assertion(), twoFactorProvider: '7' })).status).toBe(200);
    expect((await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials[0]?.signCount).toBeGreaterThan(signCount ?? 0);
  });
});
