import { randomUUID } from 'node:crypto';
import type { Clock } from '../../shared/clock.js';
import type { Db } from '../../db/database.js';
import { createLease } from '../../db/leases.js';
import type { PushOutboxTable } from '../../db/schema/push.js';
import type { Push } from '../../platform/push/pushes.js';
import { backoffMs } from '../../shared/backoff.js';
import { mapLimited } from '../../shared/map-limited.js';
import { PermanentDeliveryError, type Outbox, type OutboxMessage, type PushChannel } from './channel.js';

export interface OutboxLog {
  warn(obj: object, msg: string): void;
}

/** How a message's attempt ended: sent, to be tried again later, or dropped (refused for good, out of attempts, channel gone). */
export type DeliveryResult = 'sent' | 'retried' | 'dropped';

export interface OutboxSettings {
  /** How often an instance that is not sending looks for due messages (another instance may have written them). */
  pollMs: number;
  /** Messages taken at a time, and sent at once. */
  batchSize: number;
  concurrency: number;
  /** Attempts before a message is dropped: with the back-off below, about half an hour of trying. */
  maxAttempts: number;
  /** The first retry's wait (half of it fixed, half random); each next one doubles, up to retryMaxMs. */
  retryBaseMs: number;
  retryMaxMs: number;
  /** An attempt that has not ended by then counts as failed (channels time their own calls out sooner). */
  attemptTimeoutMs: number;
  /** Messages in memory waiting for their insert; past it new ones are dropped (the database is down). */
  maxBuffered: number;
}

const DEFAULTS: OutboxSettings = {
  pollMs: 1000,
  batchSize: 64,
  concurrency: 16,
  maxAttempts: 12,
  retryBaseMs: 2000,
  retryMaxMs: 10 * 60_000,
  attemptTimeoutMs: 20_000,
  maxBuffered: 10_000,
};

/** A channel is reported as failing (log, health) once a message has failed this many attempts. */
export const FAILING_AFTER_ATTEMPTS = 3;

/** How long a stop waits for the sends in flight. */
const STOP_WAIT_MS = 2000;

/** Rows per insert: 7 columns stay well under SQLite's 999 bound parameters. */
const INSERT_CHUNK = 100;

type Row = PushOutboxTable;

/**
 * The push outbox: channels' messages are kept in the database after the change committed and
 * sent by one loop per channel, on the instance holding that channel's lease, so a hung relay
 * delays only its own messages and never a request or the other channel. At least once: a
 * message is deleted only after its channel took it; a lost lease or a crash resends it.
 * docs/notifications.md says what an operator sees.
 */
