import { relative, resolve, sep } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import type { Config } from '../../config/config.js';
import { access, enforceAccessRules, type Authenticator } from '../../http/access.js';
import { appIdDocument, FIDO_TRUSTED_APPS_TYPE } from './app-id.js';
import { iconServiceOrigin } from '../icons/icons.service.js';
import { StartupError } from '../../shared/startup-error.js';
import { LANDING_PAGE_CSP, renderLandingPage } from './landing-page.js';
import { linksLeavingFolder } from './outside-links.js';
import { cacheControlFor, COMMON_HEADERS, isConnectorPage, webVaultCsp } from './security-headers.js';
import { SSO_START_JS, SSO_START_PATH } from './sso-start.script.js';

const tags = ['Web vault'];
const anonymous = { config: { access: access.anonymous } };
const Html = Type.String({ description: 'HTML page' });

/** Paths owned by the services and the API documentation: never answered from the web vault folder. */
export const RESERVED_PREFIXES = ['api', 'identity', 'events', 'notifications', 'icons', 'docs', 'sso'] as const;

type WebVaultOptions = { config: Pick<Config, 'publicUrl' | 'dataDir' | 'webVaultDir' | 'iconsService'>; authenticate: Authenticator };

/**
 * The web vault's files at `/`. Each file in the folder becomes one route when the server
 * starts (no catch-all route), so a path outside the folder, a `..` path, a symbolic link that
 * leads out of the folder or a path under a service prefix can never be answered from it: they
 * fall through to the ordinary 404s.
 */
const webVaultFiles: FastifyPluginAsync<{ config: WebVaultOptions['config']; root: string }> = async (app, { config, root }) => {
  const iconOrigin = iconServiceOrigin(config.iconsService);
  const csp = webVaultCsp(config.publicUrl, iconOrigin ? [iconOrigin] : []);
  const leaving = linksLeavingFolder(root);
  if (leaving.includes('index.html')) throw new StartupError('WEB_VAULT_DIR', `${root}/index.html links outside the folder; unpack the web vault there as plain files`);
  await app.register(fastifyStatic, {
    root,
    wildcard: false,
    // `/` is our own route below: the plugin's index detection only finds the first index.html.
    index: false,
    serveDotFiles: false,
    // The generated app-id.json names this server; a copy shipped in the archive must not win.
    globIgnore: [...RESERVED_PREFIXES.map((prefix) => `${prefix}/**`), 'app-id.json', ...leaving.flatMap((link) => [link, `${link}/**`])],
    cacheControl: false,
    setHeaders(res, path) {
      const file = relative(root, path).split(sep).join('/');
      res.setHeader('cache-control', cacheControlFor(file));
      if (!isConnectorPage(file)) res.setHeader('content-security-policy', csp);
    },
  });

  app.get(
    '/',
    {
      ...anonymous,
      exposeHeadRoute: true,
      schema: {
        summary: 'Web vault',
        description: "The web vault's index.html. The vault routes with the URL fragment (#/vault), so no other path serves it.",
        tags,
        response: { 200: Html },
      },
    },
    (_request, reply) => reply.sendFile('index.html'),
  );
};

/** Routes of the root that are answered whether or not a web vault is installed. */
const rootPages: FastifyPluginAsyncTypebox<WebVaultOptions> = async (app, { config, authenticate }) => {
  enforceAccessRules(app, authenticate);
  app.addHook('onSend', async (_request, reply) => {
    if (!reply.hasHeader('cache-control')) void reply.header('cache-control', 'no-cache');
  });

  if (config.webVaultDir) {
    const AppId = Type.Object({
      trustedFacets: Type.Array(
        Type.Object({ version: Type.Object({ major: Type.Integer(), minor: Type.Integer() }), ids: Type.Array(Type.String()) }),
      ),
    });
    const document = appIdDocument(config.publicUrl);
    app.get(
      '/app-id.json',
      {
        ...anonymous,
        schema: {
          summary: 'FIDO AppID facets',
          description: "The trusted facets the web vault names for U2F security keys: this server's origin (PUBLIC_URL) and the official mobile apps.",
          tags,
          response: { 200: AppId },
        },
      },
      async (_request, reply) => {
        void reply.type(FIDO_TRUSTED_APPS_TYPE);
        return document;
      },
    );
    return;
  }

  // Rendered once, on the first request.
  let page: Promise<string> | undefined;
  app.get(
    '/',
    {
      ...anonymous,
      exposeHeadRoute: true,
      schema: {
        summary: 'Landing page',
        description: 'Shown when no web vault is installed: how to add one, create an account and log in with the CLI.',
        tags,
        response: { 200: Html },
      },
    },
    async (_request, reply) => {
      page ??= renderLandingPage({ publicUrl: config.publicUrl, defaultDir: resolve(config.dataDir, 'web-vault') });
      return reply.header('content-security-policy', LANDING_PAGE_CSP).header('cache-control', 'no-store').type('text/html; charset=utf-8').send(await page);
    },
  );

  // With a web vault installed, its own #/sso page starts single sign-on; this script is only the
  // landing page's stand-in for it.
  app.get(
    SSO_START_PATH,
    {
      ...anonymous,
      schema: {
        summary: 'Single sign-on start script',
        description:
          "The landing page's script: when the clients open `#/sso` (as `bw login --sso` does) it asks for the organization's SSO identifier and starts the login at /identity/connect/authorize, as the web vault's SSO page does. Served only when no web vault is installed.",
        tags,
        response: { 200: Type.String({ description: 'JavaScript' }) },
      },
    },
    async (_request, reply) => reply.type('text/javascript; charset=utf-8').send(SSO_START_JS),
  );
};

/**
 * The root of a server that runs its services under prefixes: the web vault when one is
 * installed (WEB_VAULT_DIR), otherwise a landing page.
 */
export const webVaultRoutes: FastifyPluginAsync<WebVaultOptions> = async (app, options) => {
  // Connector pages are framed by the apps (see isConnectorPage); everything else refuses frames.
  app.addHook('onSend', async (request, reply) => {
    for (const [name, value] of Object.entries(COMMON_HEADERS)) void reply.header(name, value);
    if (!isConnectorPage(request.url.split('?')[0] ?? '')) void reply.header('x-frame-options', 'SAMEORIGIN');
  });
  if (options.config.webVaultDir) await app.register(webVaultFiles, { config: options.config, root: options.config.webVaultDir });
  await app.register(rootPages, options);
};
