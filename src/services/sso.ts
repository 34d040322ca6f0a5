import type { FastifyPluginAsync } from 'fastify';
import { enforceAccessRules } from '../http/access.js';
import { apiErrorHandler } from '../http/error-handler.js';
import { ssoCallbackRoutes } from '../features/sso/sso-login.routes.js';
import type { ServiceOptions } from './service-options.js';

/**
 * The SSO mount (`PUBLIC_URL/sso`): the identity provider's callback, at the path of the
 * official self-hosted SSO service, so that an operator's IdP settings carry over. Served
 * wherever the identity service is.
 */
export const ssoService: FastifyPluginAsync<ServiceOptions> = async (app, { authenticate, features }) => {
  app.setErrorHandler(apiErrorHandler);
  enforceAccessRules(app, authenticate);
  await app.register(ssoCallbackRoutes, { ssoLogin: features.ssoLogin });
};
