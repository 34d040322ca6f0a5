import { createHmac } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { guardedLookup, isPrivateAddress, RefusedAddress } from '../../platform/net/outbound-address.js';
import { IntegrationType, type Target } from './rules.js';

/**
 * Outbound requests to integrations: POST only, to public addresses only unless the operator
 * allows private ones (INTEGRATIONS_ALLOW_PRIVATE_ADDRESSES, checked by platform/net at
 * connection time), within a time limit, signed.
 */

const SETTING = 'INTEGRATIONS_ALLOW_PRIVATE_ADDRESSES';

export interface OutboundOptions {
  allowPrivateAddresses: boolean;
  timeoutMs: number;
}

export interface OutboundResult {
  ok: boolean;
  /** Worth another try: network errors, time-outs, 408, 429 and 5xx. */
  retryable: boolean;
  status: number | null;
  error: string | null;
  /** The receiver's Retry-After, in milliseconds. */
  retryAfterMs: number | null;
}

export interface Delivery {
  type: IntegrationType;
  target: Target;
  /** The rendered template. */
  body: string;
  /** Stable per event and configuration: the receiver's key for deduplication. */
  messageId: string;
  signingSecret: string;
}

export const SIGNATURE_HEADER = 'x-strongroom-signature';
export const TIMESTAMP_HEADER = 'x-strongroom-timestamp';
export const DELIVERY_HEADER = 'x-strongroom-delivery';

/** `sha256=<hex HMAC-SHA256 of "<timestamp>.<body>" under the integration's signing secret>`. */
export function signature(secret: string, timestamp: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

/** Wraps the rendered template in the format the integration's type expects. */
export function payloadOf(type: IntegrationType, rendered: string): string {
  if (type !== IntegrationType.Slack && type !== IntegrationType.Teams) return rendered;
  // A template that renders to a JSON object is sent as the whole message (Slack blocks, an Adaptive Card message).
  try {
    const parsed: unknown = JSON.parse(rendered);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return rendered;
  } catch {
    // Plain text.
  }
  if (type === IntegrationType.Slack) return JSON.stringify({ text: rendered });
  return JSON.stringify({
    type: 'message',
    attachments: [
      {
        contentType: 'application/vnd.microsoft.card.adaptive',
        content: { $schema: 'http://adaptivecards.io/schemas/adaptive-card.json', type: 'AdaptiveCard', version: '1.4', body: [{ type: 'TextBlock', text: rendered, wrap: true }] },
      },
    ],
  });
}

export function createOutbound(options: OutboundOptions) {
  const lookupFn = guardedLookup({ allowPrivate: options.allowPrivateAddresses, setting: SETTING });
  const agents = { http: new http.Agent({ keepAlive: true, lookup: lookupFn }), https: new https.Agent({ keepAlive: true, lookup: lookupFn }) };

  return {
    async send(delivery: Delivery, now: Date = new Date()): Promise<OutboundResult> {
      const { target } = delivery;
      const host = target.uri.hostname.replace(/^\[|\]$/g, '');
      // A literal address needs no lookup, so it is checked here.
      if (isIP(host) && !options.allowPrivateAddresses && isPrivateAddress(host)) {
        return { ok: false, retryable: false, status: null, error: new RefusedAddress(host, host, SETTING).message, retryAfterMs: null };
      }
      const body = Buffer.from(payloadOf(delivery.type, delivery.body), 'utf8');
      const timestamp = String(Math.floor(now.getTime() / 1000));
      const headers: Record<string, string> = {
        'content-type': 'application/json; charset=utf-8',
        'content-length': String(body.length),
        'user-agent': 'Strongroom-Integrations/1',
        [DELIVERY_HEADER]: delivery.messageId,
        [TIMESTAMP_HEADER]: timestamp,
        [SIGNATURE_HEADER]: signature(delivery.signingSecret, timestamp, body.toString('utf8')),
      };
      if (delivery.type === IntegrationType.Datadog) {
        if (target.apiKey) headers['dd-api-key'] = target.apiKey;
      } else if (target.scheme) {
        headers.authorization = target.token ? `${target.scheme} ${target.token}` : target.scheme;
      }
      const secure = target.uri.protocol === 'https:';
      return new Promise<OutboundResult>((resolve) => {
        let settled = false;
        const finish = (result: OutboundResult) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          resolve(result);
        };
        const request = (secure ? https : http).request(target.uri, { method: 'POST', headers, agent: secure ? agents.https : agents.http }, (response) => {
          response.resume();
          response.on('end', () => {
            const status = response.statusCode ?? 0;
            const ok = status >= 200 && status < 300;
            const retryable = status === 408 || status === 429 || status >= 500;
            const after = response.headers['retry-after'];
            let retryAfterMs: number | null = null;
            if (after) {
              const seconds = Number(after);
              retryAfterMs = Number.isFinite(seconds) ? seconds * 1000 : Math.max(0, Date.parse(after) - Date.now()) || null;
            }
            finish({ ok, retryable: !ok && retryable, status, error: ok ? null : `HTTP ${status}${response.statusMessage ? ` ${response.statusMessage}` : ''}`, retryAfterMs });
          });
          response.on('error', (error) => finish({ ok: false, retryable: true, status: null, error: error.message, retryAfterMs: null }));
        });
        // The whole exchange, connection to last byte, within the limit.
        const timer = setTimeout(() => {
          request.destroy(new Error(`no answer within ${options.timeoutMs} ms`));
        }, options.timeoutMs);
        request.on('error', (error) => {
          const refused = error instanceof RefusedAddress;
          finish({ ok: false, retryable: !refused, status: null, error: error.message, retryAfterMs: null });
        });
        request.end(body);
      });
    },
    close() {
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}

export type Outbound = ReturnType<typeof createOutbound>;
