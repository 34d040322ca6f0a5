import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import formbody from '@fastify/formbody';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, { type FastifyInstance } from 'fastify';
import type { DestinationStream } from 'pino';
import type { Config, ServiceName } from './config/config.js';
import { systemClock, type Clock } from './clock.js';
import type { Database } from './db/database.js';
import { apiErrorHandler } from './http/error-handler.js';
import { NotFound } from './http/errors.js';
import { validatorCompiler } from './http/validation.js';
import { serializerCompiler } from './http/serialization.js';
import { loggerOptions } from './logging.js';
import { apiService } from './services/api.js';
import { eventsService } from './services/events.js';
import { identityService } from './services/identity.js';
import { notificationsService } from './services/notifications.js';
import type { ServiceOptions } from './services/service-options.js';
import { webVaultRoutes } from './features/web-vault/web-vault.routes.js';
import { createFeatures } from './wiring.js';

export interface AppOptions {
  config: Config;
  database: Database;
  clock?: Clock;
  /** Where logs go (stdout by default). */
  logStream?: DestinationStream;
}

const SERVICES = { api: apiService, identity: identityService, events: eventsService, notifications: notificationsService };

export const SERVICE_TITLES: Record<ServiceName, string> = {
  api: 'API service',
  identity: 'Identity service',
  events: 'Events service',
  notifications: 'Notifications hub',
};

/** Assembles the server: the configured services, each under its prefix or alone at `/`. */
export async function buildApp({ config, database, clock = systemClock, logStream }: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    logger: logStream ? { ...loggerOptions(config.logLevel), stream: logStream } : loggerOptions(config.logLevel),
    genReqId: () => randomUUID(),
    bodyLimit: config.bodyLimitBytes,
    trustProxy: config.trustProxy,
    routerOptions: { ignoreTrailingSlash: true, caseSensitive: false },
    ...(config.tlsCertFile && config.tlsKeyFile
      ? { https: { cert: readFileSync(config.tlsCertFile), key: readFileSync(config.tlsKeyFile) } }
      : {}),
  });
  app.decorateRequest('principal', null);
  app.decorateRequest('membership', null);
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.addHook('onSend', async (request, reply) => {
    void reply.header('x-request-id', request.id);
    // While shutting down, a kept-alive connection would hold the drain open until it times out.
    if (!app.server.listening) void reply.header('connection', 'close');
  });

  // Clients send bodiless commands (PUT /ciphers/{id}/delete) with a JSON content type.
  const defaultJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body.toString();
    if (text.trim() === '') {
      done(null, undefined);
      return;
    }
    void defaultJson(request, text, done);
  });
  await app.register(formbody);

  if (config.apiDocsEnabled) {
    await app.register(swagger, {
      openapi: {
        info: { title: 'Strongroom', version: '1.0.0', description: 'Bitwarden-compatible vault, organization and secrets server.' },
        components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } } },
      },
    });
  }

  const features = createFeatures({ config, database, clock });
  app.addHook('onClose', async () => features.close());
  const options: ServiceOptions = { config, clock, authenticate: features.authenticate, features };
  for (const name of config.services) {
    await app.register(SERVICES[name], { ...options, prefix: config.servicePrefixes ? `/${name}` : '' });
  }

  // The web vault needs /api and /identity on its own origin, so it is served only beside them;
  // a service running alone owns its root.
  if (config.servicePrefixes) await app.register(webVaultRoutes, { config, authenticate: features.authenticate });

  app.setErrorHandler(apiErrorHandler);
  // A service alone at the root answers its own 404s; with prefixes, paths outside them land here.
  if (config.servicePrefixes) {
    app.setNotFoundHandler(() => {
      throw new NotFound();
    });
  }
  if (config.apiDocsEnabled) await app.register(swaggerUi, { routePrefix: '/docs' });
  return app;
}
