import { randomUUID } from 'node:crypto';
import formbody from '@fastify/formbody';
import Fastify, { type FastifyInstance } from 'fastify';
import type { DestinationStream } from 'pino';
import type { Config, ServiceName } from './config/config.js';
import { systemClock, type Clock } from './shared/clock.js';
import type { Database } from './db/database.js';
import { apiErrorHandler, frameworkErrorHandler } from './http/error-handler.js';
import { NotFound } from './http/errors.js';
import { limitConnectionsPerAddress } from './http/connection-limits.js';
import { recordApiDocs } from './http/api-docs.js';
import { refuseNulCharacters } from './http/nul-characters.js';
import { limitRequestBodies, parseJsonBody } from './http/request-bodies.js';
import { validatorCompiler } from './http/validation.js';
import { serializerCompiler, successSchemaUnder2xx } from './http/serialization.js';
import { loggerOptions, OneLinePerRequest } from './logging.js';
import { apiService } from './services/api.js';
import { eventsService } from './services/events.js';
import { identityService } from './services/identity.js';
import { ssoService } from './services/sso.js';
import { notificationsService } from './services/notifications.js';
import type { ServiceOptions } from './services/service-options.js';
import { webVaultRoutes } from './features/web-vault/web-vault.routes.js';
import { iconsRoutes } from './features/icons/icons.routes.js';
import type { Pushes } from './platform/push/pushes.js';
import type { Outbox } from './features/push-delivery/channel.js';
import { createFeatures, type Features } from './wiring.js';
import { installCallerLimits, installIpRules, installPublicApiLimit } from './features/rate-limits/rate-limit.hooks.js';
import { metricsRoutes } from './features/operations/metrics.routes.js';
import type { Tracing } from './features/operations/tracing-setup.js';
import { SECRETS_KEY_MISMATCH } from './features/sso/secrets-key-check.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The app's wired features (tests reach `features.pushes` through it). */
    features: Features;
  }
}

export interface AppOptions {
  config: Config;
  database: Database;
  clock?: Clock;
  /** Where logs go (stdout by default). */
  logStream?: DestinationStream;
  /** Serve HTTPS with this certificate (chain) and key, PEM; plain HTTP without (see src/tls). */
  https?: { cert: string | Buffer; key: string | Buffer };
  /** Send pushes here instead of to the app's own hub (tests record them). */
  pushes?: Pushes;
  /** Queue the channels' other messages here (relay registrations; tests record them). */
  outbox?: Outbox;
  /** OpenTelemetry traces (OTEL_ENABLED; startTracing), also given to the database for its spans. */
  tracing?: Tracing | null;
}

const SERVICES = { api: apiService, identity: identityService, events: eventsService, notifications: notificationsService };

export const SERVICE_TITLES: Record<ServiceName, string> = {
  api: 'API service',
  identity: 'Identity service',
  events: 'Events service',
  notifications: 'Notifications hub',
};

/**
 * How long a client may take to send its headers and its whole request (Node's own checks,
 * run every second rather than every 30 s, so a slow client is cut off on time).
 */
function serverTimeouts(config: Config) {
  const requestTimeout = config.requestTimeoutSeconds * 1000;
  return { requestTimeout, headersTimeout: Math.min(config.headersTimeoutSeconds * 1000, requestTimeout), connectionsCheckingInterval: 1000 };
}

