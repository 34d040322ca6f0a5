import { afterEach, describe, expect, it } from 'vitest';
import { startSmtpSink, type SmtpSink } from '../../../test/support/smtp-sink.js';
import { testConfig } from '../../../test/support/test-server.js';
import { createMailer } from './mailer.js';

let sink: SmtpSink | undefined;
afterEach(async () => {
  await sink?.close();
  sink = undefined;
});

describe('mailer', () => {
  it('delivers over SMTP from the configured sender', async () => {
    sink = await startSmtpSink();
    const mailer = createMailer(testConfig(sink.env));
    expect(mailer.enabled).toBe(true);
    await mailer.send({ to: 'someone@example.com', subject: 'Hello', text: 'A line that is long enough to be wrapped: https://example.com/#/x?token=abc.def-ghi_jkl&email=someone%40example.com' }, { info: () => undefined });
    const mail = await sink.waitFor('someone@example.com');
    expect(mail.from).toBe('no-reply@strongroom.test');
    expect(mail.text).toContain('Subject: Hello');
    expect(mail.text).toContain('https://example.com/#/x?token=abc.def-ghi_jkl&email=someone%40example.com');
  });

  it('logs the message at info level instead when SMTP_HOST is unset', async () => {
    const mailer = createMailer(testConfig());
    expect(mailer.enabled).toBe(false);
    const logged: [object, string][] = [];
    await mailer.send({ to: 'someone@example.com', subject: 'Hello', text: 'link: https://example.com/x' }, { info: (details, message) => logged.push([details, message]) });
    expect(logged).toEqual([[{ mail: { to: 'someone@example.com', subject: 'Hello', text: 'link: https://example.com/x' } }, 'SMTP_HOST is not set; mail not sent']]);
  });
});
