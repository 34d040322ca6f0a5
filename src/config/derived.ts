import { existsSync, statSync } from 'node:fs';
import { isIP } from 'node:net';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { pathProblem, processUser, remedyOf } from './file-problems.js';
import type { ServiceName, Settings } from './settings.js';

export type TlsMode = 'off' | 'files' | 'self-signed';

/**
 * Password hashes computed at once when PASSWORD_HASHING_CONCURRENCY is not set: one fewer than
 * the CPU cores, at most 2. Each hash keeps a core busy for its whole time (600,000 iterations:
 * about 0.3 s), so on a 2-core machine two at once left the event loop competing for the cores
 * and doubled the latency of other requests during a burst of logins (docs/benchmarks.md).
 */
export function defaultHashingConcurrency(cores = availableParallelism()): number {
  return Math.min(2, Math.max(1, cores - 1));
}

/** The database when DATABASE_URL is not set: a SQLite file in the data directory. */
export function defaultDatabaseUrl(dataDir: string): string {
  return `sqlite:${dataDir.replace(/\/+$/, '')}/strongroom.sqlite`;
}

/**
 * A FILES_DIR the server could not write attachments to, found at start rather than at the first
 * upload. Only when FILES_DIR is set: an unwritable DATA_DIR is reported by the database and TLS
 * checks, which name the setting to change; a files folder under it spoiled by hand (made by root
 * after a restore, say) is still met at the first upload, as a 500 the log explains.
 */
export function checkFilesDir(settings: Pick<Settings, 'filesDir' | 'fileStorage'>, problems: string[]): void {
  if (settings.fileStorage !== 'local' || settings.filesDir === undefined) return;
  const problem = pathProblem(settings.filesDir, 'write');
  if (!problem) return;
  problems.push(`FILES_DIR: cannot write attachments to ${resolve(settings.filesDir)}: ${problem}; ${remedyOf(problem, 'write')} FILES_DIR to a folder ${processUser()} may write`);
}

/** Where local attachment and Send files live: FILES_DIR, or DATA_DIR/files. */
export function filesDirOf(config: Pick<Settings, 'filesDir' | 'dataDir'>): string {
  return config.filesDir ?? join(config.dataDir, 'files');
}

/** Where the web vault is looked for and installed: WEB_VAULT_DIR, or DATA_DIR/web-vault. */
export function webVaultDirOf(settings: Pick<Settings, 'webVaultDir' | 'dataDir'>): string {
  return resolve(settings.webVaultDir ?? join(settings.dataDir, 'web-vault'));
}

/** PUBLIC_URL without its trailing slash, or the listen address and scheme. */
export function publicUrlOf(settings: Settings, tlsMode: TlsMode): string {
  const scheme = tlsMode === 'off' ? 'http' : 'https';
  const listenHost = anyAddress(settings.host) ? 'localhost' : settings.host;
  const urlHost = isIP(listenHost) === 6 ? `[${listenHost}]` : listenHost;
  return (settings.publicUrl ?? `${scheme}://${urlHost}:${settings.port}`).replace(/\/+$/, '');
}

/** IDENTITY_URL, or where the identity service is mounted under the public URL. */
export function identityUrlOf(settings: Settings, services: readonly ServiceName[], publicUrl: string): string {
  const identityAlone = services.length === 1 && services[0] === 'identity';
  return (settings.identityUrl ?? (identityAlone ? publicUrl : `${publicUrl}/identity`)).replace(/\/+$/, '');
}

/**
 * The web vault folder: the one named, or DATA_DIR/web-vault when it exists. A folder without
 * index.html at its top is reported, since an archive unpacked one level too deep is the usual
 * mistake and would otherwise serve nothing but 404s.
 */
