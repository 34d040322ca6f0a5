import type { Channel, ChannelModel, ConfirmChannel, ConsumeMessage } from 'amqplib';
import type { Db } from '../../db/database.js';
import type { Deliverer } from './delivery.js';
import { messagesFor, type IntegrationMessage } from './messages.js';
import { INTEGRATION_TYPES, routingKey, type IntegrationType } from './rules.js';
import type { ForwardedEvent } from './templates.js';

/**
 * Between the outbox relay and the receivers. Either way the relay hands events over and moves
 * its cursor only once they are safe: with RabbitMQ when the broker has confirmed them (durable
 * queues, persistent messages), in process once every delivery of them is done or parked.
 */
export interface Transport {
  readonly kind: 'amqp' | 'in-process';
  publishEvents(events: readonly ForwardedEvent[]): Promise<void>;
  /** One message to deliver again (a dead letter replayed). */
  enqueue(message: IntegrationMessage): Promise<void>;
  /** For /healthz/extended. */
  state(): { connected: boolean; [key: string]: unknown };
  close(): Promise<void>;
}

interface Log {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

class Stopped extends Error {}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new Stopped('stopped'));
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new Stopped('stopped'));
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** A cap on deliveries in flight at once. */
function limiter(max: number) {
  let active = 0;
  const waiting: (() => void)[] = [];
  return async function run<T>(task: () => Promise<T>): Promise<T> {
    if (active >= max) await new Promise<void>((resolve) => waiting.push(resolve));
    active++;
    try {
      return await task();
    } finally {
      active--;
      waiting.shift()?.();
    }
  };
}

/**
 * Without a broker: the relay's batch is rendered and delivered here, retries wait in memory,
 * and the batch counts as handed over once each of its deliveries has succeeded or been
 * parked. A stop before that leaves the cursor where it was: the batch is sent again.
 */
export function inProcessTransport({ db, deliverer, concurrency = 64 }: { db: Db; deliverer: Deliverer; concurrency?: number }): Transport {
  const stop = new AbortController();
  const limit = limiter(concurrency);

  async function run(first: IntegrationMessage): Promise<void> {
    let message = first;
    for (;;) {
      const outcome = await limit(() => deliverer.attempt(message));
      if (outcome.kind !== 'retry') return;
      await sleep(outcome.delayMs, stop.signal);
      message = outcome.message;
    }
  }

  return {
    kind: 'in-process',
    async publishEvents(events) {
      const messages = await messagesFor(db, events, INTEGRATION_TYPES);
      await Promise.all(messages.map(run));
    },
    async enqueue(message) {
      void run(message).catch(() => undefined);
    },
    state: () => ({ connected: true }),
    async close() {
      stop.abort();
    },
  };
}

/** The exchanges and queues a deployment declares, under its prefix (AMQP_PREFIX). */
export function amqpNames(prefix: string) {
  return {
    eventExchange: `${prefix}.events`,
    integrationExchange: `${prefix}.integrations`,
    eventQueue: (t: IntegrationType) => `${prefix}.events.${routingKey(t)}`,
    integrationQueue: (t: IntegrationType) => `${prefix}.integrations.${routingKey(t)}`,
    retryQueue: (t: IntegrationType) => `${prefix}.integrations.${routingKey(t)}.retry`,
  };
}

/**
 * With RabbitMQ, the official two-tier design: events go to a fanout exchange with one durable
 * queue per integration type; that type's consumer renders the messages of its configurations
 * and publishes them to the integration exchange, routed by type to the delivery queue. A
 * delivery to retry waits in the type's retry queue (per-message TTL) and dead-letters back
 * into the delivery queue; out of retries it is parked in the database. Every publish is
 * confirmed and every message acknowledged only after its next step is safe: a broker restart
 * loses nothing, a consumer that dies mid-message has it redelivered.
 */
