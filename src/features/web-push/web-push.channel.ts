import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../../db/database.js';
import type { SecretBox } from '../../platform/auth/secret-box.js';
import { PushType, type Push } from '../../platform/push/pushes.js';
import type { Clock } from '../../shared/clock.js';
import { PermanentDeliveryError, storedPush, type Outbox, type OutboxMessage, type PushChannel, type StoredPush } from '../push-delivery/channel.js';
import { confirmedMemberUserIds } from '../../platform/access/memberships.js';
import { mapLimited } from '../../shared/map-limited.js';
import { retryingOnce } from '../../shared/retrying-once.js';
import { createAudience, type Audience } from '../push-delivery/audience.js';
import { createPushSender, type PushSender, type SendResult } from './push-sender.js';
import { ensureVapidKeys, vapidSubject, type VapidKeys } from './vapid-keys.js';
import { deleteExpiredSubscription, subscribedUsers, subscriptionsOfDevices, subscriptionsOfUsers, type SubscriptionRow } from './web-push.repository.js';

/**
 * Web Push to the browser extension (docs/notifications.md): each push for a user or an organization
 * goes, from the outbox, to the Web Push subscriptions of the devices that should hear of it,
 * encrypted for each browser (RFC 8291) and signed with the server's VAPID key (RFC 8292).
 */

export const WEB_PUSH_CHANNEL = 'web-push';

export interface WebPushChannelDeps {
  db: Db;
  clock: Clock;
  secretBox: SecretBox;
  /** Where a delivery that reached only some subscriptions puts the rest, to be tried again. */
  outbox: Outbox;
  config: { publicUrl: string; webPushSubject?: string | undefined };
  log: Pick<FastifyBaseLogger, 'info' | 'warn' | 'error'>;
  /** Send to http and private-address endpoints (a push service on the operator's network; tests). */
  allowPrivateAddresses: boolean;
  /** One push service's answer, connection to last byte (default 10 s). */
  timeoutMs?: number;
  /** How often the audience is read again (PUSH_AUDIENCE_REFRESH_SECONDS). */
  audienceRefreshMs?: number;
  /** How long one delivery may take (default DELIVERY_BUDGET_MS; tests shorten it). */
  deliveryBudgetMs?: number;
}

export interface WebPushChannel extends PushChannel {
  /** The users with a subscribed browser: a push to anyone else is not sent. */
  readonly audience: Audience;
  /** Closes the kept-alive connections to the push services. */
  close(): void;
}

/** What the channel stores per push: the push, and for a second try only the devices it failed for. */
interface WebPushMessage {
  push: StoredPush;
  devices?: string[];
}

/** Sends at once, at most: an organization's push may go to hundreds of browsers. */
const AT_ONCE = 16;
/**
 * How long one delivery may take, under the outbox's 20 s per attempt: a send not begun by then
 * is left to a second message, and one in flight is cut off at it, so a delivery is never still
 * running when the outbox gives up on it and sends the message again (browsers told twice).
 */
const DELIVERY_BUDGET_MS = 15_000;
/**
 * After a push service failed (no answer, a network error, 5xx), its endpoint is not tried again
 * for this long: one browser whose service hangs would otherwise hold a send slot for 10 s at
 * every change its user makes, and every other user's pushes would wait in line behind them.
 */
const COOLDOWN_MS = 60_000;
const DAY_SECONDS = 24 * 60 * 60;
/** A login request is answerable for 15 minutes (the official auth request lifetime); later it is noise. */
const AUTH_REQUEST_SECONDS = 15 * 60;

