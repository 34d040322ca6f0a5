import type { Clock } from '../../shared/clock.js';
import type { Config } from '../../config/config.js';
import type { Db } from '../../db/database.js';
import type { AuditLog } from '../../platform/audit/audit-log.js';
import type { EventQueryService } from '../events/events.service.js';
import { createAccessPolicyService } from './access-policies.service.js';
import { createProjectService } from './projects.service.js';
import { createSecretVersionService } from './secret-versions.service.js';
import { createSecretService } from './secrets.service.js';
import { createServiceAccountService } from './service-accounts.service.js';
import { createCountsService } from './sm-counts.service.js';
import { createSmEventService } from './sm-events.service.js';
import { createSmAnswers } from './sm-answers.js';
import { createSmPortingService } from './sm-porting.service.js';

export interface SecretsManagerDeps {
  db: Db;
  clock: Clock;
  audit: AuditLog;
  config: Config;
  /** The app's event-log reader; built here only when a caller (a test) passes none. */
  events: EventQueryService;
}

/** Every Secrets Manager service, built once per app (one line per part). */
export function createSecretsManager(deps: SecretsManagerDeps) {
  const answers = createSmAnswers(deps.config.secretsCacheMegabytes * 1024 * 1024);
  const projects = createProjectService(deps);
  const serviceAccounts = createServiceAccountService(deps);
  return {
    /** The cache of encoded answers, for cache-release.ts. */
    answers,
    secrets: createSecretService({ ...deps, answers }),
    secretVersions: createSecretVersionService(deps),
    projects,
    serviceAccounts,
    counts: createCountsService({ db: deps.db, projects, serviceAccounts }),
    policies: createAccessPolicyService(deps),
    porting: createSmPortingService(deps),
    smEvents: createSmEventService({ db: deps.db, events: deps.events }),
  };
}

export type SecretsManager = ReturnType<typeof createSecretsManager>;
