import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { guardedLookup, isPrivateAddress, RefusedAddress } from '../../platform/net/outbound-address.js';
import { ALLOW_PRIVATE_SETTING } from './web-push.schemas.js';

/**
 * POSTs one encrypted Web Push message (built by the web-push library's generateRequestDetails)
 * to a push service. The library's own sendNotification is not used: it always speaks https and
 * connects wherever the endpoint's name resolves, while the endpoint is chosen by whoever
 * registered the subscription. Here the connection's own lookup refuses private, loopback and
 * link-local addresses (platform/net/outbound-address.ts, checked at connect time so DNS
 * rebinding cannot slip through), within a time limit.
 */

export interface PushRequest {
  endpoint: string;
  method: string;
  headers: Record<string, string | number>;
  body: Buffer | null;
  /** This request's time limit, when shorter than the sender's. */
  timeoutMs?: number;
}

/**
 * `sent`: the push service took it. `gone`: the subscription is no more (404, 410). `refused`:
 * another try cannot mend it (a bad request, a payload too large, a VAPID key the subscription
 * was not made with). `failed`: worth another try (network, time-out, 408, 429, 5xx).
 */
export type SendOutcome = 'sent' | 'gone' | 'refused' | 'failed';

export interface SendResult {
  outcome: SendOutcome;
  /** The push service's status, or null when none answered. */
  status: number | null;
  /** Why it was not sent: never the endpoint (a secret), at most its host. */
  error: string | null;
}

export interface PushSender {
  send(request: PushRequest): Promise<SendResult>;
  close(): void;
}

export function createPushSender({ allowPrivateAddresses, timeoutMs }: { allowPrivateAddresses: boolean; timeoutMs: number }): PushSender {
  const lookup = guardedLookup({ allowPrivate: allowPrivateAddresses, setting: ALLOW_PRIVATE_SETTING });
  const agents = { http: new http.Agent({ keepAlive: true, lookup }), https: new https.Agent({ keepAlive: true, lookup }) };

  return {
    send(request) {
      const limitMs = Math.min(timeoutMs, request.timeoutMs ?? timeoutMs);
      const url = new URL(request.endpoint);
      const host = url.hostname.replace(/^\[|\]$/g, '');
      // A literal address needs no lookup, so it is checked here; http only where private ones are allowed.
      if (url.protocol !== 'https:' && !(allowPrivateAddresses && url.protocol === 'http:')) {
        return Promise.resolve({ outcome: 'refused', status: null, error: `${url.protocol} endpoint refused` });
      }
      if (!allowPrivateAddresses && url.port !== '' && url.port !== '443') {
        return Promise.resolve({ outcome: 'refused', status: null, error: `port ${url.port} refused: push services listen on 443 (${ALLOW_PRIVATE_SETTING} lifts this)` });
      }
      if (isIP(host) && !allowPrivateAddresses && isPrivateAddress(host)) {
        return Promise.resolve({ outcome: 'refused', status: null, error: new RefusedAddress(host, host, ALLOW_PRIVATE_SETTING).message });
      }
      const secure = url.protocol === 'https:';
      return new Promise<SendResult>((resolve) => {
        let settled = false;
        const finish = (result: SendResult) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          resolve(result);
        };
        const outgoing = (secure ? https : http).request(url, { method: request.method, headers: request.headers, agent: secure ? agents.https : agents.http }, (response) => {
          // The answer's body is of no use and may be large: it is drained, unread.
          response.resume();
          response.on('end', () => finish(resultOf(response.statusCode ?? 0, response.statusMessage)));
          response.on('error', (error) => finish({ outcome: 'failed', status: null, error: error.message }));
        });
        // The whole exchange, connection to last byte, within the limit.
        const timer = setTimeout(() => outgoing.destroy(new Error(`no answer within ${limitMs} ms`)), limitMs);
        outgoing.on('error', (error) => finish({ outcome: error instanceof RefusedAddress ? 'refused' : 'failed', status: null, error: error.message }));
        outgoing.end(request.body ?? undefined);
      });
    },
    close() {
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}

function resultOf(status: number, message: string | undefined): SendResult {
  if (status >= 200 && status < 300) return { outcome: 'sent', status, error: null };
  const error = `HTTP ${status}${message ? ` ${message}` : ''}`;
  // RFC 8030 §7.3: 404 and 410 mean the subscription is gone for good.
  if (status === 404 || status === 410) return { outcome: 'gone', status, error };
  if (status === 408 || status === 429 || status >= 500) return { outcome: 'failed', status, error };
  return { outcome: 'refused', status, error };
}
