import { createHash, randomInt } from 'node:crypto';
import type { Clock } from '../../shared/clock.js';
import type { Db } from '../../db/database.js';
import { safeEqual } from '../../shared/constant-time.js';
import type { MailLog, Mailer } from '../mail/mailer.js';
import { sendOrLog } from '../mail/delivery.js';
import { renderMail, type MailBrand } from '../mail/templates.js';
import type { LimitStore } from '../rate-limits/limit-store.js';
import { keyDigest } from '../rate-limits/rate-limits.js';
import { deleteDeadSendCode, putSendCode, spendSendCodeTry, takeSendCode } from './sends.repository.js';

/** How long a mailed code opens its Send: the official server keeps its codes five minutes. */
export const SEND_CODE_MINUTES = 5;
/** Wrong codes a code survives; past them the recipient asks for a new one. */
export const SEND_CODE_TRIES = 5;
/** Codes one address may be mailed for one Send in SEND_CODE_MINUTES, so no one can flood it. */
export const SEND_CODE_MAILS = 3;
/**
 * Codes one address may try on one Send in a day, whatever codes were mailed meanwhile (a new
 * code restarts SEND_CODE_TRIES, not this). A Send lives at most 31 days, so an address gets at
 * most 10 + 31 × 10 = 320 guesses at a six-digit code: a chance below 1 in 3,000.
 */
export const SEND_CODE_GUESSES_PER_DAY = 10;

const guessBucket = (sendId: string, email: string) => ({
  key: `send-guess:${keyDigest(`${sendId}\n${email}`)}`,
  intervalMs: (24 * 60 * 60_000) / SEND_CODE_GUESSES_PER_DAY,
  burst: SEND_CODE_GUESSES_PER_DAY,
});

const emailDigest = (sendId: string, email: string) => createHash('sha256').update(`send-email\n${sendId}\n${email}`).digest('base64url');
const codeHash = (sendId: string, email: string, code: string) => createHash('sha256').update(`send-code\n${sendId}\n${email}\n${code}`).digest('base64url');

/**
 * The six-digit codes that open an email-verified Send for one of its addresses: stored hashed,
 * one per Send and address, for SEND_CODE_MINUTES and SEND_CODE_TRIES wrong tries, each usable
 * once. Addresses arrive trimmed and lowercased.
 */
export function createSendCodes(deps: { db: Db; clock: Clock; mailer: Mailer; brand: MailBrand; limits: LimitStore }) {
  const { db, clock } = deps;
  return {
    /**
     * Mails a new code to a listed address, replacing the one before. Past SEND_CODE_MAILS in
     * SEND_CODE_MINUTES nothing is sent. The grant runs this after its answer, so neither its
     * time nor a mail server's refusal (logged) tells the caller anything about the list.
     */
    async issue(sendId: string, email: string, log: MailLog): Promise<void> {
      const bucket = { key: `send-code:${keyDigest(`${sendId}\n${email}`)}`, intervalMs: (SEND_CODE_MINUTES * 60_000) / SEND_CODE_MAILS, burst: SEND_CODE_MAILS };
      if (!(await deps.limits.consume([bucket], clock.now().getTime())).allowed) return;
      const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
      const created = clock.now();
      await putSendCode(db, {
        send_id: sendId,
        email_digest: emailDigest(sendId, email),
        code_hash: codeHash(sendId, email, code),
        expiration_date: new Date(created.getTime() + SEND_CODE_MINUTES * 60_000).toISOString(),
        creation_date: created.toISOString(),
      });
      const message = renderMail(email, deps.brand, {
        subject: `Your Send verification code is ${code}`,
        paragraphs: [
          'Someone with the link to a Send asked to open it as this address. Enter this code where the Send asks for it.',
          `This code expires in ${SEND_CODE_MINUTES} minutes and works once.`,
        ],
        code,
        footnote: 'If you did not ask for this code, ignore this mail: the Send stays closed without it.',
      });
      void sendOrLog(deps.mailer, message, log, 'Send verification code');
    },

    /**
     * Uses a code: right, unexpired, within its tries and within the address's guesses of the
     * day. Every check spends a try first, so concurrent guesses get at most SEND_CODE_TRIES
     * checks; the right code gives its guess back. A code past its time or tries is gone.
     */
    async use(sendId: string, email: string, code: string): Promise<boolean> {
      const digest = emailDigest(sendId, email);
      const now = clock.now();
      const live = await spendSendCodeTry(db, sendId, digest, now.toISOString(), SEND_CODE_TRIES);
      if (live === undefined) {
        await deleteDeadSendCode(db, sendId, digest, now.toISOString(), SEND_CODE_TRIES);
        return false;
      }
      const guesses = [guessBucket(sendId, email)];
      if (!(await deps.limits.consume(guesses, now.getTime())).allowed) return false;
      const hash = codeHash(sendId, email, code.trim());
      if (!safeEqual(hash, live) || !(await takeSendCode(db, sendId, digest, hash))) return false;
      await deps.limits.refund(guesses, now.getTime());
      return true;
    },
  };
}

export type SendCodes = ReturnType<typeof createSendCodes>;
