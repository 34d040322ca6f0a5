// The push outbox: messages for the mobile push relay and Web Push, sent after commit.

/** A message a push channel still has to send (migration 0036-push-outbox; features/push-delivery). */
export interface PushOutboxTable {
  id: string;
  /** The channel's name: `relay`, `web-push`. */
  channel: string;
  /** The channel's message, JSON. */
  message: string;
  attempts: number;
  /** When the worker may take it next (ISO text); moved ahead while a worker sends it. */
  next_attempt_at: string;
  created_at: string;
  /** Why the last attempt failed, for the health report; never a token or a key. */
  last_error: string | null;
}
