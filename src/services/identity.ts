import type { FastifyPluginAsync } from 'fastify';
import { enforceAccessRules } from '../http/access.js';
import { identityErrorHandler } from '../http/error-handler.js';
import { NotFound } from '../http/errors.js';
import { aliveRoutes } from '../features/health/health.routes.js';
import type { ServiceOptions } from './service-options.js';

/** The identity service ({auth_url}): OAuth tokens, OpenID configuration, registration. */
export const identityService: FastifyPluginAsync<ServiceOptions> = async (app, { clock, authenticate }) => {
  app.setErrorHandler(identityErrorHandler);
  app.setNotFoundHandler(() => {
    throw new NotFound();
  });
  enforceAccessRules(app, authenticate);

  await app.register(aliveRoutes, { clock });
};