export function amqpTransport({
  url,
  prefix,
  db,
  deliverer,
  log,
  eventBatch = 200,
  deliveryPrefetch = 32,
}: {
  url: string;
  prefix: string;
  db: Db;
  deliverer: Deliverer;
  log: Log;
  eventBatch?: number;
  deliveryPrefetch?: number;
}): Transport {
  const { eventExchange: EVENT_EXCHANGE, integrationExchange: INTEGRATION_EXCHANGE, eventQueue, integrationQueue, retryQueue } = amqpNames(prefix);
  const stop = new AbortController();
  let connection: ChannelModel | undefined;
  let publisher: ConfirmChannel | undefined;
  let connected = false;
  let lastError: string | null = null;
  let connecting: Promise<void> | undefined;
  let reconnectTimer: NodeJS.Timeout | undefined;

  async function declare(channel: Channel): Promise<void> {
    await channel.assertExchange(EVENT_EXCHANGE, 'fanout', { durable: true });
    await channel.assertExchange(INTEGRATION_EXCHANGE, 'direct', { durable: true });
    for (const t of INTEGRATION_TYPES) {
      await channel.assertQueue(eventQueue(t), { durable: true });
      await channel.bindQueue(eventQueue(t), EVENT_EXCHANGE, '');
      await channel.assertQueue(integrationQueue(t), { durable: true });
      await channel.bindQueue(integrationQueue(t), INTEGRATION_EXCHANGE, routingKey(t));
      await channel.assertQueue(retryQueue(t), { durable: true, deadLetterExchange: INTEGRATION_EXCHANGE, deadLetterRoutingKey: routingKey(t) });
    }
  }

  /** Tier one: a type's consumer takes events in batches, renders, publishes, then acknowledges. */
  async function consumeEvents(t: IntegrationType, conn: ChannelModel): Promise<void> {
    const channel = await conn.createConfirmChannel();
    await channel.prefetch(eventBatch);
    let buffer: ConsumeMessage[] = [];
    let timer: NodeJS.Timeout | undefined;
    let chain = Promise.resolve();
    const flush = () => {
      clearTimeout(timer);
      timer = undefined;
      const batch = buffer;
      buffer = [];
      if (batch.length === 0) return;
      chain = chain.then(async () => {
        try {
          const events = batch.map((m) => JSON.parse(m.content.toString('utf8')) as ForwardedEvent);
          const messages = await messagesFor(db, events, [t]);
          for (const message of messages) {
            channel.publish(INTEGRATION_EXCHANGE, routingKey(t), Buffer.from(JSON.stringify(message)), { persistent: true, contentType: 'application/json', messageId: message.messageId });
          }
          if (messages.length > 0) await channel.waitForConfirms();
          channel.ack(batch[batch.length - 1]!, true);
        } catch (error) {
          lastError = (error as Error).message;
          try {
            channel.nack(batch[batch.length - 1]!, true, true);
          } catch {
            // The channel is gone; the broker requeues what was not acknowledged.
          }
        }
      });
    };
    await channel.consume(eventQueue(t), (msg) => {
      if (!msg) return;
      buffer.push(msg);
      if (buffer.length >= eventBatch) flush();
      else timer ??= setTimeout(flush, 5);
    });
  }

  /** Tier two: one delivery a message; a retry goes to the retry queue before the message is acknowledged. */
  async function consumeDeliveries(t: IntegrationType, conn: ChannelModel): Promise<void> {
    const channel = await conn.createConfirmChannel();
    await channel.prefetch(deliveryPrefetch);
    await channel.consume(integrationQueue(t), (msg) => {
      if (!msg) return;
      void (async () => {
        try {
          const message = JSON.parse(msg.content.toString('utf8')) as IntegrationMessage;
          const outcome = await deliverer.attempt(message);
          if (outcome.kind === 'retry') {
            channel.sendToQueue(retryQueue(t), Buffer.from(JSON.stringify(outcome.message)), { persistent: true, expiration: String(outcome.delayMs), contentType: 'application/json' });
            await channel.waitForConfirms();
          }
          channel.ack(msg);
        } catch (error) {
          lastError = (error as Error).message;
          try {
            channel.nack(msg, false, true);
          } catch {
            // Redelivered by the broker.
          }
        }
      })();
    });
  }

  async function connect(): Promise<void> {
    // amqplib is loaded only when AMQP_URL is set, on the first connection.
    const { default: amqp } = await import('amqplib');
    const conn = await amqp.connect(url, { timeout: 5000 });
    conn.on('error', (error: Error) => {
      lastError = error.message;
    });
    conn.on('close', () => {
      if (connection !== conn) return;
      connected = false;
      connection = undefined;
      publisher = undefined;
      if (!stop.signal.aborted) {
        log.warn({ error: lastError }, 'integrations: RabbitMQ connection lost; reconnecting');
        scheduleReconnect(1000);
      }
    });
    try {
      const pub = await conn.createConfirmChannel();
      pub.on('error', (error: Error) => {
        lastError = error.message;
      });
      await declare(pub);
      for (const t of INTEGRATION_TYPES) {
        await consumeEvents(t, conn);
        await consumeDeliveries(t, conn);
      }
      if (stop.signal.aborted) {
        // Closed while connecting: leave nothing open behind.
        await conn.close().catch(() => undefined);
        return;
      }
      connection = conn;
      publisher = pub;
      connected = true;
      lastError = null;
      log.info({}, 'integrations: connected to RabbitMQ');
    } catch (error) {
      await conn.close().catch(() => undefined);
      throw error;
    }
  }

  function scheduleReconnect(delay: number): void {
    if (stop.signal.aborted || reconnectTimer) return;
    reconnectTimer = setTimeout(() => {
      reconnectTimer = undefined;
      ensureConnected().catch(() => scheduleReconnect(Math.min(delay * 2, 10_000)));
    }, delay);
  }

  function ensureConnected(): Promise<void> {
    if (connected && publisher) return Promise.resolve();
    connecting ??= connect()
      .catch((error: Error) => {
        lastError = error.message;
        throw error;
      })
      .finally(() => {
        connecting = undefined;
      });
    return connecting;
  }

  // Connect at once; the relay's publishes wait for (and retry) the connection.
  ensureConnected().catch(() => scheduleReconnect(1000));

  async function publishConfirmed(send: (channel: ConfirmChannel) => void): Promise<void> {
    await ensureConnected();
    const channel = publisher;
    if (!channel) throw new Error('RabbitMQ is not connected');
    send(channel);
    // A broker that goes away mid-publish must not hold the relay: no confirm in time is a failure.
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        channel.waitForConfirms(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('RabbitMQ did not confirm the publish in time')), 15_000);
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    kind: 'amqp',
    async publishEvents(events) {
      if (events.length === 0) return;
      await publishConfirmed((channel) => {
        for (const event of events) {
          channel.publish(EVENT_EXCHANGE, '', Buffer.from(JSON.stringify(event)), { persistent: true, contentType: 'application/json', messageId: event.idempotencyId });
        }
      });
    },
    async enqueue(message) {
      await publishConfirmed((channel) => {
        channel.publish(INTEGRATION_EXCHANGE, routingKey(message.integrationType), Buffer.from(JSON.stringify(message)), { persistent: true, contentType: 'application/json', messageId: message.messageId });
      });
    },
    state: () => ({ connected, lastError }),
    async close() {
      stop.abort();
      clearTimeout(reconnectTimer);
      const conn = connection;
      connection = undefined;
      connected = false;
      await conn?.close().catch(() => undefined);
    },
  };
}
