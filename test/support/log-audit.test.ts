import { describe, expect, it } from 'vitest';
import { auditLog, remember } from './log-audit.js';

const line = (fields: Record<string, unknown>) => JSON.stringify({ level: 30, time: 1, ...fields });
const JWT = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlLW9mLXRoZS10b2tlbg';
const ENC = '2.AAAAAAAAAAAAAAAAAAAAAA==|AAAAAAAAAAAAAAAAAAAAAA==|AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=';

describe('the log audit', () => {
  it('passes ordinary request lines', () => {
    expect(auditLog([line({ req: { method: 'GET', url: '/api/sync?access_token=[REDACTED]' }, msg: 'incoming request' }), line({ res: { statusCode: 200 }, responseTime: 2.5 })])).toEqual([]);
  });

  it.each([
    ['JWT', line({ msg: `token ${JWT}` })],
    ['EncString', line({ body: { name: ENC } })],
    ['EncString (RSA)', line({ key: `4.${'A'.repeat(340)}==` })],
    ['PEM private key', line({ msg: '-----BEGIN PRIVATE KEY-----\nMIIE' })],
    ['access token string', line({ msg: '0.0a1b2c3d-0000-4000-8000-000000000000.abcdefghijklmnop:AAAA' })],
  ])('finds a %s', (kind, text) => {
    expect(auditLog([text]).map((h) => h.kind)).toEqual([kind]);
  });

  it('finds a secret the test client sent or received, whatever its shape', () => {
    remember({ masterPasswordHash: 'c2VjcmV0LWhhc2gtb2YtdGhlLXVzZXI=', nested: [{ apiKey: 'abcdefghijklmnopqrstuvwxyz1234' }] });
    expect(auditLog([line({ msg: 'login for c2VjcmV0LWhhc2gtb2YtdGhlLXVzZXI=' })])).toHaveLength(1);
    expect(auditLog([line({ msg: 'org key abcdefghijklmnopqrstuvwxyz1234' })])).toHaveLength(1);
  });

  it('lets the unsent mail line carry its invitation link', () => {
    const mail = line({ mail: { text: `accept-organization?token=${JWT}` }, msg: 'SMTP_HOST is not set; mail not sent' });
    expect(auditLog([mail])).toEqual([]);
    expect(auditLog([mail, line({ msg: JWT })])).toHaveLength(1);
  });
});
