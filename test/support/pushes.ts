import type { Push, PushType, Pushes } from '../../src/platform/push/pushes.js';

/** A `Pushes` that keeps what the server sent, for tests (pass `pushes` to startTestServer). */
export interface RecordedPushes extends Pushes {
  readonly sent: Push[];
  /** The pushes of one type, in the order sent. */
  of(type: PushType): Push[];
  clear(): void;
}

export function recordingPushes(): RecordedPushes {
  const sent: Push[] = [];
  return {
    sent,
    send(pushes) {
      sent.push(...(Array.isArray(pushes) ? pushes : [pushes as Push]));
    },
    of: (type) => sent.filter((p) => p.type === type),
    clear() {
      sent.length = 0;
    },
  };
}
