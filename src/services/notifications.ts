import type { FastifyPluginAsync } from 'fastify';
import { enforceAccessRules } from '../http/access.js';
import { apiErrorHandler } from '../http/error-handler.js';
import { NotFound } from '../http/errors.js';
import { aliveRoutes } from '../features/health/health.routes.js';
import { notificationsRoutes } from '../features/notifications/notifications.routes.js';
import type { ServiceOptions } from './service-options.js';

/**
 * The notifications service: `/notifications/hub` and `/notifications/anonymous-hub`, the
 * SignalR hub the official apps keep a WebSocket open to (docs/notifications.md).
 */
export const notificationsService: FastifyPluginAsync<ServiceOptions> = async (app, { clock, authenticate, features }) => {
  app.setErrorHandler(apiErrorHandler);
  app.setNotFoundHandler(() => {
    throw new NotFound();
  });
  enforceAccessRules(app, authenticate);

  await app.register(aliveRoutes, { clock });
  await app.register(notificationsRoutes, { hub: features.notifications.hub });
};
