import { randomUUID } from 'node:crypto';
import formbody from '@fastify/formbody';
import type { SwaggerTransformObject } from '@fastify/swagger';
import Fastify, { type FastifyInstance } from 'fastify';
import type { DestinationStream } from 'pino';
import type { Config, ServiceName } from './config/config.js';
import { systemClock, type Clock } from './clock.js';
import type { Database } from './db/database.js';
import { apiErrorHandler, frameworkErrorHandler } from './http/error-handler.js';
import { NotFound } from './http/errors.js';
import { limitConnectionsPerAddress } from './http/connection-limits.js';
import { refuseNulCharacters } from './http/nul-characters.js';
import { validatorCompiler } from './http/validation.js';
import { serializerCompiler } from './http/serialization.js';
import { loggerOptions, OneLinePerRequest } from './logging.js';
import { apiService } from './services/api.js';
import { eventsService } from './services/events.js';
import { identityService } from './services/identity.js';
import { notificationsService } from './services/notifications.js';
import type { ServiceOptions } from './services/service-options.js';
import { webVaultRoutes } from './features/web-vault/web-vault.routes.js';
import type { Pushes } from './features/notifications/pushes.js';
import { createFeatures, type Features } from './wiring.js';
import { installIpRules, installPublicApiLimit } from './features/rate-limits/rate-limit.hooks.js';
import { metricsRoutes } from './features/operations/metrics.routes.js';
import type { Tracing } from './features/operations/tracing-setup.js';

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
  /** OpenTelemetry traces (OTEL_ENABLED; startTracing), also given to the database for its spans. */
  tracing?: Tracing | null;
}

const SERVICES = { api: apiService, identity: identityService, events: eventsService, notifications: notificationsService };

/**
 * The feature areas of the OpenAPI document, in the order Swagger UI at /docs shows them. Every
 * route's schema carries exactly one of these tags (src/app.openapi.test.ts checks it).
 */
export const API_DOC_TAGS = [
  { name: 'Health', description: 'Liveness (`/alive`, `/now`) on every service, and the `/healthz` health records and the Prometheus `/metrics` when enabled.' },
  { name: 'Configuration', description: 'The server configuration the official clients read before and after login.' },
  { name: 'Identity', description: 'Logging in (identity service): prelogin KDF settings, the OAuth 2.0 token endpoint and OpenID discovery.' },
  { name: 'Accounts', description: 'Registration and the signed-in user\'s own account: profile, keys, master password, API key, deletion.' },
  { name: 'Sync', description: 'The whole vault in one answer, as the clients cache it.' },
  { name: 'Folders', description: 'A user\'s own folders; names are encrypted by the client.' },
  {
    name: 'Items',
    description: 'Vault items (ciphers): personal items, their lifecycle (archive, trash, restore, delete), import, and organization items in collections.',
  },
  {
    name: 'Organizations',
    description: 'Organizations: creation, licenses, settings, leaving, deletion, API keys and storage.',
  },
  { name: 'Members', description: 'Organization membership: invitations, confirmation, roles and access, revocation, removal, account recovery details.' },
  { name: 'Groups', description: 'Groups of organization members, with the collections they reach.' },
  { name: 'Collections', description: 'Organization collections and who may reach them (members and groups).' },
  { name: 'Policies', description: 'Organization policies (master password, single organization, account recovery, ...).' },
  { name: 'Events', description: 'The audit log: client events, the organization\'s, a member\'s, an item\'s and your own events, and exports.' },
  { name: 'Security tasks', description: 'Tasks administrators give members to update at-risk passwords of organization items, and their metrics.' },
  { name: 'Reports', description: "Organization reports: the client's encrypted report of applications, members and passwords at risk, and its twelve metrics." },
  {
    name: 'Public API',
    description:
      "The organization public API under `/public`, for directory sync, scripts and SIEM pulls: members, groups, collections, policies, events, directory import and the subscription, with the organization's API key token.",
  },
  {
    name: 'Auth requests',
    description: 'Log in with a device: a new device asks, one of the user\'s logged-in devices approves it with the encrypted user key, and the new device logs in once with its access code.',
  },
  {
    name: 'Integrations',
    description: "Forwarding an organization's events to the tools it runs (webhooks, Slack, Microsoft Teams, Splunk HEC, Datadog), and the deliveries that failed.",
  },
  { name: 'Devices', description: 'The devices a user has logged in from, and the known-device check the login page makes.' },
  {
    name: 'Notifications',
    description:
      'The live notifications hub (SignalR over WebSocket at `/hub` and `/anonymous-hub`) the official apps keep open to hear about changes at once; the negotiate step for other SignalR clients.',
  },
  { name: 'Settings', description: 'A user\'s equivalent domains, which autofill treats as one site.' },
  {
    name: 'Send',
    description: 'Sharing a text or a file through a link that expires (Send): the owner\'s routes, and anonymous access by recipients with the link.',
  },
  { name: 'Secrets', description: 'Secrets Manager secrets: values encrypted by the client, their version history and the trash.' },
  { name: 'Projects', description: 'Secrets Manager projects, which group secrets and carry access to them.' },
  { name: 'Machine accounts', description: 'Secrets Manager machine accounts (the official "service accounts") and their access tokens.' },
  { name: 'Access policies', description: 'Who reaches Secrets Manager projects, secrets and machine accounts: people, groups and machine accounts.' },
  { name: 'Secrets Manager', description: 'Secrets Manager counts, import and export, and the events of secrets, projects and machine accounts.' },
  {
    name: 'Not yet offered',
    description:
      'Features Strongroom does not offer yet (emergency access): their lists answer empty, truthfully, so the web vault\'s pages load.',
  },
  { name: 'Web vault', description: 'The official web vault when a build of it is installed, or a page saying how to add one.' },
  {
    name: 'Two-step login',
    description: "A user's second factors (authenticator app, email codes), the recovery code, and the login page's request for an emailed code.",
  },
  {
    name: 'Admin console',
    description:
      "The operator's console at `/admin` (HTML pages and forms, not an API): sign-in with the admin token, users, organizations, events and diagnostics. Served only while ADMIN_TOKEN is set; see docs/admin-console.md.",
  },
] as const satisfies readonly { name: string; description: string }[];