export function resolveWebVaultDir(configured: string | undefined, dataDir: string, problems: string[]): string | null {
  const dir = webVaultDirOf({ webVaultDir: configured, dataDir });
  if (configured === undefined && !existsSync(dir)) return null;
  if (!existsSync(dir)) {
    problems.push(`WEB_VAULT_DIR: ${dir} does not exist; unpack a web vault there (docs/web-vault.md), or unset WEB_VAULT_DIR`);
    return null;
  }
  if (!statSync(dir).isDirectory()) {
    problems.push(`WEB_VAULT_DIR: ${dir} is a file, not a folder; set WEB_VAULT_DIR to the folder holding index.html`);
    return null;
  }
  const unreadable = pathProblem(dir, 'read');
  if (unreadable) {
    problems.push(`WEB_VAULT_DIR: cannot read ${dir}: ${unreadable}; ${remedyOf(unreadable, 'read')} WEB_VAULT_DIR`);
    return null;
  }
  if (!existsSync(join(dir, 'index.html'))) {
    problems.push(`WEB_VAULT_DIR: ${dir} has no index.html (unpack the web vault so that index.html is at its top)`);
    return null;
  }
  return dir;
}

/** TLS_MODE, or what the certificate settings imply; contradictions are problems. */
export function resolveTlsMode(settings: Settings, problems: string[]): TlsMode {
  const files = settings.tlsCertFile !== undefined || settings.tlsKeyFile !== undefined;
  if ((settings.tlsCertFile === undefined) !== (settings.tlsKeyFile === undefined)) {
    problems.push('TLS_CERT_FILE and TLS_KEY_FILE: set both or neither');
  }
  const mode = settings.tlsMode ?? (files ? 'files' : 'off');
  if (mode === 'off' && files) {
    problems.push('TLS_MODE: "off" contradicts TLS_CERT_FILE/TLS_KEY_FILE; unset them for plain HTTP, or use TLS_MODE=files');
  }
  if (mode === 'self-signed' && files) {
    problems.push(
      'TLS_MODE: "self-signed" makes its own certificate under DATA_DIR/tls; unset TLS_CERT_FILE and TLS_KEY_FILE, or use TLS_MODE=files to serve them',
    );
  }
  if (mode === 'files' && !files) problems.push('TLS_MODE: "files" needs TLS_CERT_FILE and TLS_KEY_FILE');
  if (settings.tlsHostnames !== undefined && mode !== 'self-signed') {
    problems.push(`TLS_HOSTNAMES: only used with TLS_MODE=self-signed (TLS_MODE is "${mode}")`);
  }
  return mode;
}

const DNS_NAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

function anyAddress(host: string): boolean {
  return host === '0.0.0.0' || host === '::';
}

/** `[::1]` -> `::1`, `Vault.Example.` -> `vault.example`. */
function normalizeHostname(name: string): string {
  return name.trim().replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '').toLowerCase();
}

/**
 * The names a self-signed server certificate covers (none in other modes): TLS_HOSTNAMES, or the
 * loopback names plus the PUBLIC_URL host and a specific listen address. Every entry is a DNS
 * name or an IP address.
 */
export function resolveTlsHostnames(settings: Settings, mode: TlsMode, publicUrl: string, problems: string[]): string[] {
  if (mode !== 'self-signed') return [];
  let publicHost: string;
  try {
    publicHost = normalizeHostname(new URL(publicUrl).hostname);
  } catch {
    problems.push(`PUBLIC_URL: not a valid URL (got ${JSON.stringify(publicUrl)})`);
    return [];
  }
  if (settings.tlsHostnames === undefined) {
    const names = ['localhost', '127.0.0.1', '::1', publicHost];
    if (!anyAddress(settings.host)) names.push(normalizeHostname(settings.host));
    return [...new Set(names.filter((name) => isIP(name) !== 0 || DNS_NAME.test(name)))];
  }
  const names = [...new Set(settings.tlsHostnames.split(',').map(normalizeHostname).filter(Boolean))];
  for (const name of names) {
    if (isIP(name) === 0 && !DNS_NAME.test(name)) {
      problems.push(`TLS_HOSTNAMES: "${name}" is neither a host name nor an IP address (wildcards are not supported)`);
    }
  }
  if (names.length === 0) problems.push('TLS_HOSTNAMES: lists no host name');
  else if (settings.publicUrl?.startsWith('https:') && !names.includes(publicHost)) {
    problems.push(`TLS_HOSTNAMES: does not include "${publicHost}", the host of PUBLIC_URL, so clients would refuse the certificate`);
  }
  return names;
}
