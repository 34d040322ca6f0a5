import type { Config } from './config/config.js';
import type { Clock } from './clock.js';
import type { Database } from './db/database.js';
import { createAuditLog } from './features/events/audit-log.js';
import { brokerCheck, databaseCheck, redisCheck } from './features/health/health.checks.js';
import { createHealthService } from './features/health/health.service.js';
import type { Authenticator } from './http/access.js';

export interface WiringDeps {
  config: Config;
  database: Database;
  clock: Clock;
}

/** Builds every feature's service once per app, one line per feature. */
export function createFeatures({ config, database, clock }: WiringDeps) {
  const redis = config.redisUrl ? redisCheck(config.redisUrl) : undefined;
  const checks = [databaseCheck(database), ...(redis ? [redis] : []), ...(config.amqpUrl ? [brokerCheck(config.amqpUrl)] : [])];
  const audit = createAuditLog({ clock });
  const health = createHealthService({ checks });
  const authenticate: Authenticator = async () => null;

  return {
    audit,
    health,
    authenticate,
    async close() {
      await redis?.close();
    },
  };
}

export type Features = ReturnType<typeof createFeatures>;
