import { readFile } from 'node:fs/promises';
import { createSecureContext, Server as TlsServer } from 'node:tls';
import type { Config } from '../config/config.js';
import { fileProblem } from '../config/file-problems.js';
import { causeOf, StartupError } from '../shared/startup-error.js';
import type { SelfSignedCertificate, SelfSignedOptions } from './self-signed.js';

/** The certificate authority's code (and @peculiar/x509 with it) is loaded only with TLS_MODE=self-signed. */
async function ensureSelfSignedCertificate(options: SelfSignedOptions): Promise<SelfSignedCertificate> {
  const selfSigned = await import('./self-signed.js');
  return selfSigned.ensureSelfSignedCertificate(options);
}

/** What the HTTPS server is given; `selfSigned` is there in TLS_MODE=self-signed. */
export interface HttpsSetup {
  cert: string;
  key: string;
  selfSigned?: SelfSignedCertificate;
}

/**
 * The certificate and key the server presents, by TLS_MODE; undefined for plain HTTP. Problems
 * (unreadable files, a key that is not the certificate's) are StartupErrors naming the setting.
 */
export async function prepareHttps(config: Config, now?: Date): Promise<HttpsSetup | undefined> {
  switch (config.tlsMode) {
    case 'off':
      return undefined;
    case 'files': {
      const cert = await readSetting('TLS_CERT_FILE', config.tlsCertFile);
      const key = await readSetting('TLS_KEY_FILE', config.tlsKeyFile);
      try {
        createSecureContext({ cert, key });
      } catch (error) {
        throw new StartupError('TLS_CERT_FILE', `cannot serve ${config.tlsCertFile} with ${config.tlsKeyFile}: ${(error as Error).message}`);
      }
      return { cert, key };
    }
    case 'self-signed': {
      const selfSigned = await ensureSelfSignedCertificate({ dataDir: config.dataDir, hostnames: config.tlsHostnames, ...(now ? { now } : {}) });
      return { cert: selfSigned.cert, key: selfSigned.key, selfSigned };
    }
  }
}

/** How often a running server checks whether its self-signed certificate is due for re-issue. */
export const RENEWAL_CHECK_MS = 12 * 60 * 60 * 1000;

export interface RenewalLog {
  info(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

/**
 * TLS_MODE=self-signed on a server that runs for months: re-issues the server certificate when it
 * is due (the same rules as at start) and hands it to `server` for new connections. `serving` is
 * the certificate (PEM) the server presents now: one that another process sharing DATA_DIR has
 * re-issued is picked up too. Returns the certificate presented afterwards.
 */
export async function renewSelfSigned(
  server: Pick<TlsServer, 'setSecureContext'>,
  config: Config,
  log: RenewalLog,
  serving: string,
  now?: Date,
): Promise<string> {
  try {
    const next = await ensureSelfSignedCertificate({ dataDir: config.dataDir, hostnames: config.tlsHostnames, ...(now ? { now } : {}) });
    if (next.cert === serving) return serving;
    server.setSecureContext({ cert: next.cert, key: next.key });
    log.info(selfSignedLogFields(next), 'serving a new self-signed server certificate');
    return next.cert;
  } catch (error) {
    // The certificate in use stays; the next check tries again.
    log.error({ err: error }, 'could not renew the self-signed server certificate');
    return serving;
  }
}

/** Runs renewSelfSigned every RENEWAL_CHECK_MS on an HTTPS server; the returned function stops it. */
export function keepSelfSignedFresh(httpsServer: object, config: Config, log: RenewalLog, serving: string): () => void {
  // Fastify types its server as HTTP whatever the options; with `https` it is a TLS server.
  if (!(httpsServer instanceof TlsServer)) throw new Error('keepSelfSignedFresh needs an HTTPS server');
  const server = httpsServer;
  let current = serving;
  const timer = setInterval(() => {
    void renewSelfSigned(server, config, log, current).then((cert) => {
      current = cert;
    });
  }, RENEWAL_CHECK_MS);
  timer.unref();
  return () => clearInterval(timer);
}

async function readSetting(setting: string, path: string | undefined): Promise<string> {
  try {
    return await readFile(path ?? '', 'utf8');
  } catch (error) {
    throw new StartupError(setting, `cannot read ${path}: ${path ? fileProblem(path, 'read', error) : causeOf(error)}`);
  }
}

/** The fields of the start-up log line about the self-signed certificates. */
export function selfSignedLogFields(cert: SelfSignedCertificate): Record<string, unknown> {
  return {
    tls: {
      mode: 'self-signed',
      caFile: cert.caPath,
      caFingerprint: cert.caFingerprint,
      caCreated: cert.createdCa,
      certFile: cert.certPath,
      hostnames: cert.hostnames,
      notAfter: cert.notAfter.toISOString(),
      issued: cert.issued ?? 'reused',
    },
  };
}

export interface TrustInstructionsInput {
  caPath: string;
  caFingerprint?: string;
  hostnames?: readonly string[];
  notAfter?: Date;
}

/**
 * How to make each kind of client trust the local CA: printed at start in TLS_MODE=self-signed
 * and quoted in docs/tls.md. One screenful.
 */
export function trustInstructions({ caPath, caFingerprint, hostnames, notAfter }: TrustInstructionsInput): string {
  const lines = [
    'Strongroom serves HTTPS with its own certificate authority (TLS_MODE=self-signed).',
    `  CA certificate:  ${caPath}`,
    ...(caFingerprint ? [`  CA SHA-256:      ${caFingerprint}`] : []),
    ...(hostnames ? [`  server names:    ${hostnames.join(', ')}${notAfter ? ` (until ${notAfter.toISOString().slice(0, 10)})` : ''}`] : []),
    'Clients must trust this CA once (compare the fingerprint when you copy it to another machine):',
    `  bw CLI:               NODE_EXTRA_CA_CERTS=${caPath} bw login`,
    `  Secrets Manager SDK:  SSL_CERT_FILE=${caPath} (bws, and programs using the SDK)`,
    `  Debian/Ubuntu:        sudo cp ${caPath} /usr/local/share/ca-certificates/strongroom-ca.crt && sudo update-ca-certificates`,
    `  macOS:                sudo security add-trusted-cert -d -r trustRoot -k /Library/Keychains/System.keychain ${caPath}`,
    '  Windows:              certutil -addstore -f Root ca.pem (as administrator), or certmgr.msc > Trusted Root Certification Authorities > Import',
    '  Android:              Settings > Security > Encryption & credentials > Install a certificate > CA certificate',
    '  iOS/iPadOS:           open ca.pem, install it (Settings > General > VPN & Device Management), then trust it (General > About > Certificate Trust Settings)',
    '  Desktop and browser apps use the system store; Firefox has its own (Settings > Privacy & Security > Certificates > Import).',
    'A new server certificate (other names, near its end) is signed by the same CA, so trust stays.',
    'Delete the files in that directory to make a new CA (every client must then trust it again). See docs/tls.md.',
  ];
  return `${lines.join('\n')}\n`;
}