/** Assembles the server: the configured services, each under its prefix or alone at `/`. */
export async function buildApp({ config, database, clock = systemClock, logStream, https, pushes, outbox, tracing }: AppOptions): Promise<FastifyInstance> {
  const timeouts = serverTimeouts(config);
  const app = Fastify({
    logger: logStream ? { ...loggerOptions(config.logLevel), stream: logStream } : loggerOptions(config.logLevel),
    logController: new OneLinePerRequest(),
    genReqId: () => randomUUID(),
    bodyLimit: config.bodyLimitBytes,
    trustProxy: config.trustProxy,
    routerOptions: { ignoreTrailingSlash: true, caseSensitive: false },
    // No HEAD twin for every GET: the official server's API routes answer GET only, and each
    // twin is a route of its own (about 1.3 MB in all; issue #43). The routes a monitor or a
    // browser may ask with HEAD say `exposeHeadRoute: true`.
    exposeHeadRoutes: false,
    requestTimeout: timeouts.requestTimeout,
    keepAliveTimeout: config.keepAliveTimeoutSeconds * 1000,
    // A request already on a connection when shutdown begins is served, not refused with 503: the
    // listener is closed, so new connections go to the other instances, and every answer while
    // draining says `Connection: close` (the onSend hook below). A rolling restart behind a load
    // balancer then fails nothing (test/fleet); stopOnSignals bounds the drain.
    return503OnClosing: false,
    // What the router refuses before any hook runs (a path that is not UTF-8) gets our envelope too.
    frameworkErrors: frameworkErrorHandler,
    ...(https ? { https: { cert: https.cert, key: https.key, ...timeouts } } : { http: timeouts }),
  });
  if (!config.trustProxy) limitConnectionsPerAddress(app.server, config.maxConnectionsPerIp);
  // First of all hooks, so that everything a request runs is inside its span.
  tracing?.install(app);
  app.decorateRequest('principal', null);
  app.decorateRequest('membership', null);
  app.setValidatorCompiler(validatorCompiler);
  refuseNulCharacters(app);
  app.setSerializerCompiler(serializerCompiler);
  app.addHook('onSend', async (request, reply) => {
    void reply.header('x-request-id', request.id);
    // While shutting down, a kept-alive connection would hold the drain open until it times out.
    if (!app.server.listening) void reply.header('connection', 'close');
  });

  app.addContentTypeParser('application/json', { parseAs: 'string' }, parseJsonBody(app.getDefaultJsonParser('error', 'error')));
  limitRequestBodies(app, config);
  await app.register(formbody);

  // The API docs record every route registered from here on; their plugins load on the first request for them.
  const apiDocs = config.apiDocsEnabled ? recordApiDocs(app) : null;
  successSchemaUnder2xx(app);

  const features = await createFeatures({ config, database, clock, log: app.log, ...(pushes ? { pushes } : {}), ...(outbox ? { outbox } : {}) });
  app.decorate('features', features);
  app.addHook('onClose', async () => features.close());
  // Before every route, so that the request counters see them all.
  features.metrics?.install(app);
  // Before the services, so that both see every route and request registered after them.
  installIpRules(app, features.rateLimits);
  if (config.services.includes('api')) installPublicApiLimit(app, features.rateLimits, `${config.servicePrefixes ? '/api' : ''}/public`);
  installCallerLimits(app, features.rateLimits);
  features.eventRetention.start((error) => app.log.error({ err: error }, 'event retention failed; it runs again at the next interval'));
  if (config.services.includes('api')) features.sendPurge.start((error) => app.log.error({ err: error }, 'Send purge failed; it runs again at the next interval'));
  if (config.services.includes('api')) features.fileSweeper.start((error) => app.log.error({ err: error }, 'file sweep failed; it runs again at the next interval'));
  if (config.services.includes('api')) features.emergencyTimeout.start((error) => app.log.error({ err: error }, 'emergency access timeout failed; it runs again at the next interval'));
  if (config.services.includes('api')) features.emergencyReminder.start((error) => app.log.error({ err: error }, 'emergency access reminder failed; it runs again at the next interval'));
  features.cacheRelease.start();
  // A fleet without one shared SECRETS_KEY: said at start, not first at a failing SSO login.
  if ((await features.secretsKeyCheck()) === 'differs') app.log.error({ setting: 'SECRETS_KEY' }, SECRETS_KEY_MISMATCH);
  // Forwarding to integrations runs in the background of a serving instance.
  features.integrations.start();
  features.pushDelivery.outbox.start();
  const options: ServiceOptions = { config, clock, authenticate: features.authenticate, features };
  for (const name of config.services) {
    await app.register(SERVICES[name], { ...options, prefix: config.servicePrefixes ? `/${name}` : '' });
  }

  // The SSO callback at PUBLIC_URL/sso, where the official self-hosted server has it, beside the identity service.
  if (config.services.includes('identity')) await app.register(ssoService, { ...options, prefix: '/sso' });

  // The icons service beside the API, where the clients look for it (`{base}/icons`).
  if (config.services.includes('api')) await app.register(iconsRoutes, { prefix: '/icons', icons: features.icons, authenticate: features.authenticate });
  if (features.metrics) await app.register(metricsRoutes, { config, metrics: features.metrics, authenticate: features.authenticate });

  // The web vault needs /api and /identity on its own origin, so it is served only beside them;
  // a service running alone owns its root.
  if (config.servicePrefixes) await app.register(webVaultRoutes, { config, authenticate: features.authenticate });
  // The operator's console: only while a token hash is configured and it is not turned off.
  if (config.adminToken && config.adminEnabled) {
    const { adminConsoleRoutes } = await import('./features/admin/admin.routes.js');
    await app.register(adminConsoleRoutes, { prefix: '/admin', config, database, features, clock, authenticate: features.authenticate });
  }

  app.setErrorHandler(apiErrorHandler);
  // A service alone at the root answers its own 404s; with prefixes, paths outside them land here.
  if (config.servicePrefixes) {
    app.setNotFoundHandler(() => {
      throw new NotFound();
    });
  }
  if (apiDocs) await app.register(apiDocs.routes, { authenticate: features.authenticate });
  return app;
}
