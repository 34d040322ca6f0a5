import type { SwaggerTransformObject } from '@fastify/swagger';
import Fastify, { type FastifyInstance, type FastifyPluginAsync, type FastifySchema, type RouteOptions } from 'fastify';
import { Type } from 'typebox';
import { access, enforceAccessRules, type Authenticator } from './access.js';
import { apiErrorHandler } from './error-handler.js';
import { NotFound } from './errors.js';
import { STRONGROOM_VERSION } from '../shared/version.js';

/**
 * The API documentation (`API_DOCS_ENABLED`): Swagger UI at `/docs` and the OpenAPI document at
 * `/docs/json`, built from the route schemas.
 *
 * Its plugins (@fastify/swagger, @fastify/swagger-ui and what they bring: a YAML library, a static
 * file server) are loaded on the first request under `/docs`, not at start: an idle server that is
 * never asked for its docs does not hold them (about 3 MB; docs/benchmarks.md, lean section). At
 * start the server only records its routes as they are registered; the first request builds a
 * small Fastify instance of its own that registers the plugins and the recorded routes (their
 * schemas, with a handler that answers 404), and every request under `/docs` is answered by that
 * instance.
 */

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
  { name: 'Billing', description: 'What the web vault\'s billing and subscription pages read: plans, billing metadata, an organization\'s subscription or license, and the account\'s storage.' },
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
    name: 'Emergency access',
    description: 'Trusted emergency contacts: a grantor names a contact who, after a wait the grantor may cut short or refuse, may view or take over the account. Free for every account.',
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
      'What the web vault asks about features Strongroom does not offer (cloud billing connections, user licenses): answered as a self-hosted server without them answers, so the web vault\'s pages load.',
  },
  {
    name: 'Icons',
    description: 'The icons service at `/icons`: the website icons the clients show beside login items, and the change-password page finder behind the "change this at-risk password" link.',
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

const PREFIX = '/docs';

/** Headers of the inner answer about its own connection and time: the outer server sets its own. */
const NOT_PASSED_ON = new Set(['connection', 'keep-alive', 'transfer-encoding', 'date']);

export interface ApiDocs {
  /**
   * Serves `/docs`. Register it after every documented route and after the app's error handler
   * (its 404s and errors are the app's own).
   */
  routes: FastifyPluginAsync<{ authenticate: Authenticator }>;
}

/**
 * Starts recording the routes `app` registers from now on (call it before any of them) and returns
 * the plugin that serves the documentation of those routes.
 */
export function recordApiDocs(app: FastifyInstance): ApiDocs {
  const recorded: RecordedRoute[] = [];
  app.addHook('onRoute', (route) => {
    // The document leaves out HEAD routes (Fastify adds one to every GET) and hidden ones, /docs's own among them.
    // The route itself, which later hooks complete (access rules add `security`), and its responses
    // as written: a later hook gives Fastify the success schema under another key (serialization.ts).
    if (route.method !== 'HEAD' && route.schema?.hide !== true) recorded.push({ route, response: route.schema?.response });
  });
  let inner: Promise<FastifyInstance> | undefined;
  const innerInstance = () => {
    inner ??= buildDocsInstance(app, recorded).catch((error: unknown) => {
      inner = undefined; // the next request tries again
      throw error;
    });
    return inner;
  };

  const routes: ApiDocs['routes'] = async (docs, { authenticate }) => {
    enforceAccessRules(docs, authenticate);
    docs.addHook('onClose', async () => {
      const built = await inner?.catch(() => undefined);
      await built?.close();
    });
    // Whatever the inner instance answered (pages, files, redirects, 304s), passed on as it is.
    const schema: FastifySchema = { hide: true, response: { default: Type.Unknown({ description: 'Swagger UI, its files, or the OpenAPI document (JSON or YAML)' }) } };
    for (const url of [PREFIX, `${PREFIX}/*`]) {
      docs.get(url, { config: { access: access.anonymous }, schema, exposeHeadRoute: true }, async (request, reply) => {
        const instance = await innerInstance();
        // Asked as a GET even for a HEAD: the inner answer's length is then the real one, and
        // Fastify's HEAD route here sends its headers without the body. The body is streamed
        // through, not collected: Swagger UI's script alone is 1.5 MB.
        const res = await instance.inject({ method: 'GET', url: request.url, headers: request.headers, payloadAsStream: true });
        // What the inner instance does not know gets this server's own 404.
        if (res.statusCode === 404) throw new NotFound();
        for (const [name, value] of Object.entries(res.headers)) {
          if (value !== undefined && !NOT_PASSED_ON.has(name)) void reply.header(name, value);
        }
        return reply.code(res.statusCode).send(res.stream());
      });
    }
  };
  return { routes };
}

/**
 * The plugins and the recorded routes' schemas, in an instance that never listens. Requests reach
 * it only through the routes above; one for a documented route (`/docs/../api/alive`) gets a 404.
 * Its errors are logged and answered as the app's are.
 */
interface RecordedRoute {
  route: RouteOptions;
  response: unknown;
}

async function buildDocsInstance(app: FastifyInstance, recorded: readonly RecordedRoute[]): Promise<FastifyInstance> {
  const [{ default: swagger }, { default: swaggerUi }] = await Promise.all([import('@fastify/swagger'), import('@fastify/swagger-ui')]);
  const { routerOptions } = app.initialConfig;
  const instance = Fastify({
    loggerInstance: app.log.child({ component: 'api-docs' }),
    disableRequestLogging: true, // the app logs the request that asked
    exposeHeadRoutes: false, // asked with GET only
    ...(routerOptions ? { routerOptions } : {}),
  });
  instance.setErrorHandler(apiErrorHandler);
  // The recorded routes' handlers answer 404: nothing to check or encode.
  instance.setValidatorCompiler(() => () => true);
  instance.setSerializerCompiler(() => (data) => JSON.stringify(data));
  await instance.register(swagger, {
    openapi: {
      info: { title: 'Strongroom', version: STRONGROOM_VERSION, description: 'Bitwarden-compatible vault, organization and secrets server.' },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } } },
      tags: API_DOC_TAGS.map((tag) => ({ ...tag })),
    },
    transformObject: onlyUsedTags,
  });
  for (const { route, response } of recorded) {
    const schema = route.schema ? { ...route.schema, ...(response === undefined ? {} : { response }) } : undefined;
    instance.route({ method: route.method, url: route.url, ...(schema ? { schema } : {}), ...(route.config ? { config: route.config } : {}), handler: notDocs });
  }
  await instance.register(swaggerUi, { routePrefix: PREFIX });
  await instance.ready();
  return instance;
}

function notDocs(): never {
  throw new NotFound();
}
