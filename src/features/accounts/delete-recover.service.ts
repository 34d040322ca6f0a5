import { createHash } from 'node:crypto';
import { BadRequest } from '../../http/errors.js';
import type { AnonymousCaller } from '../../http/request-context.js';
import { normalizeEmail } from '../../platform/auth/kdf.js';
import type { SigningKeys } from '../../platform/auth/signing-keys.js';
import { findUserByEmail, findUserById, type UserRow } from '../../platform/auth/users.repository.js';
import { sendOrLog } from '../mail/delivery.js';
import type { MailLog, Mailer } from '../mail/mailer.js';
import { renderMail, type MailBrand } from '../mail/templates.js';
import type { LimitStore } from '../rate-limits/limit-store.js';
import { keyDigest } from '../rate-limits/rate-limits.js';
import { removeAccount, type AccountEnds } from './account-rules.js';

/** The `typ` of the signed token in the mailed deletion link. */
export const DELETE_RECOVER_TYP = 'strongroom-delete-recover';
/** The link deletes an account, so it works for a short while only. */
export const DELETE_RECOVER_HOURS = 1;
/** The claim binding the token to the account's security stamp. */
const STAMP_CLAIM = 'stp';
const INVALID_TOKEN = 'Invalid token.';

/**
 * A digest of the security stamp rather than the stamp itself: the token is readable by whoever
 * holds the link, and a new password or "log out everywhere" changes the stamp and so voids it.
 */
function stampMark(securityStamp: string): string {
  return createHash('sha256').update(securityStamp).digest('base64url').slice(0, 22);
}

/** The web vault's page that confirms a deletion asked for by mail (its verify-recover-delete route). */
export function deleteRecoverLink(publicUrl: string, userId: string, token: string, email: string): string {
  const params = new URLSearchParams({ userId, token, email });
  return `${publicUrl}/#/verify-recover-delete?${params.toString()}`;
}

/** Links one address may be sent in an hour, past which the form answers the same and mails nothing. */
const MAILS_PER_ADDRESS_HOUR = 3;
const HOUR = 3_600_000;

/**
 * Deleting an account without signing in (the web vault's "Delete account" on the login page,
 * for someone who forgot the master password): a link mailed to the account's address, and the
 * deletion that link confirms.
 */
export function createDeleteRecoverService(deps: AccountEnds & { keys: SigningKeys; mailer: Mailer; brand: MailBrand; limits: LimitStore }) {
  const { db, clock, brand } = deps;

  /** Whether the address may get another link now; the per-IP rule alone would let many IPs flood one inbox. */
  async function allowed(email: string): Promise<boolean> {
    const bucket = { key: `acctdel:${keyDigest(email)}`, intervalMs: HOUR / MAILS_PER_ADDRESS_HOUR, burst: MAILS_PER_ADDRESS_HOUR };
    return (await deps.limits.consume([bucket], clock.now().getTime())).allowed;
  }

  async function mailLink(user: UserRow, log: MailLog): Promise<void> {
    const token = await deps.keys.sign(
      { sub: user.id, [STAMP_CLAIM]: stampMark(user.security_stamp) },
      { typ: DELETE_RECOVER_TYP, expiresInSeconds: DELETE_RECOVER_HOURS * 3600 },
    );
    const message = renderMail(user.email, brand, {
      subject: 'Delete your account',
      paragraphs: [
        `Someone asked to delete the ${brand.serverName} account of this address, with everything in its vault.`,
        `Open this link to confirm. It works for ${DELETE_RECOVER_HOURS} hour, once.`,
      ],
      link: { label: 'Delete account', url: deleteRecoverLink(brand.publicUrl, user.id, token, user.email) },
      footnote: 'If you did not ask for this, ignore this message; nothing is deleted.',
    });
    await sendOrLog(deps.mailer, message, log, 'account deletion');
  }

  return {
    /**
     * Mails the deletion link to an account's address. An address with no account (or a
     * disabled one, which stays the operator's to delete), or past its limit of links an hour,
     * gets nothing and the same answer, so the form tells nobody who has an account. The link
     * is signed and sent after the answer, so a known address answers as fast as an unknown one;
     * a failure there is only logged.
     */
    async mailDeleteLink({ log }: AnonymousCaller, email: string): Promise<void> {
      const normalized = normalizeEmail(email);
      if (!(await allowed(normalized))) return;
      const user = await findUserByEmail(db, normalized);
      if (!user || user.disabled) return;
      void mailLink(user, log).catch((error: unknown) => log.info({ err: error, to: user.email }, 'account deletion mail failed'));
    },

    /**
     * Deletes the account the link names. An unknown account, a forged or expired token and one
     * made before the security stamp changed all get the same 400, which tells nothing more.
     */
    async deleteByMailedLink({ client }: AnonymousCaller, userId: string, token: string): Promise<void> {
      const claims = await deps.keys.verify(token, { typ: DELETE_RECOVER_TYP });
      const user = claims?.sub === userId ? await findUserById(db, userId) : undefined;
      if (!user || claims?.[STAMP_CLAIM] !== stampMark(user.security_stamp)) throw BadRequest.field('token', INVALID_TOKEN);
      await removeAccount(deps, user, { client, actingUserId: user.id }, { securityStamp: user.security_stamp, refusal: () => BadRequest.field('token', INVALID_TOKEN) });
    },
  };
}
