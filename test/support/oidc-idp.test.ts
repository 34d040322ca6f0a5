import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as client from 'openid-client';
import { afterEach, describe, expect, it } from 'vitest';
import { loginThroughIdp, startOidcIdp, type OidcIdp } from './oidc-idp.js';

/**
 * The test IdP itself, driven by openid-client as a bare relying party on loopback: a login
 * completes with the right password, fails with a wrong one, and each misbehaviour breaks the
 * one check it is meant to break.
 */

let idp: OidcIdp | undefined;
let rp: Server | undefined;
afterEach(async () => {
  await idp?.close();
  if (rp) {
    rp.closeAllConnections();
    await new Promise<void>((resolve) => rp!.close(() => resolve()));
  }
  idp = undefined;
  rp = undefined;
});

/** A relying party whose callback exchanges the code and redirects to `done:` with the claims or the error. */
async function startRp(): Promise<{ base: string; start(extra?: Record<string, string>): Promise<string> }> {
  rp = createServer();
  await new Promise<void>((resolve) => rp!.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(rp.address() as AddressInfo).port}`;
  idp = await startOidcIdp({
    clients: [{ client_id: 'strongroom', client_secret: 'secret-1', redirect_uris: [`${base}/sso/oidc-signin`] }],
    users: [{ sub: 'u1', email: 'ada@example.com', name: 'Ada', password: 'pw-ada' }],
  });
  const flows = new Map<string, { verifier: string; nonce: string }>();
  let config: client.Configuration | undefined;
  const configOf = async () => (config ??= await client.discovery(new URL(idp!.issuer), 'strongroom', undefined, client.ClientSecretPost('secret-1'), { execute: [client.allowInsecureRequests] }));
  rp.on('request', (req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', base);
      if (req.method === 'POST') {
        const chunks: Buffer[] = [];
        for await (const chunk of req) chunks.push(chunk as Buffer);
        url.search = Buffer.concat(chunks).toString('utf8');
      }
      const state = url.searchParams.get('state') ?? '';
      const flow = flows.get(state);
      try {
        const tokens = await client.authorizationCodeGrant(await configOf(), url, { pkceCodeVerifier: flow?.verifier, expectedState: state, expectedNonce: flow?.nonce });
        res.writeHead(302, { location: `done:?claims=${encodeURIComponent(JSON.stringify(tokens.claims()))}` }).end();
      } catch (error) {
        const { message, cause } = error as Error & { cause?: Error };
        res.writeHead(302, { location: `done:?error=${encodeURIComponent(`${message}: ${cause?.message ?? ''}`)}` }).end();
      }
    })();
  });
  return {
    base,
    async start(extra: Record<string, string> = {}) {
      const verifier = client.randomPKCECodeVerifier();
      const nonce = client.randomNonce();
      const state = client.randomState();
      flows.set(state, { verifier, nonce });
      return client.buildAuthorizationUrl(await configOf(), { redirect_uri: `${base}/sso/oidc-signin`, scope: 'openid email profile', code_challenge: await client.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state, nonce, ...extra }).toString();
    },
  };
}

function outcome(location: URL | undefined): { claims?: Record<string, unknown>; error?: string } {
  const claims = location?.searchParams.get('claims');
  return claims ? { claims: JSON.parse(claims) as Record<string, unknown> } : { error: location?.searchParams.get('error') ?? 'no redirect' };
}

describe('the test OIDC identity provider', () => {
  it('logs a user in with the right password and answers their claims in the id_token', async () => {
    const relyingParty = await startRp();
    const result = await loginThroughIdp(await relyingParty.start(), { login: 'ada@example.com', password: 'pw-ada' });
    expect(result.status).toBe(302);
    expect(outcome(result.location).claims).toMatchObject({ sub: 'u1', email: 'ada@example.com', email_verified: true, name: 'Ada', iss: idp!.issuer, aud: 'strongroom' });
  });

  it('posts the code to the callback with response_mode=form_post', async () => {
    const relyingParty = await startRp();
    const result = await loginThroughIdp(await relyingParty.start({ response_mode: 'form_post' }), { login: 'u1', password: 'pw-ada' });
    expect(result.visited.at(-1)).toBe(`${relyingParty.base}/sso/oidc-signin`);
    expect(outcome(result.location).claims).toMatchObject({ sub: 'u1' });
  });

  it('keeps the user on its login page after a wrong password', async () => {
    const relyingParty = await startRp();
    const result = await loginThroughIdp(await relyingParty.start(), { login: 'u1', password: 'wrong' });
    expect(result.status).toBe(200);
    expect(result.body).toContain('Wrong username or password.');
  });

  it('leaves a claim out when told to', async () => {
    const relyingParty = await startRp();
    idp!.misbehave({ omitClaims: ['email'] });
    const { claims } = outcome((await loginThroughIdp(await relyingParty.start(), { login: 'u1', password: 'pw-ada' })).location);
    expect(claims).toMatchObject({ sub: 'u1', name: 'Ada' });
    expect(claims).not.toHaveProperty('email');
  });

  it('signs an id_token for another audience or issuer, which a relying party refuses', async () => {
    const relyingParty = await startRp();
    idp!.misbehave({ audience: 'someone-else' });
    expect(outcome((await loginThroughIdp(await relyingParty.start(), { login: 'u1', password: 'pw-ada' })).location).error).toMatch(/"aud"/);
    idp!.misbehave({ issuer: 'https://not-the-idp.example' });
    expect(outcome((await loginThroughIdp(await relyingParty.start(), { login: 'u1', password: 'pw-ada' })).location).error).toMatch(/"iss"/);
  });

  it('serves a broken discovery document when told to', async () => {
    await startRp();
    for (const discovery of ['not-json', 'wrong-issuer', 'down'] as const) {
      idp!.misbehave({ discovery });
      await expect(client.discovery(new URL(idp!.issuer), 'strongroom', undefined, client.ClientSecretPost('secret-1'), { execute: [client.allowInsecureRequests] })).rejects.toThrow();
    }
  });
});
