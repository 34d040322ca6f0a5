import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { guardedLookup, isPrivateAddress, RefusedAddress } from '../../platform/net/outbound-address.js';

/**
 * The requests the server makes to an organization's identity provider (discovery, keys, the
 * code exchange, userinfo), as a fetch for openid-client: public addresses only unless the
 * operator allows private ones (SSO_ALLOW_PRIVATE_ADDRESSES, checked at connection time by
 * platform/net), within a time limit, and with a bounded answer. An organization's owner
 * chooses the authority, so it must not become a way into the server's own network.
 */

const SETTING = 'SSO_ALLOW_PRIVATE_ADDRESSES';
/** Discovery documents and JWKS are a few kilobytes; a megabyte is far beyond any real one. */
const MAX_ANSWER_BYTES = 1024 * 1024;

export interface OidcFetchOptions {
  allowPrivateAddresses: boolean;
  timeoutMs: number;
}

export type OidcFetch = (url: string, init: { method: string; headers: Record<string, string>; body?: unknown; signal?: AbortSignal }) => Promise<Response>;

export function createOidcFetch(options: OidcFetchOptions): OidcFetch & { close(): void } {
  const lookup = guardedLookup({ allowPrivate: options.allowPrivateAddresses, setting: SETTING });
  const agents = { http: new http.Agent({ keepAlive: true, lookup }), https: new https.Agent({ keepAlive: true, lookup }) };

  const send: OidcFetch = async (url, init) => {
    const target = new URL(url);
    const host = target.hostname.replace(/^\[|\]$/g, '');
    // A literal address needs no lookup, so it is checked here.
    if (isIP(host) && !options.allowPrivateAddresses && isPrivateAddress(host)) throw new RefusedAddress(host, host, SETTING);
    const secure = target.protocol === 'https:';
    if (!secure && !options.allowPrivateAddresses) throw new Error(`${target.origin} is not https; plain http is allowed only with ${SETTING}.`);
    const body = init.body === undefined || init.body === null ? undefined : Buffer.from(String(init.body as string | URLSearchParams), 'utf8');
    return new Promise<Response>((resolve, reject) => {
      const request = (secure ? https : http).request(
        target,
        { method: init.method, headers: { ...init.headers, ...(body ? { 'content-length': String(body.length) } : {}) }, agent: secure ? agents.https : agents.http },
        (answer) => {
          const chunks: Buffer[] = [];
          let size = 0;
          answer.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > MAX_ANSWER_BYTES) request.destroy(new Error(`${target.origin} answered more than ${MAX_ANSWER_BYTES} bytes`));
            else chunks.push(chunk);
          });
          answer.on('end', () => {
            clearTimeout(timer);
            const headers = new Headers();
            for (const [name, value] of Object.entries(answer.headers)) {
              for (const one of Array.isArray(value) ? value : value === undefined ? [] : [value]) headers.append(name, one);
            }
            const status = answer.statusCode ?? 502;
            resolve(new Response(status === 204 || status === 304 ? null : Buffer.concat(chunks), { status, headers }));
          });
          answer.on('error', reject);
        },
      );
      // The whole exchange, connection to last byte, within the limit.
      const timer = setTimeout(() => request.destroy(new Error(`${target.origin} did not answer within ${options.timeoutMs} ms`)), options.timeoutMs);
      init.signal?.addEventListener('abort', () => request.destroy(new Error(`${target.origin} did not answer in time`)), { once: true });
      request.on('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      request.end(body);
    });
  };
  return Object.assign(send, {
    close() {
      agents.http.destroy();
      agents.https.destroy();
    },
  });
}
