import { createHash } from 'node:crypto';
import { BadRequest } from '../../http/errors.js';
import type { AnonymousCaller } from '../../http/request-context.js';
import { normalizeEmail } from '../../platform/auth/kdf.js';
import type { SigningKeys } from '../../platform/auth/signing-keys.js';
import { findUserByEmail, findUserById } from '../../platform/auth/users.repository.js';
import { sendOrLog } from '../mail/delivery.js';
import type { Mailer } from '../mail/mailer.js';
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

/**
 * Deleting an account without signing in (the web vault's "Delete account" on the login page,
 * for someone who forgot the master password): a link mailed to the account's address, and the
 * deletion that link confirms.
 */
export function createDeleteRecoverService(deps: AccountEnds & { keys: SigningKeys; mailer: Mailer; publicUrl: string }) {
  const { db } = deps;

  return {
    /**
     * Mails the deletion link to an account's address. An address with no account (or a
     * disabled one, which stays the operator's to delete) gets nothing and the same answer, so
     * the form tells nobody who has an account; a mail server's refusal is only logged.
     */
    async mailDeleteLink({ log }: AnonymousCaller, email: string): Promise<void> {
      const user = await findUserByEmail(db, normalizeEmail(email));
      if (!user || user.disabled) return;
      const token = await deps.keys.sign(
        { sub: user.id, [STAMP_CLAIM]: stampMark(user.security_stamp) },
        { typ: DELETE_RECOVER_TYP, expiresInSeconds: DELETE_RECOVER_HOURS * 3600 },
      );
      const link = deleteRecoverLink(deps.publicUrl, user.id, token, user.email);
      const text = [
        'Someone asked to delete the account of this address, with everything in its vault.',
        `Open this link to confirm (it works for ${DELETE_RECOVER_HOURS} hour, once):`,
        link,
        '',
        'If you did not ask for this, ignore this message; nothing is deleted.',
      ].join('\n');
      await sendOrLog(deps.mailer, { to: user.email, subject: 'Delete your account', text }, log, 'account deletion');
    },

    /**
     * Deletes the account the link names. An unknown account, a forged or expired token and one
     * made before the security stamp changed all get the same 400, which tells nothing more.
     */
    async deleteByMailedLink({ client }: AnonymousCaller, userId: string, token: string): Promise<void> {
      const claims = await deps.keys.verify(token, { typ: DELETE_RECOVER_TYP });
      const user = claims?.sub === userId ? await findUserById(db, userId) : undefined;
      if (!user || claims?.[STAMP_CLAIM] !== stampMark(user.security_stamp)) throw BadRequest.field('token', INVALID_TOKEN);
      await removeAccount(deps, user, { client, actingUserId: user.id });
    },
  };
}
