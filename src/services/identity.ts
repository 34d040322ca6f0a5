import type { FastifyPluginAsync } from 'fastify';
import { enforceAccessRules } from '../http/access.js';
import { identityErrorHandler } from '../http/error-handler.js';
import { NotFound } from '../http/errors.js';
import { registrationRoutes } from '../features/accounts/registration.routes.js';
import { aliveRoutes } from '../features/health/health.routes.js';
import { identityRoutes } from '../features/identity/identity.routes.js';
import { passkeyLoginRoutes } from '../features/passkey-login/passkeys.routes.js';
import { ssoIdentityRoutes } from '../features/sso/sso-login.routes.js';
import type { ServiceOptions } from './service-options.js';

/** The identity service ({auth_url}): OAuth tokens, OpenID configuration, registration. */
export const identityService: FastifyPluginAsync<ServiceOptions> = async (app, { clock, authenticate, features }) => {
  app.setErrorHandler(identityErrorHandler);
  app.setNotFoundHandler(() => {
    throw new NotFound();
  });
  enforceAccessRules(app, authenticate);

  await app.register(aliveRoutes, { clock });
  await app.register(registrationRoutes, { accounts: features.accounts });
  await app.register(identityRoutes, { identity: features.identity, keys: features.keys });
  await app.register(passkeyLoginRoutes, { passkeyLogin: features.passkeyLogin });
  await app.register(ssoIdentityRoutes, { ssoLogin: features.ssoLogin });
};
