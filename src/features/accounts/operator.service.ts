import { randomUUID } from 'node:crypto';
import { BadRequest, GatewayError } from '../../http/errors.js';
import { NO_CLIENT, type OperatorCaller } from '../../http/request-context.js';
import type { Mailer } from '../mail/mailer.js';
import type { SigningKeys } from '../../platform/auth/signing-keys.js';
import { deleteRefreshTokensOfUser } from '../../platform/auth/tokens.repository.js';
import { findUserByEmail, findUserById, listUsers, updateUser, type UserRow } from '../../platform/auth/users.repository.js';
import { normalizeEmail } from '../../platform/auth/kdf.js';
import { logOutPush } from '../../platform/push/push-messages.js';
import { endSessions, finishSignupLink, OPERATOR_INVITATION_CLAIM, removeAccount, userOrThrow, VERIFICATION_TYP, type AccountEnds } from './account-rules.js';

export const OPERATOR_INVITATION_DAYS = 5;
const OPERATOR_INVITATION_LIFETIME_SECONDS = OPERATOR_INVITATION_DAYS * 24 * 60 * 60;

/** The mail server did not take an operator's invitation; the link can still be passed on. */
export class InvitationNotMailed extends GatewayError {
  constructor(
    readonly link: string,
    readonly reason: unknown,
  ) {
    super(`The mail server did not take the invitation (${reason instanceof Error ? reason.message : String(reason)}).`);
  }
}

/**
 * What the server's operator does to accounts, from `strongroom users` and the admin console:
 * find and list them, invite, disable or enable, end their sessions, delete.
 */
export function createOperatorService(deps: AccountEnds & { keys: SigningKeys; mailer: Mailer; publicUrl: string }) {
  const { db, clock } = deps;

  /**
   * Disables or enables an account (an operator's decision). Disabling also rotates the
   * security stamp and drops the refresh tokens, so every session ends at once; the official
   * EventType has no event for it, so none is recorded. Answers whether anything changed. Takes
   * the id, or the row a caller has just read.
   */
  async function setDisabled(target: UserRow | string, disabled: boolean): Promise<boolean> {
    const user = typeof target === 'string' ? await userOrThrow(db, target) : target;
    const userId = user.id;
    if (Boolean(user.disabled) === disabled) return false;
    const now = clock.now().toISOString();
    await db.transaction().execute(async (tx) => {
      await updateUser(tx, userId, {
        disabled,
        ...(disabled ? { security_stamp: randomUUID() } : {}),
        revision_date: now,
        account_revision_date: now,
      });
      if (disabled) await deleteRefreshTokensOfUser(tx, userId);
    });
    // As ending the sessions: the account's open apps are told to log out now.
    if (disabled) deps.pushes.send(logOutPush(userId));
    return true;
  }

  /**
   * A verification token, as send-verification-email answers it, that also lets this email
   * register while open registration is off. Refused for an email that has an account.
   */
  async function operatorInvitationToken(email: string): Promise<string> {
    const normalized = normalizeEmail(email);
    if (await findUserByEmail(db, normalized)) throw BadRequest.field('email', `Email '${normalized}' is already taken.`);
    return deps.keys.sign(
      { sub: normalized, [OPERATOR_INVITATION_CLAIM]: true },
      { typ: VERIFICATION_TYP, expiresInSeconds: OPERATOR_INVITATION_LIFETIME_SECONDS },
    );
  }

  /**
   * An operator's invitation (`strongroom users invite`, the admin console): the finish-signup
   * link, which works for OPERATOR_INVITATION_DAYS days even while registration is closed, and
   * whether it was mailed. Without SMTP nothing is sent and the caller passes the link on; a
   * mail server that refuses it is a GatewayError carrying the link.
   */
  async function inviteByOperator({ log }: OperatorCaller, email: string): Promise<{ email: string; link: string; mailed: boolean }> {
    const normalized = normalizeEmail(email);
    const token = await operatorInvitationToken(normalized);
    const link = finishSignupLink(deps.publicUrl, token, normalized);
    if (!deps.mailer.enabled) return { email: normalized, link, mailed: false };
    try {
      await deps.mailer.send(
        {
          to: normalized,
          subject: 'Your invitation to Strongroom',
          text: ['You have been invited to create an account.', '', `Open this link to choose your master password (it works for ${OPERATOR_INVITATION_DAYS} days):`, link].join('\n'),
        },
        log,
      );
    } catch (error) {
      throw new InvitationNotMailed(link, error);
    }
    return { email: normalized, link, mailed: true };
  }

  return {
    /** The operator's deletion (`strongroom users delete`, the admin console): its event names no acting user. */
    removeAccount: (target: UserRow | string) => removeAccount(deps, target, { client: NO_CLIENT, actingUserId: null }),
    setDisabled,
    /** The operator's "deauthorize sessions" (admin console): the same as the user's own, without their password. */
    endSessions: async (userId: string) => endSessions(deps, (await userOrThrow(db, userId)).id),
    operatorInvitationToken,
    inviteByOperator,
    /** For the operator's `users` command: every account, and one by email or id. */
    listUsers: () => listUsers(db),
    findUser: async (by: { email: string } | { id: string }) =>
      'id' in by ? findUserById(db, by.id.toLowerCase()) : findUserByEmail(db, normalizeEmail(by.email)),
  };
}

export type OperatorService = ReturnType<typeof createOperatorService>;
