import { randomUUID } from 'node:crypto';
import { decode, encode } from '@msgpack/msgpack';
import type { HubLog } from './hub.js';
import type { Push } from '../../platform/push/pushes.js';

/**
 * How a push reaches the hub of every instance (notifications.md §6.2). In process, it is
 * handed to this instance's hub. With Redis, it is published on one channel that every
 * instance subscribes to, and each writes it to its own connections: delivery happens only on
 * the subscription path, the publisher's own included, so each connection gets it once.
 */
export interface Fanout {
  publish(push: Push): void;
  /** Why pushes reach only this instance's connections, or null when the fan-out works. */
  degraded(): string | null;
  readonly kind: 'in-process' | 'redis';
  close(): Promise<void>;
}

export const NOTIFICATIONS_CHANNEL = 'strongroom:notifications';

export function inProcessFanout(deliver: (push: Push) => void): Fanout {
  let closed = false;
  return {
    kind: 'in-process',
    publish(push) {
      // Off the caller's stack: the request that made the change answers first.
      setImmediate(() => {
        if (!closed) deliver(push);
      });
    },
    degraded: () => null,
    async close() {
      closed = true;
    },
  };
}

/** What travels on the channel: the push, msgpack-encoded so that Dates stay dates. */
interface Envelope {
  v: 1;
  /** The publishing instance. */
  origin: string;
  /** Already written to the origin's own connections (published while its subscriber was down). */
  deliveredAtOrigin: boolean;
  push: Push;
}

function isPush(value: unknown): value is Push {
  if (typeof value !== 'object' || value === null) return false;
  const push = value as Partial<Push>;
  const target = push.target as Record<string, unknown> | undefined;
  return (
    typeof push.type === 'number' &&
    typeof push.payload === 'object' &&
    push.payload !== null &&
    (typeof push.contextId === 'string' || push.contextId === null) &&
    typeof target === 'object' &&
    target !== null &&
    ['user', 'organization', 'authRequest'].some((key) => typeof target[key] === 'string')
  );
}

/**
 * Redis pub/sub with a publisher and a separate subscriber connection. While either is down the
 * instance still serves its own connections (published pushes from others are lost for it, as
 * pub/sub stores nothing; the apps catch up at their next sync), and ioredis reconnects and
 * resubscribes by itself.
 */
export async function redisFanout(deps: { url: string; deliver: (push: Push) => void; log: () => HubLog; channel?: string }): Promise<Fanout> {
  // ioredis is loaded only when REDIS_URL is set.
  const { Redis } = await import('ioredis');
  const channel = deps.channel ?? NOTIFICATIONS_CHANNEL;
  const origin = randomUUID();
  const common = { connectTimeout: 2000, retryStrategy: (times: number) => Math.min(times * 200, 2000) };
  // No offline queue on the publisher: a push is published now or delivered locally, never later.
  const publisher = new Redis(deps.url, { ...common, enableOfflineQueue: false, maxRetriesPerRequest: 1 });
  const subscriber = new Redis(deps.url, { ...common, autoResubscribe: true, maxRetriesPerRequest: null });
  let closed = false;
  let down: string | null = null;
  let lastError = '';

  /** Logs an outage once when it starts (an error or a lost connection) and once when both connections are back. */
  const update = (lost: boolean) => {
    const ready = publisher.status === 'ready' && subscriber.status === 'ready';
    if (ready && down !== null) {
      down = null;
      deps.log().info('notifications: Redis fan-out is back; pushes reach every instance again');
    } else if (!ready && lost && down === null && !closed) {
      down = lastError || 'connection lost';
      deps.log().warn({ reason: down }, 'notifications: Redis is unreachable; pushes reach only this instance\'s connections until it is back');
    }
  };
  for (const client of [publisher, subscriber]) {
    client.on('error', (error: Error) => {
      lastError = error.message;
      update(true);
    });
    client.on('ready', () => update(false));
    client.on('close', () => update(true));
  }
  subscriber.subscribe(channel).catch((error: unknown) => {
    if (!closed) deps.log().warn({ err: error }, 'notifications: could not subscribe to the Redis channel; retrying on reconnect');
  });
  subscriber.on('messageBuffer', (from: Buffer, message: Buffer) => {
    if (from.toString() !== channel) return;
    let envelope: Envelope;
    try {
      envelope = decode(message) as Envelope;
    } catch {
      deps.log().warn('notifications: ignoring a message on the Redis channel that is not MessagePack');
      return;
    }
    if (envelope?.v !== 1 || !isPush(envelope.push)) {
      deps.log().warn('notifications: ignoring a message on the Redis channel that is not a push');
      return;
    }
    if (envelope.origin === origin && envelope.deliveredAtOrigin) return;
    try {
      deps.deliver(envelope.push);
    } catch (error) {
      deps.log().error({ err: error }, 'notifications: delivering a push failed');
    }
  });

  const deliverLocally = (push: Push) => {
    try {
      deps.deliver(push);
    } catch (error) {
      deps.log().error({ err: error }, 'notifications: delivering a push failed');
    }
  };

  return {
    kind: 'redis',
    publish(push) {
      if (closed) return;
      const subscribed = subscriber.status === 'ready';
      if (!subscribed) setImmediate(() => deliverLocally(push));
      if (publisher.status !== 'ready') return;
      const envelope: Envelope = { v: 1, origin, deliveredAtOrigin: !subscribed, push };
      publisher.publish(channel, Buffer.from(encode(envelope, { ignoreUndefined: false }))).catch((error: unknown) => {
        deps.log().warn({ err: error }, 'notifications: publishing a push on Redis failed; delivering it on this instance only');
        if (subscribed) deliverLocally(push);
      });
    },
    degraded() {
      if (closed) return null;
      if (publisher.status === 'ready' && subscriber.status === 'ready') return null;
      return `Redis is unreachable (${lastError || publisher.status}): pushes reach only this instance's connections`;
    },
    async close() {
      closed = true;
      publisher.disconnect();
      subscriber.disconnect();
    },
  };
}
