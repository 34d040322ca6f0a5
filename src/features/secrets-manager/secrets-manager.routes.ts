import type { FastifyPluginAsync } from 'fastify';
import { accessPolicyRoutes } from './access-policies.routes.js';
import { projectRoutes } from './projects.routes.js';
import type { SecretsManager } from './secrets-manager.js';
import { secretVersionRoutes } from './secret-versions.routes.js';
import { secretRoutes } from './secrets.routes.js';
import { serviceAccountRoutes } from './service-accounts.routes.js';
import { smCountsRoutes } from './sm-counts.routes.js';
import { smEventRoutes } from './sm-events.routes.js';
import { smPortingRoutes } from './sm-porting.routes.js';

/**
 * The Secrets Manager routes (secrets, versions, trash, projects, machine accounts and their
 * access tokens, access policies, counts, import and export, events). Registered only when the
 * `SECRETS_MANAGER` edition setting is on; otherwise every one of them answers 404.
 */
export const secretsManagerRoutes: FastifyPluginAsync<{ sm: SecretsManager }> = async (app, { sm }) => {
  await app.register(secretRoutes, { secrets: sm.secrets });
  await app.register(secretVersionRoutes, { versions: sm.secretVersions });
  await app.register(projectRoutes, { projects: sm.projects });
  await app.register(serviceAccountRoutes, { serviceAccounts: sm.serviceAccounts });
  await app.register(smCountsRoutes, { counts: sm.counts });
  await app.register(accessPolicyRoutes, { policies: sm.policies });
  await app.register(smPortingRoutes, { porting: sm.porting });
  await app.register(smEventRoutes, { smEvents: sm.smEvents });
};
