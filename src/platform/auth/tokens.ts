import { createHash, randomBytes } from 'node:crypto';
import type { Clock } from '../../shared/clock.js';
import type { Db } from '../../db/database.js';
import type { Authenticator, Principal } from '../../http/access.js';
import { findUserById, type DeviceRow, type UserRow } from './users.repository.js';
import type { JWTPayload } from 'jose';
import type { SigningKeys } from './signing-keys.js';
import {
  deleteExpiredRefreshTokens,
  deleteRefreshToken,
  deleteRefreshTokenFamily,
  findRefreshToken,
  insertRefreshToken,
  markRefreshTokenUsed,
} from './tokens.repository.js';

/** RFC 9068 access-token type, as the official server issues and checks it. */
export const ACCESS_TOKEN_TYP = 'at+jwt';

/** Claims a feature adds to a user's tokens (organization roles come from organizations). */
export type ClaimsProvider = (db: Db, userId: string) => Promise<Record<string, unknown>>;

/**
 * Turns a verified token of a non-user client type (its `type` claim: Organization,
 * ServiceAccount) into a principal, re-checking that its credentials still stand.
 */
export type PrincipalResolver = (payload: JWTPayload) => Promise<Principal | null>;

/**
 * How long a refresh token stays good after its first use. The official identity server reuses
 * refresh tokens until they expire; Strongroom rotates them but keeps the old one for this window,
 * so the web vault's double refresh (two requests with one token, tens of milliseconds apart) and
 * a client retrying a refresh whose answer it lost both succeed. A minute covers a retry over a
 * slow mobile link while leaving a stolen token, replayed later, caught by the family rule.
 */
export const REFRESH_REUSE_GRACE_MS = 60_000;

/** Where the token service reports a revoked token family (the app's logger). */
export interface TokenLog {
  warn(details: Record<string, unknown>, message: string): void;
}

export interface IssuedTokens {
  accessToken: string;
  expiresIn: number;
  refreshToken?: string;
}

function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

function stringList(value: unknown): string[] {
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string');
  return typeof value === 'string' ? value.split(' ').filter(Boolean) : [];
}

