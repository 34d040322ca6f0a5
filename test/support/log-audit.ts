/**
 * The log audit: every test server's captured log (test-server.ts, checked when it closes) and
 * the log of every server program a reliability test starts is scanned for secrets. A hit fails
 * the test that owned the server, naming the kind of secret and the line.
 *
 * What counts as a secret:
 * - shapes no log line may carry: JWTs (access tokens), EncStrings (`2.iv|data|mac`, and the
 *   RSA forms `3.`–`6.` of 40 base64 characters or more), PEM private keys, Secrets Manager access
 *   token strings (`0.<guid>.<secret>:<key>`);
 * - the values this process's test client sent or was given in secret fields (`remember`, called
 *   by httpRequest for every request and answer): master password hashes and passwords, access
 *   and refresh tokens, personal and organization API keys, client secrets, keys.
 */

const SHAPES: [kind: string, pattern: RegExp][] = [
  ['JWT', /eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/],
  ['EncString', /\b[0-2]\.[A-Za-z0-9+/]{16,}={0,2}\|[A-Za-z0-9+/]{16,}={0,2}/],
  ['EncString (RSA)', /\b[3-6]\.[A-Za-z0-9+/]{40,}={0,2}/],
  ['PEM private key', /-----BEGIN [A-Z ]*PRIVATE KEY-----/],
  ['access token string', /\b0\.[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.[A-Za-z0-9]{8,}:/i],
];

/** Fields whose values are secrets, in requests (JSON or form) and answers. */
const SECRET_FIELDS = new Set(
  [
    'masterPasswordHash',
    'newMasterPasswordHash',
    'password',
    'secret',
    'token',
    'access_token',
    'refresh_token',
    'accessToken',
    'refreshToken',
    'apiKey',
    'client_secret',
    'clientSecret',
    'privateKey',
    'encryptedPrivateKey',
    'key',
    'userKey',
    'resetPasswordKey',
  ].map((f) => f.toLowerCase()),
);

/** The secret values seen by this process's test client. */
const known = new Set<string>();

/** Forgets the secrets seen so far: each test file audits its servers' logs for its own. */
export function forgetSecrets(): void {
  known.clear();
}

/** Registers the secret fields of a request or answer body (JSON value or form fields). */
export function remember(value: unknown, depth = 0): void {
  if (depth > 6 || value === null || typeof value !== 'object') return;
  for (const [field, inner] of Object.entries(value)) {
    if (typeof inner === 'string') {
      // Short values ("true", an enum) would match harmless text.
      if (SECRET_FIELDS.has(field.toLowerCase()) && inner.length >= 12) known.add(inner);
    } else remember(inner, depth + 1);
  }
}

/**
 * Lines logged on purpose with a one-time link in them: without SMTP_HOST the mailer logs each
 * mail (src/features/mail/mailer.ts) so that an operator can pass an invitation on by hand. The
 * link's token is a single-use invitation, not a login credential; the rest of such a line is
 * still checked against the known secrets.
 */
const UNSENT_MAIL = /"msg":"SMTP_HOST is not set; mail not sent"/;

export interface LogHit {
  kind: string;
  line: string;
}

/** The secrets in these log lines; empty when there are none. */
export function auditLog(lines: readonly string[]): LogHit[] {
  if (lines.length === 0) return [];
  const text = lines.join('\n');
  const shapeText = text.includes('SMTP_HOST is not set') ? lines.filter((line) => !UNSENT_MAIL.test(line)).join('\n') : text;
  const hits: LogHit[] = [];
  const lineAt = (index: number, source = text) => {
    const start = source.lastIndexOf('\n', index) + 1;
    const end = source.indexOf('\n', index);
    return source.slice(start, end === -1 ? undefined : end).slice(0, 400);
  };
  for (const [kind, pattern] of SHAPES) {
    const match = pattern.exec(shapeText);
    if (match) hits.push({ kind, line: lineAt(match.index, shapeText) });
  }
  for (const secret of known) {
    const index = text.indexOf(secret);
    if (index !== -1) hits.push({ kind: 'a secret the test client sent or received', line: lineAt(index) });
  }
  return hits;
}

/** Throws naming the hits, if any. */
export function assertCleanLog(lines: readonly string[], owner: string): void {
  const hits = auditLog(lines);
  if (hits.length === 0) return;
  throw new Error(`Log audit: ${owner} logged secrets (test/support/log-audit.ts):\n${hits.map((h) => `- ${h.kind}: ${h.line}`).join('\n')}`);
}
