import type { OutboxLog } from './outbox.js';

/** How often each instance reads again who a channel can reach (PUSH_AUDIENCE_REFRESH_SECONDS). */
export const AUDIENCE_REFRESH_MS = 15_000;

/**
 * The users a push channel can reach (a phone registered with the relay, a browser subscribed to
 * Web Push), kept in memory and read again every PUSH_AUDIENCE_REFRESH_SECONDS, so that a push to nobody writes and sends
 * nothing: an organization item's change is one push per member who sees it, and most members of
 * most servers have neither. Until the first read, and after a failed one, everyone counts: a
 * push too many is sent, never one too few. A device that appears on another instance is reached
 * within one refresh.
 */
export function createAudience(deps: { load: () => Promise<Iterable<string>>; log: OutboxLog; refreshMs?: number }) {
  let users: Set<string> | null = null;
  let timer: NodeJS.Timeout | undefined;
  let warned = false;

  async function refresh(): Promise<void> {
    try {
      users = new Set(await deps.load());
      warned = false;
    } catch (error) {
      users = null;
      if (!warned) deps.log.warn({ err: error }, 'push audience could not be read; pushes go to every user until it can');
      warned = true;
    }
  }

  return {
    /** Reads now and every refresh interval; resolves after the first read. */
    async start(): Promise<void> {
      if (timer) return;
      timer = setInterval(() => void refresh(), deps.refreshMs ?? AUDIENCE_REFRESH_MS);
      timer.unref();
      await refresh();
    },
    stop(): void {
      clearInterval(timer);
      timer = undefined;
    },
    /** A user this instance just gave a device the channel reaches. */
    add(userId: string): void {
      users?.add(userId);
    },
    reaches(userId: string): boolean {
      return users === null || users.has(userId);
    },
  };
}

export type Audience = ReturnType<typeof createAudience>;
