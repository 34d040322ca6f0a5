import type { Push, PushTarget, PushType } from '../../platform/push/pushes.js';

/**
 * A way a push leaves the server besides the hub's WebSockets: the mobile push relay, Web Push.
 * The outbox (outbox.ts) keeps what a channel has to send in the database after the change
 * committed and hands it to `deliver` from a background worker, so a slow or unreachable
 * service never holds a request; it retries with back-off until `deliver` resolves, throws a
 * `PermanentDeliveryError`, or the attempts run out.
 */
export interface PushChannel {
  /** The outbox's name for the channel (`relay`, `web-push`); stored with each message. */
  readonly name: string;
  /**
   * What this channel sends for a push, or null when it sends nothing for it (an anonymous
   * hub's push, a push type it does not carry). Called on the instance that made the change,
   * right after commit: it must be quick and must not read the database.
   */
  messageFor(push: Push): OutboxMessage | null;
  /** Sends one message. Resolving means sent (or nothing left to send); throwing means retry later. */
  deliver(message: OutboxMessage, attempt: number): Promise<void>;
  /** What this instance saw of the service lately (no secrets), for the health report. */
  status?(): object;
  /** Called as the outbox starts and stops (a channel's own timers). */
  start?(): Promise<void>;
  stop?(): void;
}

/** A JSON value a channel stores and gets back (dates travel as ISO text). */
export type OutboxMessage = { readonly [key: string]: unknown };

/** A push as a channel gets it back from the outbox: the `Push` with its payload's dates as ISO text. */
export interface StoredPush {
  type: PushType;
  payload: Record<string, unknown>;
  contextId: string | null;
  target: PushTarget;
}

/** The push as stored: `Push` through JSON (dates become ISO text), as a channel's `deliver` reads it. */
export function storedPush(push: Push): StoredPush {
  return JSON.parse(JSON.stringify(push)) as StoredPush;
}

/** A failure that another attempt cannot mend (the service refused the message as invalid): the message is dropped. */
export class PermanentDeliveryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PermanentDeliveryError';
  }
}

/**
 * Enqueues a channel's messages that are not pushes (a relay registration when a device gets
 * its push token): same outbox, same retries. Never throws and never waits for the database.
 */
export interface Outbox {
  enqueue(channel: string, message: OutboxMessage): void;
}
