import { randomInt } from 'node:crypto';
import type { Clock } from '../../shared/clock.js';
import type { Db } from '../../db/database.js';
import { BadRequest } from '../../http/errors.js';
import type { MailLog, Mailer } from '../mail/mailer.js';
import { sendOrFail } from '../mail/delivery.js';
import { renderMail, type MailBrand } from '../mail/templates.js';
import type { LimitStore } from '../rate-limits/limit-store.js';
import { keyDigest } from '../rate-limits/rate-limits.js';
import { putCode } from './two-factor.repository.js';
import { CODE_TRIES, codeHash, USER_VERIFICATION_PURPOSE, useOneTimeCode } from '../../platform/auth/one-time-codes.js';

/** What each emailed code is for; a new code of a purpose replaces the user's previous one. */
export const CodePurpose = {
  TwoFactorLogin: 'two-factor-login',
  TwoFactorSetup: 'two-factor-setup',
  EmailChange: 'email-change',
  NewDevice: 'new-device',
  /** `POST /accounts/request-otp`: user verification of an account without a master password. */
  UserVerification: USER_VERIFICATION_PURPOSE,
} as const;
export type CodePurpose = (typeof CodePurpose)[keyof typeof CodePurpose];

export const CODE_MINUTES = 10;
export { CODE_TRIES };
/** Codes one account may be sent in CODE_MINUTES, whatever the addresses asking. */
const CODE_MAILS = 5;

/**
 * Six-digit codes sent by mail (two-step login, its setup, email change, new-device
 * verification): stored hashed, one per user and purpose, for CODE_MINUTES and CODE_TRIES wrong
 * tries, each usable once.
 */
export function createMailedCodes(deps: { db: Db; clock: Clock; mailer: Mailer; brand: MailBrand; limits: LimitStore }) {
  const { db, clock } = deps;
  return {
    /** Mails a new code; 400 past CODE_MAILS codes per account in CODE_MINUTES, 502 when the mail server refuses it. */
    async send(user: { id: string }, purpose: CodePurpose, to: string, subject: string, intro: string, log: MailLog, footnote = 'If you did not ask for this code, someone may know your master password: change it.'): Promise<void> {
      const decision = await deps.limits.consume([{ key: `mailcode:${keyDigest(user.id)}`, intervalMs: (CODE_MINUTES * 60_000) / CODE_MAILS, burst: CODE_MAILS }], clock.now().getTime());
      if (!decision.allowed) throw new BadRequest('Too many codes were sent to this account. Wait a few minutes and try again.');
      const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
      const created = clock.now();
      await putCode(db, {
        user_id: user.id,
        purpose,
        code_hash: codeHash(user.id, purpose, code),
        target: to,
        expiration_date: new Date(created.getTime() + CODE_MINUTES * 60_000).toISOString(),
        creation_date: created.toISOString(),
      });
      const message = renderMail(to, deps.brand, {
        subject,
        paragraphs: [intro, `This code expires in ${CODE_MINUTES} minutes and works once.`],
        code,
        footnote,
      });
      await sendOrFail(deps.mailer, message, log, 'code');
    },

    /**
     * Uses a code: right, unexpired, sent to `target` when given, and within its tries. A wrong
     * code counts a try; a code past its time or tries is gone.
     */
    async use(userId: string, purpose: CodePurpose, code: string, target?: string): Promise<boolean> {
      return useOneTimeCode(db, clock.now(), userId, purpose, code, target);
    },
  };
}

export type MailedCodes = ReturnType<typeof createMailedCodes>;
