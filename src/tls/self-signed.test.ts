import { execFile } from 'node:child_process';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import * as x509 from '@peculiar/x509';
import { afterAll, describe, expect, it } from 'vitest';
import { processUser } from '../config/file-problems.js';
import { StartupError } from '../shared/startup-error.js';
import { ensureSelfSignedCertificate, selfSignedPaths, SERVER_CERT_LIFETIME_DAYS, type SelfSignedCertificate } from './self-signed.js';

const execFileAsync = promisify(execFile);
const DAY_MS = 24 * 60 * 60 * 1000;
const NAMES = ['localhost', '127.0.0.1', '::1'];
const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sr-tls-'));
  made.push(dir);
  return dir;
}

function files(cert: SelfSignedCertificate): Record<string, string> {
  return Object.fromEntries([cert.caPath, cert.caKeyPath, cert.certPath, cert.keyPath].map((p) => [p, readFileSync(p, 'utf8')]));
}

function caught(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (error: unknown) => error,
  );
}

describe('self-signed TLS certificates', () => {
  it('makes a CA and a separate server certificate for the names, signed by it', async () => {
    const dir = dataDir();
    const result = await ensureSelfSignedCertificate({ dataDir: dir, hostnames: NAMES });
    expect(result).toMatchObject({ createdCa: true, issued: 'new', dir: join(dir, 'tls'), hostnames: NAMES });

    const ca = new X509Certificate(readFileSync(join(dir, 'tls/ca.pem')));
    const server = new X509Certificate(readFileSync(join(dir, 'tls/server.pem')));
    expect(ca.ca).toBe(true);
    expect(ca.fingerprint256).toBe(result.caFingerprint);
    expect(ca.checkIssued(ca)).toBe(true);
    const caYears = (Date.parse(ca.validTo) - Date.parse(ca.validFrom)) / (365 * DAY_MS);
    expect(caYears).toBeGreaterThan(9.9);

    expect(server.ca).toBe(false);
    expect(server.checkIssued(ca) && server.verify(ca.publicKey)).toBe(true);
    expect(server.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']);
    expect(server.subjectAltName).toBe('DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1');
    expect(Date.parse(server.validTo) - Date.parse(server.validFrom)).toBeLessThanOrEqual(SERVER_CERT_LIFETIME_DAYS * DAY_MS);
    expect(Date.parse(server.validFrom)).toBeLessThan(Date.now());
    expect(result.cert).toBe(readFileSync(join(dir, 'tls/server.pem'), 'utf8'));
    expect(result.key).toBe(readFileSync(join(dir, 'tls/server-key.pem'), 'utf8'));
    expect(server.checkPrivateKey(createPrivateKey(result.key))).toBe(true);

    // OpenSSL (what bw's Node uses) in its strict mode, for a TLS server.
    const { stdout } = await execFileAsync('openssl', ['verify', '-x509_strict', '-purpose', 'sslserver', '-CAfile', result.caPath, result.certPath]);
    expect(stdout.trim()).toBe(`${result.certPath}: OK`);
  });

  it('keeps the private keys readable by the owner only', async () => {
    const result = await ensureSelfSignedCertificate({ dataDir: dataDir(), hostnames: NAMES });
    expect(statSync(result.caKeyPath).mode & 0o777).toBe(0o600);
    expect(statSync(result.keyPath).mode & 0o777).toBe(0o600);
    expect(statSync(result.dir).mode & 0o777).toBe(0o700);
    expect(statSync(result.caPath).mode & 0o777).toBe(0o644);
  });

  it('reuses both certificates on a later start', async () => {
    const dir = dataDir();
    const first = await ensureSelfSignedCertificate({ dataDir: dir, hostnames: NAMES });
    const before = files(first);
    const second = await ensureSelfSignedCertificate({ dataDir: dir, hostnames: ['127.0.0.1', 'LOCALHOST'] });
    expect(second).toMatchObject({ createdCa: false, issued: undefined, caFingerprint: first.caFingerprint });
    expect(files(second)).toEqual(before);
    expect(second.cert).toBe(first.cert);
  });

  it('makes one CA when several processes start on the same DATA_DIR at once', async () => {
    const dir = dataDir();
    const results = await Promise.all([1, 2, 3].map(() => ensureSelfSignedCertificate({ dataDir: dir, hostnames: NAMES })));
    expect(results.filter((r) => r.createdCa)).toHaveLength(1);
    for (const result of results) {
      expect(result.caFingerprint).toBe(new X509Certificate(readFileSync(result.caPath)).fingerprint256);
      expect(result.cert).toBe(readFileSync(result.certPath, 'utf8'));
    }
    expect(existsSync(join(dir, 'tls', '.lock'))).toBe(false);
  });

  it('takes over a lock left by a process that died', async () => {
    const dir = dataDir();
    const lock = join(dir, 'tls', '.lock');
    mkdirSync(join(dir, 'tls'), { mode: 0o700 });
    writeFileSync(lock, '');
    const old = new Date(Date.now() - 120_000);
    utimesSync(lock, old, old);
    expect((await ensureSelfSignedCertificate({ dataDir: dir, hostnames: NAMES })).createdCa).toBe(true);
  });

  it('issues a new server certificate from the same CA when a name is added', async () => {
    const dir = dataDir();
    const first = await ensureSelfSignedCertificate({ dataDir: dir, hostnames: NAMES });
    const second = await ensureSelfSignedCertificate({ dataDir: dir, hostnames: [...NAMES, 'vault.home.arpa', '192.168.1.20'] });
    expect(second).toMatchObject({ createdCa: false, issued: 'names', caFingerprint: first.caFingerprint });
    expect(readFileSync(second.caPath, 'utf8')).toBe(first.caPem);
    const server = new X509Certificate(second.cert);
    expect(server.checkHost('vault.home.arpa')).toBe('vault.home.arpa');
    expect(server.checkIP('192.168.1.20')).toBe('192.168.1.20');
    expect(server.verify(new X509Certificate(first.caPem).publicKey)).toBe(true);
    // Issued by the CA read back from disk: its name must be the CA's, byte for byte.
    const issuer = Buffer.from(new x509.X509Certificate(second.cert).issuerName.toArrayBuffer());
    expect(issuer.equals(Buffer.from(new x509.X509Certificate(first.caPem).subjectName.toArrayBuffer()))).toBe(true);
  });

  it('issues a new server certificate when the old one ends within 30 days, and not before', async () => {
    const dir = dataDir();
    const first = await ensureSelfSignedCertificate({ dataDir: dir, hostnames: NAMES });
    const notAfter = first.notAfter.getTime();
    const early = await ensureSelfSignedCertificate({ dataDir: dir, hostnames: NAMES, now: new Date(notAfter - 31 * DAY_MS) });
    expect(early.issued).toBeUndefined();
    const late = await ensureSelfSignedCertificate({ dataDir: dir, hostnames: NAMES, now: new Date(notAfter - 29 * DAY_MS) });
    expect(late).toMatchObject({ issued: 'expiry', createdCa: false, caFingerprint: first.caFingerprint });
    expect(late.notAfter.getTime()).toBeGreaterThan(notAfter);
  });

  it('issues a new server certificate when its key is not the certificate\'s', async () => {
    const dir = dataDir();
    const first = await ensureSelfSignedCertificate({ dataDir: dir, hostnames: NAMES });
    writeFileSync(first.keyPath, readFileSync(first.caKeyPath));
    const second = await ensureSelfSignedCertificate({ dataDir: dir, hostnames: NAMES });
    expect(second).toMatchObject({ issued: 'unusable', caFingerprint: first.caFingerprint });
    expect(new X509Certificate(second.cert).checkPrivateKey(createPrivateKey(second.key))).toBe(true);
  });

  it('refuses a CA whose key is missing rather than replacing what clients trust', async () => {
    const dir = dataDir();
    const first = await ensureSelfSignedCertificate({ dataDir: dir, hostnames: NAMES });
    rmSync(first.caKeyPath);
    const error = await caught(ensureSelfSignedCertificate({ dataDir: dir, hostnames: NAMES }));
    expect(error).toBeInstanceOf(StartupError);
    expect((error as StartupError).setting).toBe('DATA_DIR');
    expect((error as Error).message).toContain(`${first.caKeyPath} is missing`);
    expect(readFileSync(first.caPath, 'utf8')).toBe(first.caPem);
  });

  it('fails with a StartupError naming DATA_DIR when the directory cannot be made', async () => {
    const parent = dataDir();
    const notADirectory = join(parent, 'file');
    writeFileSync(notADirectory, 'x');
    const error = await caught(ensureSelfSignedCertificate({ dataDir: join(notADirectory, 'data'), hostnames: NAMES }));
    expect(error).toBeInstanceOf(StartupError);
    expect((error as Error).message).toBe(
      `DATA_DIR: cannot create ${selfSignedPaths(join(notADirectory, 'data')).dir} for TLS_MODE=self-signed: ${notADirectory} is a file, not a folder; set DATA_DIR to a folder ${processUser()} may write`,
    );
  });
});
