import type { FastifyPluginAsync } from 'fastify';
import { enforceAccessRules } from '../http/access.js';
import { apiErrorHandler } from '../http/error-handler.js';
import { NotFound } from '../http/errors.js';
import type { ServiceOptions } from './service-options.js';

/**
 * The notifications service: `/notifications/hub` and `/notifications/anonymous-hub` (the
 * WebSocket hub). Its prefix is reserved here so that no other service can take it.
 */
export const notificationsService: FastifyPluginAsync<ServiceOptions> = async (app, { authenticate }) => {
  app.setErrorHandler(apiErrorHandler);
  app.setNotFoundHandler(() => {
    throw new NotFound();
  });
  enforceAccessRules(app, authenticate);
};
