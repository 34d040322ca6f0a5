import type { Clock } from '../../shared/clock.js';
import type { Db } from '../../db/database.js';
import { BadRequest, NotFound } from '../../http/errors.js';
import type { UserCaller } from '../../http/request-context.js';
import { USER_VERIFICATION_PURPOSE, useOneTimeCode } from '../../platform/auth/one-time-codes.js';
import { findUserById } from '../../platform/auth/users.repository.js';
import type { MailBrand } from '../mail/templates.js';
import { CodePurpose, type MailedCodes } from '../two-factor/mailed-codes.js';

/**
 * User verification by a mailed one-time code, for accounts without a master password (SSO with
 * trusted devices), as the official SendOTPAsync and VerifyOTPAsync: `request-otp` mails the
 * account a six-digit code (the mailed-code rules: CODE_MINUTES, CODE_TRIES, a few mails per
 * account), `verify-otp` checks it. The code is then the `otp` (or secret) of the request that
 * asked for verification, where secret verification spends it (platform/auth/secret-verification.ts).
 */
export function createUserVerificationCodes(deps: { db: Db; clock: Clock; codes: MailedCodes; brand: MailBrand }) {
  const { db, clock } = deps;
  return {
    async requestOtp({ userId, log }: UserCaller): Promise<void> {
      const user = await findUserById(db, userId);
      if (!user) throw new NotFound();
      if (!user.email) throw new BadRequest('No user email.');
      await deps.codes.send(
        user,
        CodePurpose.UserVerification,
        user.email,
        `Your ${deps.brand.serverName} verification code`,
        `Enter this code to confirm it is you in ${deps.brand.serverName}:`,
        log,
        'If you did not ask for this code, someone may be signed in to your account: log out of all sessions.',
      );
    },

    /**
     * Checks the code without spending it: the official clients check it here first and then send
     * it again with the request it verifies. A wrong one counts toward the code's tries.
     */
    async verifyOtp({ userId }: UserCaller, otp: string): Promise<void> {
      if (!(await useOneTimeCode(db, clock.now(), userId, USER_VERIFICATION_PURPOSE, otp, undefined, true))) throw BadRequest.field('otp', 'Invalid token.');
    },
  };
}

export type UserVerificationCodes = ReturnType<typeof createUserVerificationCodes>;
