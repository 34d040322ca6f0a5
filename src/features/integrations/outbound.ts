import { createHmac } from 'node:crypto';
import { createGuardedPoster } from '../../platform/net/guarded-post.js';
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
  const poster = createGuardedPoster({ allowPrivateAddresses: options.allowPrivateAddresses, setting: SETTING, timeoutMs: options.timeoutMs });

  return {
    async send(delivery: Delivery, now: Date = new Date()): Promise<OutboundResult> {
      const { target } = delivery;
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
      const answer = await poster.send(target.uri, { headers, body });
      const status = answer.status;
      const ok = status !== null && status >= 200 && status < 300;
      // Worth another try: network errors, time-outs, 408, 429 and 5xx; never a refused address.
      const retryable = !ok && !answer.refused && (status === null || status === 408 || status === 429 || status >= 500);
      return { ok, retryable, status, error: answer.error, retryAfterMs: retryAfterMsOf(answer.retryAfter) };
    },
    close() {
      poster.close();
    },
  };
}

/** A Retry-After in seconds or as an HTTP date, in milliseconds from now. */
function retryAfterMsOf(after: string | null): number | null {
  if (!after) return null;
  const seconds = Number(after);
  return Number.isFinite(seconds) ? seconds * 1000 : Math.max(0, Date.parse(after) - Date.now()) || null;
}

export type Outbound = ReturnType<typeof createOutbound>;
