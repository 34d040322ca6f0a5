import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
  /** Headers and body with quoted-printable soft breaks and escapes undone. */
  text: string;
}

export interface SmtpSink {
  port: number;
  messages: ReceivedMail[];
  /** The SMTP_* settings that point a test server at this sink. */
  env: Record<string, string>;
  /**
   * Resolves with the oldest message for `to` that no earlier call returned, waiting for one to
   * arrive if there is none: a second mail to the same address (a reinvite) is read as itself.
   */
  waitFor(to: string, timeoutMs?: number): Promise<ReceivedMail>;
  close(): Promise<void>;
}

function decodeQuotedPrintable(raw: string): string {
  return raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/** A real SMTP server on 127.0.0.1 that keeps what it receives, for tests that follow a mailed link. */
export async function startSmtpSink(): Promise<SmtpSink> {
  const messages: ReceivedMail[] = [];
  const waiters: { to: string; resolve: (mail: ReceivedMail) => void }[] = [];
  const handedOut = new Set<ReceivedMail>();
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const mail: ReceivedMail = {
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
          raw,
          text: decodeQuotedPrintable(raw),
        };
        messages.push(mail);
        const waiter = waiters.find((w) => mail.to.includes(w.to));
        if (waiter) {
          waiters.splice(waiters.indexOf(waiter), 1);
          handedOut.add(mail);
          waiter.resolve(mail);
        }
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    port,
    messages,
    env: { SMTP_HOST: '127.0.0.1', SMTP_PORT: String(port), SMTP_SECURE: 'false', SMTP_FROM: 'Strongroom <no-reply@strongroom.test>' },
    waitFor(to, timeoutMs = 5000) {
      const address = to.toLowerCase();
      const seen = messages.find((m) => m.to.includes(address) && !handedOut.has(m));
      if (seen) {
        handedOut.add(seen);
        return Promise.resolve(seen);
      }
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no mail for ${address} within ${timeoutMs} ms`)), timeoutMs);
        waiters.push({
          to: address,
          resolve: (mail) => {
            clearTimeout(timer);
            resolve(mail);
          },
        });
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The invitation token and ids from an invitation mail's accept link. */
export function invitationFrom(mail: ReceivedMail): { token: string; organizationId: string; organizationUserId: string; email: string } {
  const match = /accept-organization\?(\S+)/.exec(mail.text);
  if (!match?.[1]) throw new Error(`no invitation link in mail:\n${mail.text}`);
  const params = new URLSearchParams(match[1]);
  const get = (name: string) => {
    const value = params.get(name);
    if (!value) throw new Error(`invitation link has no ${name}`);
    return value;
  };
  return { token: get('token'), organizationId: get('organizationId'), organizationUserId: get('organizationUserId'), email: get('email') };
}
