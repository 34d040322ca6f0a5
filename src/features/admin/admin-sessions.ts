import { createHash, randomBytes } from 'node:crypto';
import type { Clock } from '../../shared/clock.js';
import type { Db } from '../../db/database.js';

export interface AdminSession {
  id: string;
  csrfToken: string;
  expiresAt: Date;
}

const digest = (value: string) => createHash('sha256').update(value).digest('hex');

/**
 * Signed-in admin console sessions, in the database so every instance knows them. The browser
 * holds a random 32-byte cookie; the table holds its SHA-256, so a read of the table signs no
 * one in. A session ends at a fixed time (ADMIN_SESSION_MINUTES after sign-in) or at sign-out.
 */
export function createAdminSessions(deps: { db: Db; clock: Clock; minutes: number }) {
  const { db, clock } = deps;
  return {
    lifetimeSeconds: deps.minutes * 60,

    async create(ipAddress: string | null): Promise<{ cookie: string; session: AdminSession }> {
      const now = clock.now();
      const cookie = randomBytes(32).toString('base64url');
      const session = { id: digest(cookie), csrfToken: randomBytes(32).toString('base64url'), expiresAt: new Date(now.getTime() + deps.minutes * 60_000) };
      // Ended sessions are swept here, at the moment a new one starts: there are few.
      await db.deleteFrom('admin_sessions').where('expiration_date', '<=', now.toISOString()).execute();
      await db
        .insertInto('admin_sessions')
        .values({
          id: session.id,
          csrf_token: session.csrfToken,
          ip_address: ipAddress,
          creation_date: now.toISOString(),
          expiration_date: session.expiresAt.toISOString(),
        })
        .execute();
      return { cookie, session };
    },

    /** The live session a cookie names, or null (unknown, signed out or past its end). */
    async find(cookie: string | undefined): Promise<AdminSession | null> {
      if (!cookie || cookie.length > 100) return null;
      const row = await db
        .selectFrom('admin_sessions')
        .select(['id', 'csrf_token', 'expiration_date'])
        .where('id', '=', digest(cookie))
        .where('expiration_date', '>', clock.now().toISOString())
        .executeTakeFirst();
      return row ? { id: row.id, csrfToken: row.csrf_token, expiresAt: new Date(row.expiration_date) } : null;
    },

    async end(sessionId: string): Promise<void> {
      await db.deleteFrom('admin_sessions').where('id', '=', sessionId).execute();
    },
  };
}

export type AdminSessions = ReturnType<typeof createAdminSessions>;
