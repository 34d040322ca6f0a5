import type { Clock } from '../../clock.js';
import type { Config } from '../../config/config.js';
import type { Db } from '../../db/database.js';
import type { AuditLog } from '../events/audit-log.js';
import { createSecretVersionService } from './secret-versions.service.js';
import { createSecretService } from './secrets.service.js';

export interface SecretsManagerDeps {
  db: Db;
  clock: Clock;
  audit: AuditLog;
  config: Config;
}

/** Every Secrets Manager service, built once per app (one line per part). */
export function createSecretsManager(deps: SecretsManagerDeps) {
  return {
    secrets: createSecretService(deps),
    secretVersions: createSecretVersionService(deps),
  };
}

export type SecretsManager = ReturnType<typeof createSecretsManager>;
