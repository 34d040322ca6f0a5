import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { guardedLookup, isPrivateAddress, RefusedAddress } from './outbound-address.js';

/** What a receiver answered, or why nothing was: the callers grade it (retry, drop, done). */
export interface PostAnswer {
  /** The receiver's status, or null when none answered (network error, time-out, refused address). */
  status: number | null;
  /** `HTTP 503 Service Unavailable`, or the reason nothing was answered; null on 2xx. Never the URL. */
  error: string | null;
  /** The address was refused (private, loopback, link-local): another try cannot mend it. */
  refused: boolean;
  /** The receiver's Retry-After header, as sent. */
  retryAfter: string | null;
}

/**
 * One request at a time to an address someone else chose (an integration's webhook, a browser's
 * push service): to public addresses only unless the operator allows private ones (`setting`
 * names the setting, checked again at connection time so DNS rebinding cannot slip through), the
 * whole exchange, connection to last byte, within a time limit, the answer's body drained unread.
 */
export function createGuardedPoster({ allowPrivateAddresses, setting, timeoutMs }: { allowPrivateAddresses: boolean; setting: string; timeoutMs: number }) {
  const lookup = guardedLookup({ allowPrivate: allowPrivateAddresses, setting });
  const agents = { http: new http.Agent({ keepAlive: true, lookup }), https: new https.Agent({ keepAlive: true, lookup }) };

  return {
    send(url: URL, request: { method?: string; headers: Record<string, string | number>; body: Buffer | null; timeoutMs?: number }): Promise<PostAnswer> {
      const host = url.hostname.replace(/^\[|\]$/g, '');
      // A literal address needs no lookup, so it is checked here.
      if (isIP(host) && !allowPrivateAddresses && isPrivateAddress(host)) {
        return Promise.resolve({ status: null, error: new RefusedAddress(host, host, setting).message, refused: true, retryAfter: null });
      }
      const limitMs = Math.min(timeoutMs, request.timeoutMs ?? timeoutMs);
      const secure = url.protocol === 'https:';
      return new Promise<PostAnswer>((resolve) => {
        let settled = false;
        const finish = (answer: PostAnswer) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          resolve(answer);
        };
        const outgoing = (secure ? https : http).request(url, { method: request.method ?? 'POST', headers: request.headers, agent: secure ? agents.https : agents.http }, (response) => {
          response.resume();
          response.on('end', () => {
            const status = response.statusCode ?? 0;
            const ok = status >= 200 && status < 300;
            const after = response.headers['retry-after'];
            finish({ status, error: ok ? null : `HTTP ${status}${response.statusMessage ? ` ${response.statusMessage}` : ''}`, refused: false, retryAfter: typeof after === 'string' ? after : null });
          });
          response.on('error', (error) => finish({ status: null, error: error.message, refused: false, retryAfter: null }));
        });
        const timer = setTimeout(() => outgoing.destroy(new Error(`no answer within ${limitMs} ms`)), limitMs);
        outgoing.on('error', (error) => finish({ status: null, error: error.message, refused: error instanceof RefusedAddress, retryAfter: null }));
        outgoing.end(request.body ?? undefined);
      });
    },
    close(): void {
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}
