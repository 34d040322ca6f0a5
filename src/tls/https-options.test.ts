import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { isIP, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkServerIdentity, connect, type PeerCertificate } from 'node:tls';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../config/config.js';
import { StartupError } from '../shared/startup-error.js';
import { prepareHttps, renewSelfSigned, trustInstructions, type HttpsSetup } from './https-options.js';

const made: string[] = [];
const servers: Server[] = [];
afterAll(() => {
  for (const server of servers) server.close();
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sr-https-'));
  made.push(dir);
  return dir;
}

async function selfSigned(dir = dataDir()): Promise<HttpsSetup> {
  const https = await prepareHttps(loadConfig({ TLS_MODE: 'self-signed', DATA_DIR: dir }));
  if (!https?.selfSigned) throw new Error('expected a self-signed setup');
  return https;
}

async function serve(https: HttpsSetup): Promise<number> {
  const server = createServer({ cert: https.cert, key: https.key }, (_request, response) => response.end('ok'));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** Connects to 127.0.0.1 as `host` and reports whether the chain verified and the peer certificate. */
function handshake(port: number, host: string, ca?: string): Promise<{ authorized: boolean; error?: string; cert: PeerCertificate }> {
  return new Promise((resolve, reject) => {
    const socket = connect({
      host: '127.0.0.1',
      port,
      ...(ca ? { ca } : {}),
      rejectUnauthorized: false,
      // SNI carries DNS names only; the identity is checked below for both kinds of name.
      ...(isIP(host) ? {} : { servername: host }),
    });
    socket.once('secureConnect', () => {
      const cert = socket.getPeerCertificate();
      const identity = checkServerIdentity(host, cert);
      resolve({
        authorized: socket.authorized && identity === undefined,
        ...(socket.authorizationError ? { error: String(socket.authorizationError) } : {}),
        ...(identity ? { error: identity.message } : {}),
        cert,
      });
      socket.end();
    });
    socket.once('error', reject);
  });
}

describe('HTTPS options by TLS_MODE', () => {
  it('serves plain HTTP when TLS is off', async () => {
    expect(await prepareHttps(loadConfig({}))).toBeUndefined();
  });

  it('presents a chain that verifies against the generated CA alone, for localhost and 127.0.0.1', async () => {
    const https = await selfSigned();
    const port = await serve(https);
    const ca = readFileSync(https.selfSigned!.caPath, 'utf8');
    for (const host of ['localhost', '127.0.0.1']) {
      const result = await handshake(port, host, ca);
      expect(result, host).toMatchObject({ authorized: true });
      expect(result.error).toBeUndefined();
    }
    const otherName = await handshake(port, 'vault.example.com', ca);
    expect(otherName.authorized).toBe(false);
    expect(otherName.error).toContain("Host: vault.example.com. is not in the cert's altnames");
    const untrusted = await handshake(port, 'localhost');
    expect(untrusted.authorized).toBe(false);
    expect(untrusted.error).toBe('UNABLE_TO_VERIFY_LEAF_SIGNATURE');
  });

  it('serves certificate files and names the setting when they cannot be used', async () => {
    const generated = await selfSigned();
    const files = { TLS_CERT_FILE: generated.selfSigned!.certPath, TLS_KEY_FILE: generated.selfSigned!.keyPath };
    const https = await prepareHttps(loadConfig(files));
    expect(https).toEqual({ cert: generated.cert, key: generated.key });

    const missing = await prepareHttps(loadConfig({ ...files, TLS_KEY_FILE: '/nonexistent/key.pem' })).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(StartupError);
    expect((missing as Error).message).toMatch(/^TLS_KEY_FILE: cannot read \/nonexistent\/key\.pem: no such file or directory$/);

    const wrongKey = await prepareHttps(loadConfig({ ...files, TLS_KEY_FILE: generated.selfSigned!.caKeyPath })).catch((e: unknown) => e);
    expect(wrongKey).toBeInstanceOf(StartupError);
    expect((wrongKey as Error).message).toMatch(/^TLS_CERT_FILE: cannot serve .*server\.pem with .*ca-key\.pem: .*key values mismatch/);
  });

  it('fails with one clear line when DATA_DIR cannot hold the certificates', async () => {
    const file = join(dataDir(), 'not-a-dir');
    writeFileSync(file, '');
    const error = await prepareHttps(loadConfig({ TLS_MODE: 'self-signed', DATA_DIR: file })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StartupError);
    expect((error as Error).message).toMatch(/^DATA_DIR: cannot create .*not-a-dir\/tls for TLS_MODE=self-signed: .*not-a-dir is a file, not a folder; set DATA_DIR to a folder .* may write$/);
  });
});

describe('renewal while running', () => {
  function recordingLog() {
    const entries: { level: string; message: string }[] = [];
    return {
      entries,
      info: (_fields: Record<string, unknown>, message: string) => entries.push({ level: 'info', message }),
      error: (_fields: Record<string, unknown>, message: string) => entries.push({ level: 'error', message }),
    };
  }

  it('hands a re-issued certificate to the running server when the old one is due', async () => {
    const dir = dataDir();
    const config = loadConfig({ TLS_MODE: 'self-signed', DATA_DIR: dir });
    const https = await selfSigned(dir);
    const port = await serve(https);
    const server = servers.at(-1)!;
    const ca = https.selfSigned!.caPem;
    const before = await handshake(port, 'localhost', ca);
    const log = recordingLog();

    expect(await renewSelfSigned(server, config, log, https.cert)).toBe(https.cert);
    expect((await handshake(port, 'localhost', ca)).cert.serialNumber).toBe(before.cert.serialNumber);

    // Due because of a new name (the same rule as at start; expiry is tested in self-signed.test.ts).
    const renamed = loadConfig({ TLS_MODE: 'self-signed', DATA_DIR: dir, TLS_HOSTNAMES: 'localhost,renewed.test' });
    expect((await handshake(port, 'renewed.test', ca)).authorized).toBe(false);
    const renewed = await renewSelfSigned(server, renamed, log, https.cert);
    expect(renewed).toBe(readFileSync(join(dir, 'tls', 'server.pem'), 'utf8'));
    const after = await handshake(port, 'renewed.test', ca);
    expect(after.authorized).toBe(true);
    expect(after.cert.serialNumber).not.toBe(before.cert.serialNumber);
    expect(log.entries).toEqual([{ level: 'info', message: 'serving a new self-signed server certificate' }]);
  });

  it('picks up a certificate another process sharing DATA_DIR has re-issued', async () => {
    const dir = dataDir();
    const config = loadConfig({ TLS_MODE: 'self-signed', DATA_DIR: dir });
    const https = await selfSigned(dir);
    const port = await serve(https);
    const server = servers.at(-1)!;
    // The other process: a new name, so it re-issues; this one's settings are already covered.
    await prepareHttps(loadConfig({ TLS_MODE: 'self-signed', DATA_DIR: dir, TLS_HOSTNAMES: 'localhost,127.0.0.1,::1,other.test' }));
    const log = recordingLog();
    const renewed = await renewSelfSigned(server, config, log, https.cert);
    expect(renewed).not.toBe(https.cert);
    expect((await handshake(port, 'other.test', https.selfSigned!.caPem)).authorized).toBe(true);
  });

  it('keeps the certificate in use and logs an error when it cannot renew', async () => {
    const file = join(dataDir(), 'gone');
    writeFileSync(file, '');
    const log = recordingLog();
    const setSecureContext = (): void => {
      throw new Error('must not be called');
    };
    expect(await renewSelfSigned({ setSecureContext }, loadConfig({ TLS_MODE: 'self-signed', DATA_DIR: file }), log, 'the served PEM')).toBe('the served PEM');
    expect(log.entries).toEqual([{ level: 'error', message: 'could not renew the self-signed server certificate' }]);
  });
});

describe('trust instructions', () => {
  const text = trustInstructions({ caPath: '/srv/strongroom/data/tls/ca.pem', caFingerprint: 'AB:CD', hostnames: ['localhost'], notAfter: new Date('2027-12-25T00:00:00Z') });

  it('tells each kind of client how to trust the CA file', () => {
    expect(text).toContain('NODE_EXTRA_CA_CERTS=/srv/strongroom/data/tls/ca.pem bw login');
    expect(text).toContain('SSL_CERT_FILE=/srv/strongroom/data/tls/ca.pem');
    expect(text).toContain('cp /srv/strongroom/data/tls/ca.pem /usr/local/share/ca-certificates/strongroom-ca.crt && sudo update-ca-certificates');
    expect(text).toContain('System.keychain /srv/strongroom/data/tls/ca.pem');
    for (const words of ['Windows', 'certmgr', 'Android', 'iOS', 'AB:CD', 'localhost (until 2027-12-25)']) expect(text).toContain(words);
  });

  it('is the text docs/tls.md shows', () => {
    const doc = readFileSync(new URL('../../docs/tls.md', import.meta.url), 'utf8');
    expect(doc).toContain(trustInstructions({ caPath: '/var/lib/strongroom/tls/ca.pem' }));
  });

  it('fits one screen', () => {
    const lines = text.trimEnd().split('\n');
    expect(lines.length).toBeLessThanOrEqual(24);
  });
});
