import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { guardedLookup, isPrivateAddress, RefusedAddress, type Resolver } from '../../platform/net/outbound-address.js';

/**
 * GET requests the server makes for an anonymous caller (a site's page, its icon, its
 * change-password page): public addresses only unless the operator allows private ones, checked
 * at connection time on every hop of a redirect; a deadline for the whole exchange; a byte limit;
 * no compression (a small answer cannot inflate into a large one).
 */

export const ALLOW_PRIVATE_SETTING = 'ICONS_ALLOW_PRIVATE_ADDRESSES';
const MAX_REDIRECTS = 5;

export class FetchRefused extends Error {
  override name = 'FetchRefused';
}

export interface FetchOptions {
  /** Epoch milliseconds by which the whole exchange, redirects included, must be done. */
  deadline: number;
  maxBytes: number;
  /** Over maxBytes: keep the first maxBytes (a page read for its links) rather than fail (an image). */
  truncate?: boolean;
  accept: string;
}

export interface Fetched {
  /** Where the answer came from, after redirects. */
  url: URL;
  status: number;
  contentType: string;
  body: Buffer;
}

export interface SafeFetchOptions {
  allowPrivateAddresses: boolean;
  /** Private addresses reachable even so. */
  allowAddress?: (address: string) => boolean;
  resolve?: Resolver;
  userAgent?: string;
}

export function createSafeFetch({ allowPrivateAddresses, allowAddress = () => false, resolve, userAgent = 'Strongroom-Icons/1' }: SafeFetchOptions) {
  const lookup = guardedLookup({ allowPrivate: allowPrivateAddresses, allowAddress, setting: ALLOW_PRIVATE_SETTING, ...(resolve ? { resolve } : {}) });
  // No keep-alive: each connection is made, and its address checked, for the request at hand.
  const agents = { http: new http.Agent({ keepAlive: false, lookup }), https: new https.Agent({ keepAlive: false, lookup }) };

  function checkTarget(url: URL): void {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new FetchRefused(`${url.protocol} is not fetched`);
    if (url.username || url.password) throw new FetchRefused('URLs with credentials are not fetched');
    const host = url.hostname.replace(/^\[|\]$/g, '');
    // A literal address skips the lookup, so it is checked here.
    if (isIP(host) && !allowPrivateAddresses && isPrivateAddress(host) && !allowAddress(host)) throw new RefusedAddress(host, host, ALLOW_PRIVATE_SETTING);
  }

  function once(url: URL, options: FetchOptions): Promise<{ status: number; location: string | undefined; contentType: string; body: Buffer }> {
    checkTarget(url);
    const remaining = options.deadline - Date.now();
    if (remaining <= 0) return Promise.reject(new FetchRefused('time limit reached'));
    const secure = url.protocol === 'https:';
    return new Promise((resolvePromise, reject) => {
      const request = (secure ? https : http).get(
        url,
        { agent: secure ? agents.https : agents.http, headers: { 'user-agent': userAgent, accept: options.accept, 'accept-encoding': 'identity' } },
        (response) => {
          const status = response.statusCode ?? 0;
          const contentType = String(response.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
          const location = response.headers.location;
          if (status >= 300 && status < 400) {
            response.resume();
            resolvePromise({ status, location, contentType, body: Buffer.alloc(0) });
            return;
          }
          const declared = Number(response.headers['content-length']);
          if (!options.truncate && Number.isFinite(declared) && declared > options.maxBytes) {
            request.destroy(new FetchRefused(`answer of ${declared} bytes is over the limit of ${options.maxBytes}`));
            return;
          }
          const chunks: Buffer[] = [];
          let size = 0;
          response.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > options.maxBytes) {
              if (!options.truncate) {
                request.destroy(new FetchRefused(`answer over the limit of ${options.maxBytes} bytes`));
                return;
              }
              chunks.push(chunk.subarray(0, chunk.length - (size - options.maxBytes)));
              response.destroy();
              resolvePromise({ status, location, contentType, body: Buffer.concat(chunks) });
              return;
            }
            chunks.push(chunk);
          });
          response.on('end', () => resolvePromise({ status, location, contentType, body: Buffer.concat(chunks) }));
          response.on('error', reject);
        },
      );
      const timer = setTimeout(() => request.destroy(new FetchRefused('time limit reached')), remaining);
      request.on('close', () => clearTimeout(timer));
      request.on('error', reject);
    });
  }

  return {
    /** GET `url`, following up to five redirects, each hop checked like the first. */
    async get(url: URL, options: FetchOptions): Promise<Fetched> {
      let current = url;
      for (let hop = 0; ; hop++) {
        const answer = await once(current, options);
        if (answer.status >= 300 && answer.status < 400 && answer.location) {
          if (hop >= MAX_REDIRECTS) throw new FetchRefused(`more than ${MAX_REDIRECTS} redirects`);
          current = new URL(answer.location, current);
          continue;
        }
        return { url: current, status: answer.status, contentType: answer.contentType, body: answer.body };
      }
    },
    close() {
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}

export type SafeFetch = ReturnType<typeof createSafeFetch>;
