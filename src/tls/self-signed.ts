import nodeCrypto, { createPrivateKey, randomBytes, X509Certificate, type webcrypto } from 'node:crypto';
import { chmod, mkdir, open, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { join, resolve } from 'node:path';
import * as x509 from '@peculiar/x509';
import { fileProblem, processUser, remedyOf } from '../config/file-problems.js';
import { StartupError } from '../shared/startup-error.js';

/**
 * TLS_MODE=self-signed: a local certificate authority and a server certificate it signs, made
 * once under DATA_DIR/tls and reused on later starts.
 *
 * Two levels, not one self-signed certificate: the Secrets Manager SDK (rustls) refuses a
 * certificate that is its own CA as the server's (`CaUsedAsEndEntity`), and a separate CA lets
 * the server certificate be re-issued (new names, near expiry) without clients trusting anew.
 */

/** RSA-2048 with SHA-256: the shape the official `bw` (Node/OpenSSL) and the SDK (rustls) were run against. */
const KEY_ALGORITHM: webcrypto.RsaHashedKeyGenParams = {
  name: 'RSASSA-PKCS1-v1_5',
  hash: 'SHA-256',
  publicExponent: new Uint8Array([1, 0, 1]),
  modulusLength: 2048,
};

const DAY_MS = 24 * 60 * 60 * 1000;
export const CA_LIFETIME_DAYS = 3650;
/**
 * From notBefore to notAfter. Apple accepts at most 825 days from a user-installed CA and 398
 * from public ones (which browsers enforce too); 397 is within every platform's limit.
 */
export const SERVER_CERT_LIFETIME_DAYS = 397;
/** A server certificate closer than this to its end is re-issued at start. */
export const RENEW_BEFORE_DAYS = 30;
/** Certificates start an hour back, so a client whose clock is a little behind accepts them. */
const BACKDATE_MS = 60 * 60 * 1000;

export interface SelfSignedPaths {
  dir: string;
  caPath: string;
  caKeyPath: string;
  certPath: string;
  keyPath: string;
}

export function selfSignedPaths(dataDir: string): SelfSignedPaths {
  const dir = resolve(dataDir, 'tls');
  return {
    dir,
    caPath: join(dir, 'ca.pem'),
    caKeyPath: join(dir, 'ca-key.pem'),
    certPath: join(dir, 'server.pem'),
    keyPath: join(dir, 'server-key.pem'),
  };
}

/** Why the server certificate was (re-)issued at this start; undefined when it was reused. */
export type IssueReason = 'new' | 'names' | 'expiry' | 'new-ca' | 'unusable';

export interface SelfSignedCertificate extends SelfSignedPaths {
  /** Server certificate and its private key (PEM), for the HTTPS server. */
  cert: string;
  key: string;
  caPem: string;
  /** SHA-256 fingerprint of the CA certificate (colon-separated hex), to compare before trusting it. */
  caFingerprint: string;
  caNotAfter: Date;
  notAfter: Date;
  /** The names (DNS and IP) the server certificate covers. */
  hostnames: string[];
  createdCa: boolean;
  issued: IssueReason | undefined;
}

export interface SelfSignedOptions {
  dataDir: string;
  hostnames: readonly string[];
  now?: Date;
}

/**
 * Returns the CA and server certificate under `dataDir/tls`, making what is missing: the CA once
 * (it is what clients trust), the server certificate again when it does not cover `hostnames`,
 * ends within RENEW_BEFORE_DAYS, or was not issued by the CA. File problems are StartupErrors
 * naming DATA_DIR.
 */
export async function ensureSelfSignedCertificate(options: SelfSignedOptions): Promise<SelfSignedCertificate> {
  const now = options.now ?? new Date();
  const paths = selfSignedPaths(options.dataDir);
  try {
    await mkdir(paths.dir, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw fileError('cannot create', paths.dir, 'write', error);
  }
  return withLock(paths, () => ensureLocked(paths, options.hostnames, now));
}

/** A lock older than this was left by a process that died while making certificates (which takes about a second). */
const STALE_LOCK_MS = 60_000;
const LOCK_WAIT_MS = 30_000;

/**
 * Processes sharing a DATA_DIR (several services started together) take turns, so that they do
 * not each make a CA and overwrite one another's.
 */
async function withLock<T>(paths: SelfSignedPaths, work: () => Promise<T>): Promise<T> {
  const lockPath = join(paths.dir, '.lock');
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      await (await open(lockPath, 'wx')).close();
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw fileError('cannot write', lockPath, 'write', error);
    }
    const held = await stat(lockPath).catch(() => undefined);
    if (held && Date.now() - held.mtimeMs > STALE_LOCK_MS) {
      await rm(lockPath, { force: true });
      continue;
    }
    if (Date.now() > deadline) {
      throw new StartupError('DATA_DIR', `${lockPath} is held by another process making the TLS certificates; if none is running, delete it`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  try {
    return await work();
  } finally {
    await rm(lockPath, { force: true });
  }
}

async function ensureLocked(paths: SelfSignedPaths, hostnames: readonly string[], now: Date): Promise<SelfSignedCertificate> {
  let ca = await loadCa(paths);
  let createdCa = false;
  if (!ca || validTo(ca.cert).getTime() <= now.getTime()) {
    ca = await createCa(now);
    await writePem(paths.caKeyPath, ca.keyPem, 0o600);
    await writePem(paths.caPath, ca.certPem, 0o644);
    createdCa = true;
  }

  const existing = await loadServerCertificate(paths);
  let issued: IssueReason | undefined;
  if (!existing) issued = 'new';
  else if (createdCa) issued = 'new-ca';
  else if (!existing.cert.checkIssued(ca.cert) || !existing.cert.verify(ca.cert.publicKey) || !keyMatches(existing)) issued = 'unusable';
  else if (!covers(existing.cert, hostnames)) issued = 'names';
  else if (validTo(existing.cert).getTime() - now.getTime() < RENEW_BEFORE_DAYS * DAY_MS) issued = 'expiry';

  let server = existing;
  if (issued || !server) {
    const made = await issueServerCertificate(ca, hostnames, now);
    // The key first: a crash between the two writes leaves a mismatch, which the next start re-issues.
    await writePem(paths.keyPath, made.keyPem, 0o600);
    await writePem(paths.certPath, made.certPem, 0o644);
    server = made;
  }

  return {
    ...paths,
    cert: server.certPem,
    key: server.keyPem,
    caPem: ca.certPem,
    caFingerprint: ca.cert.fingerprint256,
    caNotAfter: validTo(ca.cert),
    notAfter: validTo(server.cert),
    hostnames: sanNames(server.cert),
    createdCa,
    issued,
  };
}

interface Pair {
  cert: X509Certificate;
  certPem: string;
  keyPem: string;
}

interface Ca extends Pair {
  signingKey: webcrypto.CryptoKey;
  /** The CA's name as encoded in its certificate: chain building compares issuer and subject bytes. */
  subject: x509.Name;
  keyId: string;
}

async function readOptional(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw fileError('cannot read', path, 'read', error);
  }
}

async function loadCa(paths: SelfSignedPaths): Promise<Ca | undefined> {
  const [certPem, keyPem] = await Promise.all([readOptional(paths.caPath), readOptional(paths.caKeyPath)]);
  if (certPem === undefined && keyPem === undefined) return undefined;
  const remedy = `delete ${paths.caPath} and ${paths.caKeyPath} to make a new certificate authority (clients must then trust the new one)`;
  if (certPem === undefined || keyPem === undefined) {
    throw new StartupError('DATA_DIR', `${certPem === undefined ? paths.caPath : paths.caKeyPath} is missing; ${remedy}`);
  }
  try {
    const cert = new X509Certificate(certPem);
    if (!cert.ca) throw new Error('not a CA certificate');
    const key = createPrivateKey(keyPem);
    if (!cert.checkPrivateKey(key)) throw new Error(`${paths.caKeyPath} is not its key`);
    const der = key.export({ type: 'pkcs8', format: 'der' });
    const signingKey = await nodeCrypto.webcrypto.subtle.importKey('pkcs8', der, KEY_ALGORITHM, false, ['sign']);
    const parsed = new x509.X509Certificate(certPem);
    const ski = parsed.getExtension(x509.SubjectKeyIdentifierExtension);
    if (!ski) throw new Error('no subject key identifier');
    return { cert, certPem, keyPem, signingKey, subject: parsed.subjectName, keyId: ski.keyId };
  } catch (error) {
    throw new StartupError('DATA_DIR', `${paths.caPath} is not a usable certificate authority (${(error as Error).message}); ${remedy}`);
  }
}

async function loadServerCertificate(paths: SelfSignedPaths): Promise<Pair | undefined> {
  const [certPem, keyPem] = await Promise.all([readOptional(paths.certPath), readOptional(paths.keyPath)]);
  if (certPem === undefined || keyPem === undefined) return undefined;
  try {
    return { cert: new X509Certificate(certPem), certPem, keyPem };
  } catch {
    // An unreadable server certificate is simply issued again.
    return undefined;
  }
}

function keyMatches(pair: Pair): boolean {
  try {
    return pair.cert.checkPrivateKey(createPrivateKey(pair.keyPem));
  } catch {
    return false;
  }
}

/** True when every name is in the certificate's subject alternative names. */
export function covers(cert: X509Certificate, hostnames: readonly string[]): boolean {
  return hostnames.every((name) => (isIP(name) ? cert.checkIP(name) !== undefined : cert.checkHost(name, { subject: 'never' }) !== undefined));
}

/** The DNS and IP entries of a certificate's subject alternative names. */
function sanNames(cert: X509Certificate): string[] {
  const parsed = new x509.X509Certificate(cert.raw);
  const san = parsed.getExtension(x509.SubjectAlternativeNameExtension);
  return (san?.names.items ?? []).filter((n) => n.type === 'dns' || n.type === 'ip').map((n) => n.value);
}

function useWebcrypto(): void {
  x509.cryptoProvider.set(nodeCrypto.webcrypto);
}

/** 16 random bytes, positive and minimally encoded (webpki refuses a negative or padded serial). */
function randomSerial(): string {
  const bytes = randomBytes(16);
  bytes[0] = ((bytes[0] ?? 0) & 0x7f) | 0x01;
  return bytes.toString('hex');
}

function pem(text: string): string {
  return text.endsWith('\n') ? text : `${text}\n`;
}

async function createCa(now: Date): Promise<Ca> {
  useWebcrypto();
  const keys = await nodeCrypto.webcrypto.subtle.generateKey(KEY_ALGORITHM, true, ['sign', 'verify']);
  // A distinct name per installation, so that several Strongroom CAs in one trust store can be told apart.
  const label = `${now.toISOString().slice(0, 10)} ${randomBytes(3).toString('hex')}`;
  const ski = await x509.SubjectKeyIdentifierExtension.create(keys.publicKey);
  const notBefore = now.getTime() - BACKDATE_MS;
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerial(),
    name: `CN=Strongroom local CA ${label}, O=Strongroom`,
    notBefore: new Date(notBefore),
    notAfter: new Date(notBefore + CA_LIFETIME_DAYS * DAY_MS),
    signingAlgorithm: KEY_ALGORITHM,
    keys,
    extensions: [
      // pathLen 0: this CA signs server certificates only, never another CA.
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      ski,
    ],
  });
  const pkcs8 = await nodeCrypto.webcrypto.subtle.exportKey('pkcs8', keys.privateKey);
  const certPem = pem(cert.toString('pem'));
  return {
    cert: new X509Certificate(certPem),
    certPem,
    keyPem: pem(x509.PemConverter.encode(pkcs8, 'PRIVATE KEY')),
    signingKey: keys.privateKey,
    subject: cert.subjectName,
    keyId: ski.keyId,
  };
}

