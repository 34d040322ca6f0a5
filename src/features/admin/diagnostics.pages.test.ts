import { afterEach, describe, expect, it } from 'vitest';
import { consoleServers } from '../../../test/support/admin-console.js';
import { testService } from '../../../test/support/services.js';
import { startSmtpSink, type SmtpSink } from '../../../test/support/smtp-sink.js';
import { TEST_ENGINE } from '../../../test/support/test-server.js';

const start = consoleServers();
let smtp: SmtpSink | undefined;
afterEach(async () => {
  await smtp?.close();
  smtp = undefined;
});

const fact = (html: string, name: string) => new RegExp(`<dt>${name}</dt><dd>([^<]*)</dd>`).exec(html)?.[1];
const service = (html: string, name: string) => new RegExp(`<td data-label="Service">${name}</td><td data-label="Status">([^<]*)</td>`).exec(html)?.[1];
const setting = (html: string, name: string) => new RegExp(`<code>${name}</code></td><td data-label="Value">([^<]*)</td>`).exec(html)?.[1];

describe('the diagnostics page', () => {
  it('shows version, Node, database, migrations, services and the configuration with secrets hidden', async () => {
    smtp = await startSmtpSink();
    const { browser } = await start({ ...smtp.env, SMTP_PASSWORD: 'smtp-pass-do-not-show', OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer otel-key-do-not-show', HIBP_API_KEY: 'hibp-key-do-not-show', SMTP_FROM: 'Ops <ops@example.com>' });
    const page = await browser.get('/admin/diagnostics');
    expect(page.statusCode).toBe(200);
    expect(fact(page.body, 'Strongroom version')).toMatch(/^\d+\.\d+\.\d+/);
    expect(fact(page.body, 'Node')).toBe(process.version);
    expect(fact(page.body, 'Database engine')).toBe(TEST_ENGINE === 'postgres' ? 'PostgreSQL' : 'SQLite');
    expect(fact(page.body, 'Database size')).toMatch(TEST_ENGINE === 'postgres' ? /^\d+\.\d MB$/ : /in memory/);
    expect(fact(page.body, 'Clock skew against the database')).toMatch(/^-?\d+ ms/);
    expect(fact(page.body, 'Web vault')).toMatch(/^not found/);
    expect(page.body).toContain('<li>0016-admin-console</li>');
    expect(service(page.body, 'Database')).toBe('Healthy');
    expect(service(page.body, 'Redis')).toBe('not configured');
    expect(service(page.body, 'RabbitMQ')).toBe('not configured');
    expect(service(page.body, 'SMTP')).toBe('Healthy');
    expect(setting(page.body, 'SMTP_PASSWORD')).toBe('(hidden)');
    expect(setting(page.body, 'ADMIN_TOKEN')).toBe('(hidden)');
    expect(setting(page.body, 'OTEL_EXPORTER_OTLP_HEADERS')).toBe('(hidden)');
    expect(setting(page.body, 'HIBP_API_KEY')).toBe('(hidden)');
    expect(setting(page.body, 'SMTP_FROM')).toBe('Ops &lt;ops@example.com&gt;');
    // Secret by declaration, not by name: these only have password, secret or token in theirs.
    expect(setting(page.body, 'PASSWORD_ITERATIONS')).toMatch(/^\d+$/);
    expect(setting(page.body, 'SECRETS_MANAGER')).toMatch(/^(true|false)$/);
    expect(setting(page.body, 'ACCESS_TOKEN_LIFETIME_SECONDS')).toMatch(/^\d+$/);
    expect(page.body).not.toContain('smtp-pass-do-not-show');
    expect(page.body).not.toContain('otel-key-do-not-show');
    expect(page.body).not.toContain('hibp-key-do-not-show');
    expect(page.body).not.toContain('$argon2id$');
    if (TEST_ENGINE === 'postgres' && /:[^@/]+@/.test(process.env.DATABASE_URL ?? '')) expect(setting(page.body, 'DATABASE_URL')).toContain(':(hidden)@');
  });

  it('reports Redis healthy when REDIS_URL reaches one', async () => {
    const redis = testService('redis');
    if (!redis) return;
    const { browser } = await start({ REDIS_URL: redis });
    expect(service((await browser.get('/admin/diagnostics')).body, 'Redis')).toBe('Healthy');
  });

  it('reports SMTP unreachable, and refuses a test mail without SMTP with a 502 naming why', async () => {
    const { browser } = await start({ SMTP_HOST: '127.0.0.1', SMTP_PORT: '9' });
    const page = await browser.get('/admin/diagnostics');
    expect(service(page.body, 'SMTP')).toBe('Unhealthy');
    const failed = await browser.post('/admin/diagnostics/test-mail', { to: 'ops@example.com' });
    expect(failed.statusCode).toBe(502);
    expect(failed.body).toContain('did not take the test mail');
    const plain = await start();
    expect(service((await plain.browser.get('/admin/diagnostics')).body, 'SMTP')).toBe('not configured');
    const none = await plain.browser.post('/admin/diagnostics/test-mail', { to: 'ops@example.com' });
    expect(none.statusCode).toBe(502);
    expect(none.body).toContain('SMTP is not configured');
  });

  it('sends a test mail through SMTP and records it', async () => {
    smtp = await startSmtpSink();
    const { server: s, browser } = await start(smtp.env);
    const res = await browser.post('/admin/diagnostics/test-mail', { to: 'ops@example.com' });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/admin/diagnostics?notice=mail-sent');
    expect((await smtp.waitFor('ops@example.com')).text).toContain('Strongroom admin console');
    expect(await s.database.db.selectFrom('admin_events').select(['action', 'detail']).where('action', '=', 'test-mail-sent').execute()).toEqual([{ action: 'test-mail-sent', detail: 'ops@example.com' }]);
    expect((await browser.post('/admin/diagnostics/test-mail', { to: 'not-an-address' })).statusCode).toBe(400);
  });
});
