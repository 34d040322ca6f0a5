/**
 * Private test PKI for talking to Strongroom over HTTPS from the official clients.
 *
 * Why this exists: the published `bw` CLI refuses plain http:// URLs, and the
 * Secrets Manager SDK (rustls/webpki) rejects a self-signed certificate that is
 * its own CA (`CaUsedAsEndEntity`). So tests need a real two-level chain: a
 * throwaway CA (trusted via NODE_EXTRA_CA_CERTS / SSL_CERT_FILE) and a separate
 * leaf for 127.0.0.1 / localhost that the server presents.
 */
import { randomBytes, webcrypto } from 'node:crypto';
import { rmSync } from 'node:fs';
import { chmod, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import * as x509 from '@peculiar/x509';

export interface TestTls {
  /** Fresh temp directory holding the three PEM files below. */
  dir: string;
  /** CA certificate: give to NODE_EXTRA_CA_CERTS (Node/CLI) or SSL_CERT_FILE (rustls SDK). */
  caPath: string;
  /** Leaf certificate the server presents (SAN IP:127.0.0.1, DNS:localhost). */
  certPath: string;
  /** Leaf private key, PKCS#8 PEM. */
  keyPath: string;
  caPem: string;
  certPem: string;
  keyPem: string;
}

// RSA-2048 + SHA-256 is accepted by both Node's OpenSSL and rustls/webpki; P-256
// would be too, but RSA is the chain shape the reference probes were run with.
const KEY_ALGORITHM: webcrypto.RsaHashedKeyGenParams = {
  name: 'RSASSA-PKCS1-v1_5',
  hash: 'SHA-256',
  publicExponent: new Uint8Array([1, 0, 1]),
  modulusLength: 2048,
};

/** The `Crypto` type @peculiar/x509 expects (lib.dom's when present). */
type X509Crypto = ReturnType<typeof x509.cryptoProvider.get>;

const HOUR_MS = 60 * 60 * 1000;
const DAY_MS = 24 * HOUR_MS;

// Memoised on globalThis (not module scope) so that one process generates keys
// once even if the test runner re-evaluates this module per test file.
const CACHE_KEY = Symbol.for('strongroom.test.tls');
interface TlsCache {
  promise?: Promise<TestTls>;
  dirs: Set<string>;
  exitHookInstalled: boolean;
}

function cache(): TlsCache {
  const g = globalThis as typeof globalThis & { [CACHE_KEY]?: TlsCache };
  let c = g[CACHE_KEY];
  if (c === undefined) {
    c = { dirs: new Set(), exitHookInstalled: false };
    g[CACHE_KEY] = c;
  }
  return c;
}

/**
 * Returns the process-wide test CA + leaf, generating them on first use
 * (RSA key generation takes a noticeable fraction of a second, so it is shared).
 */
export function createTestTls(): Promise<TestTls> {
  const c = cache();
  if (c.promise === undefined) {
    c.promise = generate(c).catch((err: unknown) => {
      // Don't memoise a failure: a later caller should get a fresh attempt.
      c.promise = undefined;
      throw err;
    });
  }
  return c.promise;
}

/**
 * Hex serial for DER INTEGER: 16 random bytes, first byte forced into 0x01..0x7f
 * so the integer is positive and minimally encoded (strict parsers such as webpki
 * reject a leading 0x00 or a negative serial).
 */
function randomSerial(): string {
  const bytes = randomBytes(16);
  bytes[0] = ((bytes[0] ?? 0) & 0x7f) | 0x01;
  return bytes.toString('hex');
}

async function generate(c: TlsCache): Promise<TestTls> {
  // Node's webcrypto is the real implementation. The cast is a no-op under the
  // project tsconfig (no lib.dom) but needed when lib.dom is loaded, whose Crypto
  // declares generateKey overloads that @types/node's does not.
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion
  x509.cryptoProvider.set(webcrypto as unknown as X509Crypto);
  const subtle = webcrypto.subtle;

  // Both key pairs in parallel: generation runs on the libuv thread pool.
  const [caKeys, leafKeys] = await Promise.all([
    subtle.generateKey(KEY_ALGORITHM, true, ['sign', 'verify']),
    subtle.generateKey(KEY_ALGORITHM, true, ['sign', 'verify']),
  ]);

  // Backdate by an hour so small clock differences between processes never
  // make the certificate "not yet valid".
  const now = Date.now();
  const notBefore = new Date(now - HOUR_MS);
  const notAfter = new Date(now + 30 * DAY_MS);

  const caCert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerial(),
    name: 'CN=Strongroom Test CA, O=Strongroom tests',
    notBefore,
    notAfter,
    signingAlgorithm: KEY_ALGORITHM,
    keys: caKeys,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey),
    ],
  });

  const leafCert = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerial(),
    // Issuer must byte-match the CA subject for chain building.
    issuer: caCert.subject,
    subject: 'CN=localhost, O=Strongroom tests',
    notBefore,
    notAfter,
    signingAlgorithm: KEY_ALGORITHM,
    publicKey: leafKeys.publicKey,
    signingKey: caKeys.privateKey,
    extensions: [
      // CA:FALSE matters: rustls refuses a CA certificate used as an end entity.
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment,
        true,
      ),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth], false),
      // Hostname checks use only the SAN (CN is ignored by modern verifiers).
      new x509.SubjectAlternativeNameExtension(
        [
          { type: 'ip', value: '127.0.0.1' },
          { type: 'dns', value: 'localhost' },
        ],
        false,
      ),
      await x509.SubjectKeyIdentifierExtension.create(leafKeys.publicKey),
      await x509.AuthorityKeyIdentifierExtension.create(caKeys.publicKey),
    ],
  });

  const pkcs8 = await subtle.exportKey('pkcs8', leafKeys.privateKey);
  const caPem = withNewline(caCert.toString('pem'));
  const certPem = withNewline(leafCert.toString('pem'));
  const keyPem = withNewline(x509.PemConverter.encode(pkcs8, 'PRIVATE KEY'));

  const dir = await mkdtemp(join(tmpdir(), 'strongroom-tls-'));
  installCleanup(c, dir);
  const caPath = join(dir, 'ca.pem');
  const certPath = join(dir, 'leaf.pem');
  const keyPath = join(dir, 'leaf-key.pem');
  await Promise.all([
    writeFile(caPath, caPem),
    writeFile(certPath, certPem),
    writeFile(keyPath, keyPem, { mode: 0o600 }),
  ]);
  // writeFile's mode is subject to umask; be explicit for the private key.
  await chmod(keyPath, 0o600);

  return { dir, caPath, certPath, keyPath, caPem, certPem, keyPem };
}

function withNewline(pem: string): string {
  // Some tools (older openssl, concatenated bundles) choke on a missing final newline.
  return pem.endsWith('\n') ? pem : `${pem}\n`;
}

/**
 * Best-effort removal of the temp dirs when the process ends; hooks installed once
 * per process. Vitest ends its fork workers with SIGTERM, which skips 'exit'
 * handlers, so SIGTERM is handled too.
 */
function installCleanup(c: TlsCache, dir: string): void {
  c.dirs.add(dir);
  if (c.exitHookInstalled) return;
  c.exitHookInstalled = true;
  const cleanup = (): void => {
    for (const d of c.dirs) {
      try {
        rmSync(d, { recursive: true, force: true });
      } catch {
        // Leaving a temp dir behind is harmless; never fail process exit over it.
      }
    }
    c.dirs.clear();
  };
  process.once('exit', cleanup);
  process.once('SIGTERM', () => {
    cleanup();
    // Having a listener disables Node's default "terminate on SIGTERM". If nobody
    // else is listening, re-raise (our once-listener is gone) so the process still
    // dies by the signal as it would have without us; otherwise the other
    // listeners own the shutdown.
    if (process.listenerCount('SIGTERM') === 0) process.kill(process.pid, 'SIGTERM');
  });
}
