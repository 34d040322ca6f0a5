import { decodeProtectedHeader, importJWK, SignJWT, type JWK, type JWTPayload } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, type LoggedInUser } from '../../../test/support/accounts.js';
import { testClock } from '../../../test/support/clock.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { runSigningKeyCommand, RETIRED_KEY_KEEP_SECONDS } from '../../commands/signing-key.js';

let server: TestServer;
let user: LoggedInUser;

/** A token signed with the server's own current key, shaped as the test says. */
async function forged(build: (jwt: SignJWT, claims: JWTPayload) => SignJWT, header: Record<string, unknown> = {}): Promise<string> {
  const row = await server.database.db.selectFrom('server_keys').selectAll().where('purpose', '=', 'jwt-signing').executeTakeFirstOrThrow();
  const key = await importJWK(JSON.parse(row.private_jwk) as JWK, 'RS256');
  const claims = JSON.parse(Buffer.from(user.accessToken.split('.')[1] ?? '', 'base64url').toString()) as JWTPayload;
  const { exp: _exp, nbf: _nbf, iat: _iat, iss: _iss, ...rest } = claims;
  const jwt = build(new SignJWT(rest).setProtectedHeader({ alg: 'RS256', kid: row.kid, typ: 'at+jwt', ...header }), claims);
  return jwt.sign(key);
}

const accepted = async (on: TestServer, token: string) => (await on.request('GET', '/api/accounts/revision-date', { token })).status;

beforeAll(async () => {
  server = await startTestServer();
  user = await createUser(server);
}, 60_000);

afterAll(async () => {
  await server?.close();
});

describe('access token rules', () => {
  it('accepts a token with every rule met (the control case)', async () => {
    const iss = server.config.identityUrl;
    expect(await accepted(server, await forged((jwt) => jwt.setIssuer(iss).setIssuedAt().setExpirationTime('10m')))).toBe(200);
  });

  it('refuses a token without exp, with a future nbf, another issuer, another typ, or an unknown or missing kid', async () => {
    const iss = server.config.identityUrl;
    expect(await accepted(server, await forged((jwt) => jwt.setIssuer(iss).setIssuedAt()))).toBe(401);
    expect(await accepted(server, await forged((jwt) => jwt.setIssuer(iss).setIssuedAt().setExpirationTime('10m').setNotBefore('5m')))).toBe(401);
    expect(await accepted(server, await forged((jwt) => jwt.setIssuer('https://elsewhere.example').setExpirationTime('10m')))).toBe(401);
    expect(await accepted(server, await forged((jwt) => jwt.setIssuer(iss).setExpirationTime('10m'), { typ: 'JWT' }))).toBe(401);
    expect(await accepted(server, await forged((jwt) => jwt.setIssuer(iss).setExpirationTime('10m'), { kid: 'not-a-key-of-ours' }))).toBe(401);
    expect(await accepted(server, await forged((jwt) => jwt.setIssuer(iss).setExpirationTime('10m'), { kid: undefined }))).toBe(401);
    expect(await accepted(server, await forged((jwt) => jwt.setIssuer(iss).setExpirationTime('-1m')))).toBe(401);
  });
});

describe('remembered tokens', () => {
  it('accepts a token it verified before only while it is unexpired and its key is still known', async () => {
    const clock = testClock();
    const on = await startTestServer({ clock });
    try {
      const someone = await createUser(on);
      expect(await accepted(on, someone.accessToken)).toBe(200);
      expect(await accepted(on, someone.accessToken)).toBe(200);
      // Past its expiry the remembered token is refused, as verifying it again would.
      const { exp } = JSON.parse(Buffer.from(someone.accessToken.split('.')[1] ?? '', 'base64url').toString()) as { exp: number };
      clock.advance(exp * 1000 - clock.now().getTime() + 1000);
      expect(await accepted(on, someone.accessToken)).toBe(401);

      // A key dropped from the ring (two rotations, the first long retired) stops its tokens at once once the keys are reread.
      const other = await createUser(on);
      expect(await accepted(on, other.accessToken)).toBe(200);
      const far = new Date(clock.now().getTime() + (RETIRED_KEY_KEEP_SECONDS + 60) * 1000);
      await runSigningKeyCommand(['rotate'], { db: on.database.db, clock, issuer: on.config.identityUrl });
      await runSigningKeyCommand(['rotate'], { db: on.database.db, clock: { now: () => far }, issuer: on.config.identityUrl });
      clock.advance(6 * 60_000);
      const remaining = await on.database.db.selectFrom('server_keys').select('kid').execute();
      expect(remaining.map((r) => r.kid)).not.toContain(decodeProtectedHeader(other.accessToken).kid);
      expect(await accepted(on, other.accessToken)).toBe(401);
    } finally {
      await on.close();
    }
  });
});

describe('key rotation', () => {
  it('publishes the new key at once, signs with it within minutes everywhere, and keeps accepting tokens of the old one', async () => {
    const clock = testClock();
    const rotating = await startTestServer({ clock });
    const second = await startTestServer({ clock, databaseUrl: rotating.config.databaseUrl.startsWith('postgres') ? rotating.config.databaseUrl : undefined });
    try {
      const old = await createUser(rotating);
      const before = decodeProtectedHeader(old.accessToken).kid;
      // As the command does it, from another process: this instance learns of it by itself.
      const out = await runSigningKeyCommand(['rotate'], { db: rotating.database.db, clock, issuer: rotating.config.identityUrl });
      const kid = /New signing key ([0-9a-f]{32})/.exec(out)?.[1];
      expect(kid).toBeDefined();
      expect(kid).not.toBe(before);

      clock.advance(6 * 60_000);
      expect(await accepted(rotating, old.accessToken)).toBe(200);
      const fresh = await createUser(rotating);
      expect(decodeProtectedHeader(fresh.accessToken).kid).toBe(kid);
      expect(await accepted(rotating, fresh.accessToken)).toBe(200);
      const jwks = await rotating.request('GET', '/identity/.well-known/openid-configuration/jwks');
      expect((jwks.body.keys as { kid: string }[]).map((k) => k.kid).sort()).toEqual([before, kid].sort());

      // A second instance on the same PostgreSQL database rereads the keys when it meets the new kid.
      if (rotating.config.databaseUrl.startsWith('postgres')) expect(await accepted(second, fresh.accessToken)).toBe(200);

      const list = await runSigningKeyCommand(['list'], { db: rotating.database.db, clock, issuer: rotating.config.identityUrl });
      expect(list).toContain(`${kid}  signing since`);
      expect(list).toContain(`${before}  retired since`);
    } finally {
      await second.close();
      await rotating.close();
    }
  });

  it('drops keys retired longer ago than the longest token lifetime at the next rotation', async () => {
    const later = new Date(Date.now() + (RETIRED_KEY_KEEP_SECONDS + 60) * 1000);
    await runSigningKeyCommand(['rotate'], { db: server.database.db, clock: { now: () => later }, issuer: server.config.identityUrl });
    const rows = await server.database.db.selectFrom('server_keys').select('purpose').where((eb) => eb.or([eb('purpose', '=', 'jwt-signing'), eb('purpose', 'like', 'jwt-retired:%')])).execute();
    // The signer and the key it replaced just now; the one retired a rotation earlier is gone.
    expect(rows).toHaveLength(2);
  });

  it('answers usage for an unknown subcommand', async () => {
    await expect(runSigningKeyCommand(['spin'], { db: server.database.db, clock: { now: () => new Date() }, issuer: server.config.identityUrl })).rejects.toThrow(/Usage/);
  });
});
