import { GatewayError } from '../../http/errors.js';
import type { MailLog, MailMessage, Mailer } from './mailer.js';

/**
 * Sends a mail the caller is waiting for (a code, a verification link): when the mail server
 * refuses it, the refusal is logged and the request fails with a 502 saying so.
 * `kind` names the mail in the log (for example "two-step login code").
 */
export async function sendOrFail(mailer: Mailer, message: MailMessage, log: MailLog, kind: string, refusal = 'The mail server did not accept the message. Try again later.'): Promise<void> {
  try {
    await mailer.send(message, log);
  } catch (error) {
    log.info({ err: error, to: message.to }, `${kind} mail failed`);
    throw new GatewayError(refusal);
  }
}

/** Sends a notice no one waits for (a new-device login, two-step login turned off): a refusal is only logged. */
export async function sendOrLog(mailer: Mailer, message: MailMessage, log: MailLog, kind: string): Promise<void> {
  try {
    await mailer.send(message, log);
  } catch (error) {
    log.info({ err: error, to: message.to }, `${kind} mail failed`);
  }
}
