import type { Transporter } from 'nodemailer';
import type { Config } from '../../config/config.js';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html?: string;
}

/** The slice of a pino logger the mailer needs; services pass the request's logger. */
export interface MailLog {
  info(details: object, message: string): void;
}

export interface Mailer {
  /** True when SMTP is configured and the message was handed to the server. */
  readonly enabled: boolean;
  send(message: MailMessage, log: MailLog): Promise<void>;
  /** Connects to the SMTP server and logs in, sending nothing (the admin console's diagnostics); throws when that fails. */
  check(): Promise<void>;
}

type SmtpConfig = Pick<Config, 'smtpHost' | 'smtpPort' | 'smtpSecure' | 'smtpUsername' | 'smtpPassword' | 'smtpFrom'>;

/**
 * Outgoing mail over SMTP. Without SMTP_HOST nothing is sent: the message (with any link it
 * carries) is logged at info level instead, so a small install can still hand out invitations.
 */
export function createMailer(config: SmtpConfig): Mailer {
  const { smtpHost } = config;
  if (!smtpHost) {
    return {
      enabled: false,
      async send(message, log) {
        log.info({ mail: { to: message.to, subject: message.subject, text: message.text } }, 'SMTP_HOST is not set; mail not sent');
      },
      async check() {
        throw new Error('SMTP_HOST is not set');
      },
    };
  }
  // nodemailer is loaded with the first message or check, not at start.
  let transport: Promise<Transporter> | undefined;
  const smtp = () =>
    (transport ??= import('nodemailer').then(({ default: nodemailer }) =>
      nodemailer.createTransport({
        host: smtpHost,
        port: config.smtpPort,
        secure: config.smtpSecure,
        ...(config.smtpUsername ? { auth: { user: config.smtpUsername, pass: config.smtpPassword ?? '' } } : {}),
      }),
    ));
  return {
    enabled: true,
    async send(message) {
      await (await smtp()).sendMail({ from: config.smtpFrom, to: message.to, subject: message.subject, text: message.text, ...(message.html ? { html: message.html } : {}) });
    },
    async check() {
      await (await smtp()).verify();
    },
  };
}