export function createTokenService(deps: {
  db: Db;
  clock: Clock;
  keys: SigningKeys;
  accessTokenLifetimeSeconds: number;
  refreshTokenLifetimeDays: number;
  claimsProviders?: ClaimsProvider[];
  principalResolvers?: Record<string, PrincipalResolver>;
  log?: TokenLog;
}) {
  const { db, clock, keys } = deps;

  async function issueUserTokens(params: {
    user: UserRow;
    device: DeviceRow | null;
    clientId: string;
    scopes: string[];
    withRefreshToken: boolean;
    /** The chain a rotated refresh token continues; a login starts a new one. */
    familyId?: string;
  }): Promise<IssuedTokens> {
    const { user, device, clientId, scopes } = params;
    const extra: Record<string, unknown> = {};
    for (const provider of deps.claimsProviders ?? []) Object.assign(extra, await provider(db, user.id));
    const accessToken = await keys.sign(
      {
        ...extra,
        sub: user.id,
        email: user.email,
        email_verified: Boolean(user.email_verified),
        ...(user.name ? { name: user.name } : {}),
        premium: Boolean(user.premium),
        sstamp: user.security_stamp,
        ...(device ? { device: device.identifier, devicetype: device.type } : {}),
        client_id: clientId,
        scope: scopes,
        amr: ['Application'],
        idp: 'bitwarden',
      },
      { typ: ACCESS_TOKEN_TYP, expiresInSeconds: deps.accessTokenLifetimeSeconds },
    );
    if (!params.withRefreshToken) return { accessToken, expiresIn: deps.accessTokenLifetimeSeconds };

    const refreshToken = randomBytes(32).toString('base64url');
    const tokenHash = hashToken(refreshToken);
    const now = clock.now();
    await insertRefreshToken(db, {
      token_hash: tokenHash,
      family_id: params.familyId ?? tokenHash,
      used_date: null,
      user_id: user.id,
      device_id: device?.id ?? null,
      client_id: clientId,
      scope: scopes.join(' '),
      security_stamp: user.security_stamp,
      creation_date: now.toISOString(),
      expiration_date: new Date(now.getTime() + deps.refreshTokenLifetimeDays * 86_400_000).toISOString(),
    });
    return { accessToken, expiresIn: deps.accessTokenLifetimeSeconds, refreshToken };
  }

  return {
    issueUserTokens,

    /**
     * Exchanges a refresh token for new tokens of the same family. A security-stamp change since
     * it was issued, or expiry, makes it worthless. After its first use it stays good for
     * REFRESH_REUSE_GRACE_MS (racing refreshes each get a working successor); a use after that is
     * a replay of a token its holder has already rotated, so the whole family (every token from
     * that login, the legitimate client's current one too) is revoked and the event logged: no
     * official event type names it, and User_FailedLogIn would read as a wrong password.
     */
    async refresh(refreshToken: string, clientId: string): Promise<{ user: UserRow; deviceId: string | null; tokens: IssuedTokens } | null> {
      const hash = hashToken(refreshToken);
      const row = await findRefreshToken(db, hash);
      const at = clock.now();
      const now = at.toISOString();
      if (!row || row.expiration_date <= now || row.client_id !== clientId) return null;
      const user = await findUserById(db, row.user_id);
      if (!user || user.security_stamp !== row.security_stamp) {
        await deleteRefreshToken(db, hash);
        return null;
      }
      if (!(await markRefreshTokenUsed(db, hash, now))) {
        const first = (await findRefreshToken(db, hash))?.used_date;
        if (!first) return null;
        if (at.getTime() - new Date(first).getTime() > REFRESH_REUSE_GRACE_MS) {
          const revoked = await deleteRefreshTokenFamily(db, row.family_id);
          deps.log?.warn({ userId: user.id, deviceId: row.device_id, clientId, revoked }, 'refresh token reused after rotation: its family is revoked');
          return null;
        }
      }
      const device = row.device_id
        ? ((await db.selectFrom('devices').selectAll().where('id', '=', row.device_id).executeTakeFirst()) ?? null)
        : null;
      const tokens = await issueUserTokens({ user, device, clientId, scopes: row.scope.split(' '), withRefreshToken: true, familyId: row.family_id });
      await deleteExpiredRefreshTokens(db, now);
      return { user, deviceId: row.device_id, tokens };
    },

    /**
     * Bearer token -> principal. Every call reads the user's current security stamp, so a
     * stamp change (password change, "log out everywhere", deletion) ends every token at
     * once, on every instance.
     */
    authenticate: (async (token) => {
      const payload = await keys.verify(token, { typ: ACCESS_TOKEN_TYP, remember: true });
      if (!payload || typeof payload.sub !== 'string') return null;
      if (payload.type !== undefined && payload.type !== 'User') {
        const resolve = typeof payload.type === 'string' ? deps.principalResolvers?.[payload.type] : undefined;
        return resolve ? resolve(payload) : null;
      }
      const clientId = typeof payload.client_id === 'string' ? payload.client_id : '';
      const scopes = stringList(payload.scope);
      const user = await db.selectFrom('users').select(['id', 'email', 'security_stamp']).where('id', '=', payload.sub).executeTakeFirst();
      if (!user || user.security_stamp !== payload.sstamp) return null;
      const principal: Principal = {
        kind: 'user',
        userId: user.id,
        email: user.email,
        securityStamp: user.security_stamp,
        deviceIdentifier: typeof payload.device === 'string' ? payload.device : null,
        clientId,
        scopes,
        amr: stringList(payload.amr),
      };
      return principal;
    }) satisfies Authenticator,
  };
}

export type TokenService = ReturnType<typeof createTokenService>;
