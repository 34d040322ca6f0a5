import { createGuardedPoster } from '../../platform/net/guarded-post.js';
import { ALLOW_PRIVATE_SETTING } from './web-push.schemas.js';

/**
 * POSTs one encrypted Web Push message (built by the web-push library's generateRequestDetails)
 * to a push service. The library's own sendNotification is not used: it always speaks https and
 * connects wherever the endpoint's name resolves, while the endpoint is chosen by whoever
 * registered the subscription. Here it goes through platform/net's guarded poster (no private,
 * loopback or link-local address, checked at connect time; a time limit).
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
  const poster = createGuardedPoster({ allowPrivateAddresses, setting: ALLOW_PRIVATE_SETTING, timeoutMs });

  return {
    async send(request) {
      const url = new URL(request.endpoint);
      // https only, on 443, where private addresses are not allowed (then http too, for a service on the operator's network).
      if (url.protocol !== 'https:' && !(allowPrivateAddresses && url.protocol === 'http:')) {
        return { outcome: 'refused', status: null, error: `${url.protocol} endpoint refused` };
      }
      if (!allowPrivateAddresses && url.port !== '' && url.port !== '443') {
        return { outcome: 'refused', status: null, error: `port ${url.port} refused: push services listen on 443 (${ALLOW_PRIVATE_SETTING} lifts this)` };
      }
      const answer = await poster.send(url, { method: request.method, headers: request.headers, body: request.body, ...(request.timeoutMs !== undefined ? { timeoutMs: request.timeoutMs } : {}) });
      if (answer.refused) return { outcome: 'refused', status: null, error: answer.error };
      if (answer.status === null) return { outcome: 'failed', status: null, error: answer.error };
      return resultOf(answer.status, answer.error);
    },
    close() {
      poster.close();
    },
  };
}

function resultOf(status: number, error: string | null): SendResult {
  if (status >= 200 && status < 300) return { outcome: 'sent', status, error: null };
  // RFC 8030 §7.3: 404 and 410 mean the subscription is gone for good.
  if (status === 404 || status === 410) return { outcome: 'gone', status, error };
  if (status === 408 || status === 429 || status >= 500) return { outcome: 'failed', status, error };
  return { outcome: 'refused', status, error };
}
