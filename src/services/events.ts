import type { FastifyPluginAsync } from 'fastify';
import { enforceAccessRules } from '../http/access.js';
import { apiErrorHandler } from '../http/error-handler.js';
import { NotFound } from '../http/errors.js';
import { aliveRoutes } from '../features/health/health.routes.js';
import { collectRoutes } from '../features/events/collect.routes.js';
import type { ServiceOptions } from './service-options.js';

/** The events service ({events_url}): client-reported events (`/collect`, `/events/collect` beside the others). */
export const eventsService: FastifyPluginAsync<ServiceOptions> = async (app, { clock, authenticate, features }) => {
  app.setErrorHandler(apiErrorHandler);
  app.setNotFoundHandler(() => {
    throw new NotFound();
  });
  enforceAccessRules(app, authenticate);

  await app.register(aliveRoutes, { clock });
  await app.register(collectRoutes, { collector: features.eventCollector, limits: features.rateLimits });
};