export function createPushOutbox(deps: { db: Db; clock: Clock; log: OutboxLog; onDelivery?: (channel: string, result: DeliveryResult) => void; settings?: Partial<OutboxSettings> }) {
  const { db, clock, log } = deps;
  const settings = { ...DEFAULTS, ...deps.settings };
  const channels = new Map<string, PushChannel>();
  const loops = new Map<string, { running: Promise<void>; wake: () => void }>();
  let buffer: Row[] = [];
  // The next insert, not yet begun, and every insert in flight: stop() waits for all of them.
  let flushing: Promise<void> | undefined;
  const inserting = new Set<Promise<void>>();
  let stopped = true;
  let droppedBeforeInsert = 0;
  // Channels said in the log to be failing, so an outage is told once and its end once, even
  // where neither the health report nor /metrics is served.
  const failing = new Set<string>();

  const report = (channel: string, result: DeliveryResult) => deps.onDelivery?.(channel, result);

  function enqueue(channel: string, message: OutboxMessage): void {
    if (!channels.has(channel)) return;
    if (buffer.length >= settings.maxBuffered) {
      if (droppedBeforeInsert++ === 0) log.warn({ channel }, 'push outbox: too many messages waiting for the database; new ones are dropped');
      report(channel, 'dropped');
      return;
    }
    const now = clock.now().toISOString();
    buffer.push({ id: randomUUID(), channel, message: JSON.stringify(message), attempts: 0, next_attempt_at: now, created_at: now, last_error: null });
    // One insert for everything enqueued in this turn of the event loop, off the caller's stack.
    if (flushing) return;
    const next = new Promise<void>((resolve) => setImmediate(resolve)).then(flush);
    flushing = next;
    inserting.add(next);
    void next.finally(() => inserting.delete(next));
  }

  async function flush(): Promise<void> {
    const rows = buffer;
    buffer = [];
    flushing = undefined;
    for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
      const chunk = rows.slice(i, i + INSERT_CHUNK);
      try {
        await db.insertInto('push_outbox').values(chunk).execute();
      } catch (error) {
        log.warn({ err: error, messages: chunk.length }, 'push outbox: messages could not be kept and were dropped');
        for (const row of chunk) report(row.channel, 'dropped');
      }
    }
    droppedBeforeInsert = 0;
    for (const channel of new Set(rows.map((row) => row.channel))) loops.get(channel)?.wake();
  }

  /** Every channel's message for a push, enqueued; a channel that throws only loses its own. */
  function offer(push: Push): void {
    for (const channel of channels.values()) {
      let message: OutboxMessage | null;
      try {
        message = channel.messageFor(push);
      } catch (error) {
        log.warn({ err: error, channel: channel.name, pushType: push.type }, 'push outbox: a channel could not build its message');
        continue;
      }
      if (message) enqueue(channel.name, message);
    }
  }

  async function attempt(channel: PushChannel, row: Row): Promise<{ row: Row; error?: unknown }> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${settings.attemptTimeoutMs} ms`)), settings.attemptTimeoutMs);
    });
    try {
      let message: OutboxMessage;
      try {
        message = JSON.parse(row.message) as OutboxMessage;
      } catch {
        return { row, error: new PermanentDeliveryError('the stored message is not JSON') };
      }
      await Promise.race([channel.deliver(message, row.attempts + 1), timeout]);
      return { row };
    } catch (error) {
      return { row, error };
    } finally {
      clearTimeout(timer);
    }
  }

  /** Sends the channel's due messages once; false when there were none. */
  async function sendDue(channel: PushChannel): Promise<boolean> {
    const now = clock.now();
    const rows = await db
      .selectFrom('push_outbox')
      .selectAll()
      .where('channel', '=', channel.name)
      .where('next_attempt_at', '<=', now.toISOString())
      .orderBy('next_attempt_at')
      .orderBy('id')
      .limit(settings.batchSize)
      .execute();
    if (rows.length === 0) return false;
    // The claim: until every attempt of this batch could have timed out, no other worker takes them.
    const rounds = Math.ceil(rows.length / settings.concurrency);
    const claimUntil = new Date(now.getTime() + settings.attemptTimeoutMs * (rounds + 1)).toISOString();
    await db.updateTable('push_outbox').set({ next_attempt_at: claimUntil }).where('id', 'in', rows.map((row) => row.id)).execute();

    const outcomes = await mapLimited(rows, settings.concurrency, (row) => attempt(channel, row));

    const done: string[] = [];
    for (const { row, error } of outcomes) {
      const attempts = row.attempts + 1;
      if (error === undefined) {
        done.push(row.id);
        report(channel.name, 'sent');
        if (failing.delete(channel.name)) log.warn({ channel: channel.name }, 'push outbox: the channel delivers again');
      } else if (error instanceof PermanentDeliveryError || attempts >= settings.maxAttempts) {
        done.push(row.id);
        report(channel.name, 'dropped');
        log.warn({ channel: channel.name, attempts, reason: reasonOf(error) }, 'push outbox: a message was dropped');
      } else {
        report(channel.name, 'retried');
        if (attempts >= FAILING_AFTER_ATTEMPTS && !failing.has(channel.name)) {
          failing.add(channel.name);
          log.warn({ channel: channel.name, attempts, reason: reasonOf(error) }, 'push outbox: the channel is failing; its messages are kept and tried again');
        }
        const at = new Date(clock.now().getTime() + backoffMs({ baseMs: settings.retryBaseMs, capMs: settings.retryMaxMs }, attempts - 1)).toISOString();
        await db.updateTable('push_outbox').set({ attempts, next_attempt_at: at, last_error: reasonOf(error) }).where('id', '=', row.id).execute();
      }
    }
    if (done.length > 0) await db.deleteFrom('push_outbox').where('id', 'in', done).execute();
    return true;
  }

  function startLoop(channel: PushChannel): void {
    const lease = createLease(db, clock, `push-outbox:${channel.name}`);
    let wakeUp: (() => void) | undefined;
    let woken = false;
    const wake = () => {
      woken = true;
      wakeUp?.();
    };
    const idle = () =>
      new Promise<void>((resolve) => {
        if (woken || stopped) return resolve();
        const timer = setTimeout(resolve, settings.pollMs);
        wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      }).finally(() => {
        wakeUp = undefined;
        woken = false;
      });
    const running = (async () => {
      while (!stopped) {
        let busy = false;
        try {
          if (await lease.acquire(Math.max(15_000, settings.pollMs * 5))) busy = await sendDue(channel);
        } catch (error) {
          log.warn({ err: error, channel: channel.name }, 'push outbox: the database could not be read; trying again');
        }
        if (!busy) await idle();
      }
      await lease.release().catch(() => undefined);
    })();
    loops.set(channel.name, { running, wake });
  }

  const outbox: Outbox & {
    addChannel(channel: PushChannel): void;
    channels(): PushChannel[];
    offer(push: Push): void;
    start(): void;
    stop(): Promise<void>;
    /** Waits for what is enqueued to be in the database (tests, shutdown). */
    flushed(): Promise<void>;
  } = {
    enqueue,
    offer,
    addChannel(channel) {
      channels.set(channel.name, channel);
    },
    channels: () => [...channels.values()],
    start() {
      if (!stopped) return;
      stopped = false;
      for (const channel of channels.values()) {
        channel.start?.().catch((error: unknown) => log.warn({ err: error, channel: channel.name }, 'push outbox: a channel did not start'));
        startLoop(channel);
      }
    },
    async stop() {
      stopped = true;
      for (const channel of channels.values()) channel.stop?.();
      await outbox.flushed();
      for (const loop of loops.values()) loop.wake();
      // A send in flight to a hung service is not waited for: its claimed messages are tried
      // again when the claim runs out, by whichever instance sends then.
      let timer: NodeJS.Timeout | undefined;
      const bound = new Promise<void>((resolve) => (timer = setTimeout(resolve, STOP_WAIT_MS)));
      await Promise.race([Promise.all([...loops.values()].map((loop) => loop.running)), bound]);
      clearTimeout(timer);
      loops.clear();
    },
    async flushed() {
      while (inserting.size > 0) await Promise.all([...inserting]);
    },
  };
  return outbox;
}

export type PushOutbox = ReturnType<typeof createPushOutbox>;

/** What the health report and the row keep of a failure: its message, never a token (channels word their errors so). */
function reasonOf(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.slice(0, 300);
}
