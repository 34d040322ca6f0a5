import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { guardedLookup, isPrivateAddress, RefusedAddress, type Resolver } from '../../platform/net/outbound-address.js';

/**
 * The check an SSO configuration passes before it is turned on: the identity provider's OpenID
 * discovery document is fetched (GET, no redirects, bounded in time and size, through the
 * outbound-address guard) and must name the authority as its issuer and have the endpoints a
 * login needs. Each failure is a sentence for the admin; nothing is kept.
 */

export const SSO_ALLOW_PRIVATE_SETTING = 'SSO_ALLOW_PRIVATE_ADDRESSES';
const TIMEOUT_MS = 5_000;
/** Discovery documents are a few KB (Keycloak's, among the largest, is under 10 KB). */
const MAX_BYTES = 256 * 1024;

export class DiscoveryProblem extends Error {
  override name = 'DiscoveryProblem';
}

/** Where the operator learns the internal address a refused provider resolved to. */
export interface SsoOperatorLog {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface DiscoveryOptions {
  allowPrivateAddresses: boolean;
  log?: SsoOperatorLog;
  timeoutMs?: number;
  resolve?: Resolver;
}

/** Where the document is: the metadata address if given, else the authority's well-known path. */
export function discoveryUrl(authority: string, metadataAddress: string | null | undefined): string {
  return metadataAddress || `${authority.replace(/\/+$/, '')}/.well-known/openid-configuration`;
}

/**
 * The login (openid-client) compares the document's issuer with the authority as parsed URLs,
 * exactly: `https://idp/realm/` is not `https://idp/realm`. The save compares the same way, so a
 * configuration that saves also logs in.
 */
function sameIssuer(issuer: string, authority: string): boolean {
  try {
    return new URL(issuer).href === new URL(authority).href;
  } catch {
    return false;
  }
}

export function createDiscoveryCheck({ allowPrivateAddresses, timeoutMs = TIMEOUT_MS, resolve, log }: DiscoveryOptions) {
  const lookup = guardedLookup({ allowPrivate: allowPrivateAddresses, setting: SSO_ALLOW_PRIVATE_SETTING, ...(resolve ? { resolve } : {}) });
  // No keep-alive: the check is rare, and each connection's address is checked for it.
  const agents = { http: new http.Agent({ keepAlive: false, lookup }), https: new https.Agent({ keepAlive: false, lookup }) };

  function fetchText(url: URL): Promise<string> {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    // A literal address skips the lookup, so it is checked here.
    if (isIP(host) && !allowPrivateAddresses && isPrivateAddress(host)) return Promise.reject(new RefusedAddress(host, host, SSO_ALLOW_PRIVATE_SETTING));
    const secure = url.protocol === 'https:';
    return new Promise((resolvePromise, reject) => {
      const request = (secure ? https : http).get(
        url,
        { agent: secure ? agents.https : agents.http, headers: { accept: 'application/json', 'accept-encoding': 'identity', 'user-agent': 'Strongroom-SSO/1' } },
        (response) => {
          const status = response.statusCode ?? 0;
          if (status !== 200) {
            response.resume();
            request.destroy(new DiscoveryProblem(`it answered HTTP ${status}${status >= 300 && status < 400 ? ' (a redirect; give the final address)' : ''}`));
            return;
          }
          const chunks: Buffer[] = [];
          let size = 0;
          response.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > MAX_BYTES) request.destroy(new DiscoveryProblem(`its answer is over ${MAX_BYTES / 1024} KB`));
            else chunks.push(chunk);
          });
          response.on('end', () => resolvePromise(Buffer.concat(chunks).toString('utf8')));
          response.on('error', reject);
        },
      );
      const timer = setTimeout(() => request.destroy(new DiscoveryProblem(`it did not answer within ${timeoutMs / 1000} s`)), timeoutMs);
      request.on('close', () => clearTimeout(timer));
      request.on('error', reject);
    });
  }

  return {
    /** Resolves when the provider's discovery document fits `authority`; otherwise throws a DiscoveryProblem naming what is wrong. */
    async check(authority: string, metadataAddress: string | null | undefined): Promise<void> {
      const where = discoveryUrl(authority, metadataAddress);
      let text: string;
      try {
        text = await fetchText(new URL(where));
      } catch (error) {
        if (error instanceof RefusedAddress) log?.warn({ reason: error.message, url: where }, 'an SSO configuration names a provider on a private address');
        const reason =
          error instanceof RefusedAddress ? error.publicMessage : error instanceof DiscoveryProblem ? error.message : `it could not be reached (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`;
        throw new DiscoveryProblem(`The identity provider's discovery document at ${where} could not be read: ${reason}.`);
      }
      let document: unknown;
      try {
        document = JSON.parse(text);
      } catch {
        throw new DiscoveryProblem(`The answer at ${where} is not JSON: is the authority the identity provider's issuer URL?`);
      }
      if (typeof document !== 'object' || document === null || Array.isArray(document)) throw new DiscoveryProblem(`The answer at ${where} is not an OpenID discovery document.`);
      const doc = document as Record<string, unknown>;
      if (typeof doc.issuer !== 'string') throw new DiscoveryProblem(`The discovery document at ${where} names no issuer.`);
      // With a metadata address the login takes the document's issuer as it is (as openid-client does).
      if (!metadataAddress && !sameIssuer(doc.issuer, authority)) {
        throw new DiscoveryProblem(`The discovery document names the issuer ${JSON.stringify(doc.issuer).slice(0, 300)}, not the authority ${authority}: use exactly the issuer as the authority (a trailing slash counts).`);
      }
      const missing = ['authorization_endpoint', 'token_endpoint', 'jwks_uri'].filter((name) => {
        const value = doc[name];
        return typeof value !== 'string' || !URL.canParse(value);
      });
      if (missing.length > 0) throw new DiscoveryProblem(`The discovery document at ${where} lacks ${missing.join(', ')}: a login needs them.`);
    },
    close() {
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}

export type DiscoveryCheck = ReturnType<typeof createDiscoveryCheck>;
