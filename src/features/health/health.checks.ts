import type { Redis } from 'ioredis';
import type { Database } from '../../db/database.js';
import type { HealthCheck } from './health.service.js';

export function databaseCheck(database: Database): HealthCheck {
  return { name: 'database', critical: true, probe: async () => {
    await database.ping();
    return { engine: database.engine };
  } };
}

/** Rate limits and fan-out fall back to this instance alone without Redis: degraded, not down. */
export function redisCheck(url: string): HealthCheck & { close(): Promise<void> } {
  let client: Redis | undefined;
  return {
    name: 'redis',
    critical: false,
    async probe() {
      // ioredis and amqplib are loaded by the first probe: these checks exist only when configured.
      const { Redis } = await import('ioredis');
      if (!client) {
        client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 2000, enableOfflineQueue: false });
        // The probe's own rejection reports the outage; without a listener ioredis prints every retry as unhandled.
        client.on('error', () => undefined);
      }
      if (client.status === 'wait' || client.status === 'end') await client.connect();
      await client.ping();
    },
    async close() {
      client?.disconnect();
      client = undefined;
    },
  };
}

export function brokerCheck(url: string): HealthCheck {
  return {
    name: 'broker',
    critical: false,
    async probe() {
      const { default: amqp } = await import('amqplib');
      const connection = await amqp.connect(url, { timeout: 2000 });
      await connection.close();
    },
  };
}