export type ApiDocTag = (typeof API_DOC_TAGS)[number]['name'];

export const SERVICE_TITLES: Record<ServiceName, string> = {
  api: 'API service',
  identity: 'Identity service',
  events: 'Events service',
  notifications: 'Notifications hub',
};

function operationTags(operation: unknown): string[] {
  const tags = typeof operation === 'object' && operation !== null ? (operation as { tags?: unknown }).tags : undefined;
  return Array.isArray(tags) ? tags.filter((tag): tag is string => typeof tag === 'string') : [];
}

/** A service started alone serves only some feature areas: Swagger UI would show the others as empty groups. */
const onlyUsedTags: SwaggerTransformObject = (document) => {
  if (!('openapiObject' in document)) return document.swaggerObject;
  const { openapiObject } = document;
  const used = new Set(Object.values(openapiObject.paths ?? {}).flatMap((item) => Object.values(item ?? {}).flatMap(operationTags)));
  return { ...openapiObject, tags: openapiObject.tags?.filter((tag) => used.has(tag.name)) };
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
export async function buildApp({ config, database, clock = systemClock, logStream, https, pushes, tracing }: AppOptions): Promise<FastifyInstance> {
  const timeouts = serverTimeouts(config);
  const app = Fastify({
    logger: logStream ? { ...loggerOptions(config.logLevel), stream: logStream } : loggerOptions(config.logLevel),
    logController: new OneLinePerRequest(),
    genReqId: () => randomUUID(),
    bodyLimit: config.bodyLimitBytes,
    trustProxy: config.trustProxy,
    routerOptions: { ignoreTrailingSlash: true, caseSensitive: false },
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

  // The API docs' plugins are loaded only when the docs are served; the document itself is built on its first request.
  if (config.apiDocsEnabled) {
    const { default: swagger } = await import('@fastify/swagger');
    await app.register(swagger, {
      openapi: {
        info: { title: 'Strongroom', version: '1.0.0', description: 'Bitwarden-compatible vault, organization and secrets server.' },
        components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } } },
        tags: API_DOC_TAGS.map((tag) => ({ ...tag })),
      },
      transformObject: onlyUsedTags,
    });
  }

  const features = await createFeatures({ config, database, clock, log: app.log, ...(pushes ? { pushes } : {}) });
  app.decorate('features', features);
  app.addHook('onClose', async () => features.close());
  // Before every route, so that the request counters see them all.
  features.metrics?.install(app);
  // Before the services, so that both see every route and request registered after them.
  installIpRules(app, features.rateLimits);
  if (config.services.includes('api')) installPublicApiLimit(app, features.rateLimits, `${config.servicePrefixes ? '/api' : ''}/public`);
  features.eventRetention.start((error) => app.log.error({ err: error }, 'event retention failed; it runs again at the next interval'));
  if (config.services.includes('api')) features.sendPurge.start((error) => app.log.error({ err: error }, 'Send purge failed; it runs again at the next interval'));
  if (config.services.includes('api')) features.fileSweeper.start((error) => app.log.error({ err: error }, 'file sweep failed; it runs again at the next interval'));
  features.cacheRelease.start();
  // Forwarding to integrations runs in the background of a serving instance.
  features.integrations.start();
  const options: ServiceOptions = { config, clock, authenticate: features.authenticate, features };
  for (const name of config.services) {
    await app.register(SERVICES[name], { ...options, prefix: config.servicePrefixes ? `/${name}` : '' });
  }

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
  if (config.apiDocsEnabled) await app.register((await import('@fastify/swagger-ui')).default, { routePrefix: '/docs' });
  return app;
}