export function createWebPushChannel(deps: WebPushChannelDeps): WebPushChannel {
  const { db, outbox, log } = deps;
  // The key pair is read (or made) at the first delivery, and web-push loaded then: a server
  // whose users never subscribe neither loads it nor writes a key. A failure is not kept.
  let keyProblemLogged = false;
  const vapidKeys = retryingOnce(() =>
    ensureVapidKeys(deps).catch((error: unknown) => {
      if (!keyProblemLogged) {
        keyProblemLogged = true;
        log.error({ err: error }, 'web push: the VAPID key pair cannot be read on this instance (is SECRETS_KEY the one the other instances use?)');
      }
      throw new Error('web push: this instance cannot read the VAPID key pair (SECRETS_KEY)');
    }),
  );
  const library = retryingOnce(async () => (await import('web-push')).default);
  const subject = vapidSubject(deps.config);
  const audience = createAudience({ load: () => subscribedUsers(db), log, ...(deps.audienceRefreshMs ? { refreshMs: deps.audienceRefreshMs } : {}) });
  const sender: PushSender = createPushSender({ allowPrivateAddresses: deps.allowPrivateAddresses, timeoutMs: deps.timeoutMs ?? 10_000 });

  async function subscriptionsFor(message: WebPushMessage): Promise<SubscriptionRow[]> {
    const { push, devices } = message;
    if (devices) return subscriptionsOfDevices(db, devices);
    if ('user' in push.target) return subscriptionsOfUsers(db, [push.target.user], push.contextId);
    // An organization's push reaches its confirmed members, as the hub's does.
    if ('organization' in push.target) return subscriptionsOfUsers(db, await confirmedMemberUserIds(db, push.target.organization), push.contextId);
    return [];
  }

  const cooling = new Map<string, number>();
  async function sendTo(subscription: SubscriptionRow, payload: string, push: StoredPush, vapid: VapidKeys, deadline: number): Promise<SendResult> {
    const now = Date.now();
    const left = deadline - now;
    if (left <= 0) return { outcome: 'failed', status: null, error: 'not sent: the delivery ran out of time' };
    if ((cooling.get(subscription.endpoint) ?? 0) > now) return { outcome: 'failed', status: null, error: 'not sent: its push service failed within the last minute' };
    const result = await sendNow(subscription, payload, push, vapid, left);
    if (result.outcome === 'failed') {
      if (cooling.size >= 10_000) for (const [endpoint, until] of cooling) if (until <= now) cooling.delete(endpoint);
      cooling.set(subscription.endpoint, Date.now() + COOLDOWN_MS);
    } else {
      cooling.delete(subscription.endpoint);
    }
    return result;
  }

  async function sendNow(subscription: SubscriptionRow, payload: string, push: StoredPush, vapid: VapidKeys, left: number): Promise<SendResult> {
    const webpush = await library();
    let request;
    try {
      request = webpush.generateRequestDetails({ endpoint: subscription.endpoint, keys: { p256dh: subscription.p256dh, auth: subscription.auth } }, payload, {
        vapidDetails: { subject, publicKey: vapid.publicKey, privateKey: vapid.privateKey },
        contentEncoding: 'aes128gcm',
        ...delivery(push.type),
      });
    } catch (error) {
      return { outcome: 'refused', status: null, error: error instanceof Error ? error.message : String(error) };
    }
    return sender.send({ endpoint: request.endpoint, method: request.method, headers: request.headers, body: request.body, timeoutMs: left });
  }

  return {
    name: WEB_PUSH_CHANNEL,
    audience,
    start: () => audience.start(),
    stop: () => audience.stop(),

    messageFor(push: Push): OutboxMessage | null {
      // The anonymous hub's pushes (a login request's answer) go to a device not signed in: no subscription.
      if (!('user' in push.target || 'organization' in push.target)) return null;
      // A user without a subscribed browser has nothing to send to (an organization's push is read at delivery).
      if ('user' in push.target && !audience.reaches(push.target.user)) return null;
      return { push: storedPush(push) };
    },

    async deliver(message: OutboxMessage): Promise<void> {
      const deadline = Date.now() + (deps.deliveryBudgetMs ?? DELIVERY_BUDGET_MS);
      const webPushMessage = message as unknown as WebPushMessage;
      if (!webPushMessage.push || typeof webPushMessage.push !== 'object') throw new PermanentDeliveryError('not a Web Push message');
      const { push } = webPushMessage;
      // A browser registered under two accounts holds one subscription: it hears of a change once.
      const seen = new Set<string>();
      const subscriptions = (await subscriptionsFor(webPushMessage)).filter((s) => !seen.has(s.endpoint) && seen.add(s.endpoint));
      if (subscriptions.length === 0) return;
      // Unreadable here (another SECRETS_KEY): the outbox tries again, within its bound, maybe on another instance.
      const vapid = await vapidKeys();
      const payload = payloadOf(push);
      const results = await mapLimited(subscriptions, AT_ONCE, (s) => sendTo(s, payload, push, vapid, deadline));
      const failed: { device: string; error: string | null }[] = [];
      for (const [i, result] of results.entries()) {
        const subscription = subscriptions[i]!;
        if (result.outcome === 'gone') {
          await deleteExpiredSubscription(db, subscription.device_id, subscription.endpoint);
          log.info({ deviceId: subscription.device_id, status: result.status }, 'web push: the subscription expired; removed');
        } else if (result.outcome === 'refused') {
          log.warn({ deviceId: subscription.device_id, status: result.status, error: result.error }, 'web push: the push service refused a message; not retried');
        } else if (result.outcome === 'failed') {
          failed.push({ device: subscription.device_id, error: result.error });
        }
      }
      if (failed.length === 0) return;
      // Nothing went out: the outbox tries the whole message again later, with its back-off and its bound.
      if (failed.length === subscriptions.length) {
        throw new Error(`web push: none of ${failed.length} push service(s) took the message (${failed[0]!.error ?? 'no answer'})`);
      }
      // Some browsers have it: a second message names only the others, so none is told twice.
      // Each such message names fewer devices than the one before, so this ends.
      outbox.enqueue(WEB_PUSH_CHANNEL, { push, devices: failed.map((f) => f.device) });
      log.warn({ failed: failed.length, of: subscriptions.length, error: failed[0]!.error }, 'web push: some push services did not take the message; those are tried again');
    },

    close() {
      sender.close();
    },
  };
}

/**
 * What the extension reads (clients WorkerWebPushConnectionService: `new
 * NotificationResponse(event.data.json().data)`): the official server's Web Push template
 * (bitwarden/server NotificationHubPushRegistrationService, `{"data":{"type":…,"payload":"…"}}`),
 * the type a number and the payload the push's PascalCase payload as JSON text, which the client
 * parses. Ids and dates only, as every push payload.
 */
export function payloadOf(push: Pick<StoredPush, 'type' | 'payload'>): string {
  return JSON.stringify({ data: { type: push.type, payload: JSON.stringify(push.payload) } });
}

/** How long a push service keeps a message for an offline browser, and how soon it wakes one. */
function delivery(type: PushType): { TTL: number; urgency: 'normal' | 'high' } {
  if (type === PushType.AuthRequest) return { TTL: AUTH_REQUEST_SECONDS, urgency: 'high' };
  if (type === PushType.LogOut) return { TTL: DAY_SECONDS, urgency: 'high' };
  return { TTL: DAY_SECONDS, urgency: 'normal' };
}