async function issueServerCertificate(ca: Ca, hostnames: readonly string[], now: Date): Promise<Pair> {
  useWebcrypto();
  const keys = await nodeCrypto.webcrypto.subtle.generateKey(KEY_ALGORITHM, true, ['sign', 'verify']);
  const notBefore = now.getTime() - BACKDATE_MS;
  const notAfter = Math.min(notBefore + SERVER_CERT_LIFETIME_DAYS * DAY_MS, validTo(ca.cert).getTime());
  const commonName = hostnames.find((name) => isIP(name) === 0) ?? hostnames[0] ?? 'localhost';
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerial(),
    issuer: ca.subject,
    subject: `CN=${commonName}, O=Strongroom`,
    notBefore: new Date(notBefore),
    notAfter: new Date(notAfter),
    signingAlgorithm: KEY_ALGORITHM,
    publicKey: keys.publicKey,
    signingKey: ca.signingKey,
    extensions: [
      // CA:FALSE, serverAuth and the names in the SAN: what rustls, OpenSSL and Apple require.
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth], false),
      new x509.SubjectAlternativeNameExtension(
        hostnames.map((name) => (isIP(name) ? { type: 'ip' as const, value: name } : { type: 'dns' as const, value: name })),
        false,
      ),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      new x509.AuthorityKeyIdentifierExtension(ca.keyId),
    ],
  });
  const pkcs8 = await nodeCrypto.webcrypto.subtle.exportKey('pkcs8', keys.privateKey);
  const certPem = pem(cert.toString('pem'));
  return { cert: new X509Certificate(certPem), certPem, keyPem: pem(x509.PemConverter.encode(pkcs8, 'PRIVATE KEY')) };
}

/** Writes through a temporary file and a rename, so a reader never sees half a file. */
async function writePem(path: string, text: string, mode: number): Promise<void> {
  const temporary = `${path}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(temporary, text, { mode });
    // writeFile's mode is filtered by the umask; a private key must be 0600 whatever it is.
    await chmod(temporary, mode);
    await rename(temporary, path);
  } catch (error) {
    throw fileError('cannot write', path, 'write', error);
  }
}

/** A file problem under DATA_DIR/tls, with the path at fault, the permission and what to change. */
function fileError(what: string, path: string, need: 'write' | 'read', error: unknown): StartupError {
  const problem = fileProblem(path, need, error);
  return new StartupError('DATA_DIR', `${what} ${path} for TLS_MODE=self-signed: ${problem}; ${remedyOf(problem, need)} DATA_DIR to a folder ${processUser()} may write`);
}

/** `X509Certificate.validToDate` is Node 22; `validTo` is text such as "Nov 23 20:00:00 2027 GMT". */
function validTo(cert: X509Certificate): Date {
  return new Date(cert.validTo);
}
