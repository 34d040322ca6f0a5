import type { Outbox, OutboxMessage } from '../../src/features/push-delivery/channel.js';

/** An `Outbox` that keeps what was queued, for tests (pass `outbox` to startTestServer). */
export interface RecordedOutbox extends Outbox {
  readonly queued: { channel: string; message: OutboxMessage }[];
  /** The messages of one channel, in the order queued. */
  of(channel: string): OutboxMessage[];
  clear(): void;
}

export function recordingOutbox(): RecordedOutbox {
  const queued: { channel: string; message: OutboxMessage }[] = [];
  return {
    queued,
    enqueue(channel, message) {
      // Through JSON, as the outbox stores it.
      queued.push({ channel, message: JSON.parse(JSON.stringify(message)) as OutboxMessage });
    },
    of: (channel) => queued.filter((q) => q.channel === channel).map((q) => q.message),
    clear() {
      queued.length = 0;
    },
  };
}
