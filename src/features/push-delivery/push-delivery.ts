import { sql } from 'kysely';
import type { Clock } from '../../shared/clock.js';
import type { Db } from '../../db/database.js';
import type { HealthCheck } from '../health/health.service.js';
import type { Push, Pushes } from '../../platform/push/pushes.js';
import { createPushOutbox, FAILING_AFTER_ATTEMPTS, type DeliveryResult, type OutboxLog, type OutboxSettings } from './outbox.js';


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
      const list: readonly Push[] = Array.isArray(sent) ? sent : [sent as Push];
      for (const push of list) outbox.offer(push);
    },
  };

  /** Messages waiting per channel, fleet-wide (they are rows). */
  async function pending(): Promise<Record<string, number>> {
    const counts: Record<string, number> = Object.fromEntries(outbox.channels().map((channel) => [channel.name, 0]));
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
      const channels = outbox.channels().map((channel) => channel.name);
      if (channels.length === 0) return { channels: [] };
      const waiting = await pending();
      // Per failing channel, in one statement: since when, and the newest failing message's error.
      const failing = await db
        .selectFrom('push_outbox as p')
        .select((eb) => [
          'p.channel',
          sql<string>`min(p.created_at)`.as('since'),
          eb
            .selectFrom('push_outbox as q')
            .select('q.last_error')
            .whereRef('q.channel', '=', 'p.channel')
            .where('q.attempts', '>=', FAILING_AFTER_ATTEMPTS)
            .orderBy('q.created_at', 'desc')
            .limit(1)
            .as('last_error'),
        ])
        .where('p.attempts', '>=', FAILING_AFTER_ATTEMPTS)
        .groupBy('p.channel')
        .execute();
      const problems = failing.map(({ channel, since, last_error }) => `${channel}: ${waiting[channel] ?? 0} messages waiting, failing since ${since}; last error: ${last_error ?? 'unknown'}`);
      if (problems.length > 0) throw new Error(problems.join('; '));
      const seen = Object.fromEntries(outbox.channels().flatMap((channel) => (channel.status ? [[channel.name, channel.status()]] : [])));
      return { channels, waiting, ...(Object.keys(seen).length > 0 ? { thisInstance: seen } : {}) };
    },
  };

  return { outbox, pushes, pending, health };
}

export type PushDelivery = ReturnType<typeof createPushDelivery>;
