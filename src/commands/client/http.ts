import { readFileSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { CommandFailure, ExitCode } from '../options.js';

/** Where a command reaches a running Strongroom, and the CA it trusts there (PEM), if not the system's. */
export interface ServerEndpoint {
  /** The server's public URL, without a trailing slash; /api and /identity are under it. */
  url: string;
  ca?: string;
}

export interface HttpAnswer {
  status: number;
  /** The parsed JSON body, or the text when it is not JSON; null when empty. */
  body: unknown;
}

/** The largest answer a command reads; a profile or a large organization's member list stays far below it. */
const MAX_ANSWER_BYTES = 64 * 1024 * 1024;
const TIMEOUT_MS = 60_000;
/** Exit code 3: what the operator commands answer when what they work on is down, a database or, here, the server. */
const SERVER_UNAVAILABLE = ExitCode.DatabaseUnavailable;

/** TLS errors that mean the server's certificate is not trusted here, which --ca mends. */
const CERTIFICATE_ERRORS = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS_CERT_ALTNAME/;

/** Errors of a connection the server closed without an HTTP answer. */
const HANG_UPS = /^(ECONNRESET|EPIPE)$/;

export function endpointOf(url: string, caFile?: string): ServerEndpoint {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new CommandFailure(`--server: "${url}" is not a URL.`, ExitCode.Usage);
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw new CommandFailure(`--server: expected an http or https URL, got "${url}".`, ExitCode.Usage);
  let ca: string | undefined;
  if (caFile !== undefined) {
    try {
      ca = readFileSync(caFile, 'utf8');
    } catch (error) {
      throw new CommandFailure(`--ca: cannot read ${caFile}: ${(error as Error).message}`, ExitCode.Usage);
    }
    // Node ignores a CA option without a certificate in it, and the failure would then read as
    // if --ca were missing: say what is wrong with the file instead.
    if (!/-----BEGIN CERTIFICATE-----/.test(ca)) throw new CommandFailure(`--ca: ${caFile} holds no PEM certificate.`, ExitCode.Usage);
  }
  return { url: url.replace(/\/+$/, ''), ...(ca !== undefined ? { ca } : {}) };
}

/**
 * One HTTP(S) request to the server. A server that cannot be reached is exit code 3; a
 * certificate this machine does not trust is a configuration problem (2) that --ca mends.
 */
export function send(endpoint: ServerEndpoint, method: string, path: string, options: { headers?: Record<string, string>; body?: string } = {}): Promise<HttpAnswer> {
  const url = new URL(`${endpoint.url}${path}`);
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
  const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
  if (options.body !== undefined) headers['content-length'] = String(Buffer.byteLength(options.body));
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, timeout: TIMEOUT_MS, ...(endpoint.ca !== undefined ? { ca: endpoint.ca } : {}) }, (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_ANSWER_BYTES) {
          req.destroy(new Error(`the answer is larger than ${MAX_ANSWER_BYTES} bytes`));
          return;
        }
        chunks.push(chunk);
      });
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown = text === '' ? null : text;
        if (text !== '' && /json/i.test(res.headers['content-type'] ?? '')) {
          try {
            body = JSON.parse(text);
          } catch {
            // Not JSON after all: the text itself is the best message there is.
          }
        }
        resolve({ status: res.statusCode ?? 0, body });
      });
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error(`no answer within ${TIMEOUT_MS / 1000} s`), { code: 'ETIMEDOUT' })));
    req.on('error', (error: Error & { code?: string }) => {
      if (CERTIFICATE_ERRORS.test(error.code ?? '')) {
        reject(new CommandFailure(`The certificate of ${endpoint.url} is not trusted here (${error.message}): pass its CA with --ca <file>.`, ExitCode.Usage));
      } else {
        // An HTTPS server hangs up on a plain-HTTP request; the URL's scheme is the likely slip.
        const hint = url.protocol === 'http:' && HANG_UPS.test(error.code ?? '') ? `; is the server on ${endpoint.url.replace(/^http:/, 'https:')}?` : '';
        reject(new CommandFailure(`cannot reach ${endpoint.url}: ${error.message}${hint}`, SERVER_UNAVAILABLE));
      }
    });
    if (options.body !== undefined) req.write(options.body);
    req.end();
  });
}

/**
 * The message a server put in its error answer: the first validation message, the Bitwarden
 * envelope's message, or the identity service's error description.
 */
export function serverMessage(answer: HttpAnswer): string {
  const body = answer.body;
  if (typeof body === 'string') return body.slice(0, 500);
  if (body && typeof body === 'object') {
    const b = body as Record<string, unknown>;
    const validation = (b.validationErrors ?? (b.ErrorModel as Record<string, unknown> | undefined)?.ValidationErrors) as Record<string, unknown> | null | undefined;
    if (validation && typeof validation === 'object') {
      const first = Object.values(validation).find((v) => Array.isArray(v) && typeof v[0] === 'string') as string[] | undefined;
      if (first?.[0]) return first[0];
    }
    for (const candidate of [b.message, (b.ErrorModel as Record<string, unknown> | undefined)?.Message, b.error_description, b.error]) {
      if (typeof candidate === 'string' && candidate !== '') return candidate;
    }
  }
  return `HTTP ${answer.status}`;
}
