import { sql } from 'kysely';
import type { Clock } from '../../shared/clock.js';
import type { Db } from '../../db/database.js';
import type { HealthCheck } from '../health/health.service.js';
import type { Push, Pushes } from '../../platform/push/pushes.js';
import { createPushOutbox, type DeliveryResult, type OutboxLog, type OutboxSettings } from './outbox.js';

/** A channel is reported as failing once a message waiting for it has failed this many attempts. */
const FAILING_AFTER_ATTEMPTS = 3;

/**
 * Pushes as the features send them, delivered twice over: to the hub's WebSockets at once, and
 * to every push channel (the mobile relay, Web Push) through the outbox. Channels are added
 * before `start`; with none, pushes go to the hub only and nothing is written.
 */
export function createPushDelivery(deps: {
  db: Db;
  clock: Clock;
  log: OutboxLog;
  hub: Pushes;
  onDelivery?: (channel: string, result: DeliveryResult) => void;
  settings?: Partial<OutboxSettings>;
}) {
  const { db } = deps;
  const outbox = createPushOutbox(deps);

  const pushes: Pushes = {
    send(sent: Push | readonly Push[]) {
      deps.hub.send(sent);
      if (outbox.channelNames().length === 0) return;
      const list: readonly Push[] = Array.isArray(sent) ? sent : [sent as Push];
      for (const push of list) outbox.offer(push);
    },
  };

  /** Messages waiting per channel, fleet-wide (they are rows). */
  async function pending(): Promise<Record<string, number>> {
    const counts: Record<string, number> = Object.fromEntries(outbox.channelNames().map((name) => [name, 0]));
    const rows = await db.selectFrom('push_outbox').select(['channel', sql<number>`count(*)`.as('count')]).groupBy('channel').execute();
    for (const row of rows) counts[row.channel] = Number(row.count);
    return counts;
  }

  /**
   * Not critical: a push service being down delays phones and browsers, nothing else. Degraded
   * while a channel has a message that has failed FAILING_AFTER_ATTEMPTS times, read from the
   * rows, so every instance of a fleet reports it, not only the one sending.
   */
  const health: HealthCheck = {
    name: 'push',
    critical: false,
    async probe() {
      const channels = outbox.channelNames();
      if (channels.length === 0) return { channels: [] };
      const waiting = await pending();
      const failing = await db
        .selectFrom('push_outbox')
        .select(['channel', 'attempts', 'created_at', 'last_error'])
        .where('attempts', '>=', FAILING_AFTER_ATTEMPTS)
        .orderBy('created_at', 'desc')
        .limit(20)
        .execute();
      const problems = channels.flatMap((name) => {
        const rows = failing.filter((row) => row.channel === name);
        if (rows.length === 0) return [];
        const oldest = rows.reduce((a, b) => (a.created_at < b.created_at ? a : b));
        return [`${name}: ${waiting[name]} messages waiting, failing since ${oldest.created_at}; last error: ${rows[0]!.last_error ?? 'unknown'}`];
      });
      if (problems.length > 0) throw new Error(problems.join('; '));
      const seen = Object.fromEntries(outbox.channelList().flatMap((channel) => (channel.status ? [[channel.name, channel.status()]] : [])));
      return { channels, waiting, ...(Object.keys(seen).length > 0 ? { thisInstance: seen } : {}) };
    },
  };

  return { outbox, pushes, pending, health };
}

export type PushDelivery = ReturnType<typeof createPushDelivery>;
