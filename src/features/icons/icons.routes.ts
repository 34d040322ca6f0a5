import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { access, type Authenticator, enforceAccessRules } from '../../http/access.js';
import { apiErrorHandler } from '../../http/error-handler.js';
import { BadRequest, NotFound, TooManyRequests } from '../../http/errors.js';
import { DEFAULT_ICON } from './default-icon.js';
import { parseIconDomain } from './icon-domain.js';
import type { Icons } from './icons.service.js';

const tags = ['Icons'];
const anonymous = { config: { access: access.anonymous } };
const Image = Type.Unsafe<Buffer>({ type: 'string', format: 'binary', description: 'The icon (PNG, ICO, JPEG, GIF or WebP)' });
const Redirect = Type.Null({ description: 'Redirect to the configured icon service (Location)' });
const ChangePasswordUriResponse = Type.Object({ uri: Type.Union([Type.String(), Type.Null()], { description: "The site's /.well-known/change-password URL, or null when it has none that can be trusted" }) });

export interface IconsRouteOptions {
  icons: Icons;
  authenticate: Authenticator;
}

/** The Bitwarden icons service, at `/icons` beside the API: anonymous, as the clients call it without a token. */
export const iconsRoutes: FastifyPluginAsyncTypebox<IconsRouteOptions> = async (app, { icons, authenticate }) => {
  enforceAccessRules(app, authenticate);
  // Registered before the app sets its own, so the API's error envelope is set here too.
  app.setErrorHandler(apiErrorHandler);

  app.get(
    '/:domain/icon.png',
    {
      ...anonymous,
      schema: {
        summary: "A website's icon",
        description:
          "The icon the clients show beside a login item for its website's domain. ICONS_SERVICE=internal fetches it from the site (public addresses only, within size and time limits) and caches it; a site without one gets a generic globe, as from the official icons service. A redirect to the configured public service otherwise; 404 when icons are off.",
        tags,
        params: Type.Object({ domain: Type.String({ maxLength: 300 }) }),
        response: { 200: Image, 301: Redirect, 302: Redirect, 307: Redirect, 308: Redirect },
      },
    },
    async (request, reply) => {
      const parsed = parseIconDomain(request.params.domain);
      if ('problem' in parsed) throw BadRequest.field('domain', `The domain ${parsed.problem}.`);
      const answer = await icons.icon(parsed.domain);
      switch (answer.kind) {
        case 'off':
          throw new NotFound('Icons are turned off on this server.');
        case 'busy':
          throw new TooManyRequests('Too many icon lookups right now. Try again in a minute.', 60);
        case 'redirect':
          return reply.header('cache-control', `public, max-age=${answer.maxAgeSeconds}`).redirect(answer.location, answer.status);
        case 'none':
          return reply.type('image/png').header('cache-control', `public, max-age=${answer.maxAgeSeconds}`).send(DEFAULT_ICON);
        case 'icon':
          return reply
            .type(answer.contentType)
            .header('cache-control', `public, max-age=${answer.maxAgeSeconds}`)
            .header('x-content-type-options', 'nosniff')
            .send(answer.body);
      }
    },
  );

  app.get(
    '/change-password-uri',
    {
      ...anonymous,
      schema: {
        summary: "A website's change-password page",
        description:
          "The official icons service's change-password-uri: the site's /.well-known/change-password URL when the site serves one and does not answer 200 to paths that do not exist, else null (the clients then open the login's own URL). Null as well when ICONS_SERVICE is not internal.",
        tags,
        querystring: Type.Object({ uri: Type.Optional(Type.String({ maxLength: 2048 })) }),
        response: { 200: ChangePasswordUriResponse },
      },
    },
    async (request) => {
      const raw = request.query.uri?.trim() ?? '';
      if (raw === '') throw BadRequest.field('uri', 'The uri field is required.');
      const withScheme = /^https?:\/\//i.test(raw) ? raw : `https://${raw}`;
      let host: string;
      try {
        host = new URL(withScheme).hostname.replace(/^\[|\]$/g, '');
      } catch {
        throw BadRequest.field('uri', 'The uri is not a valid URL.');
      }
      const parsed = parseIconDomain(host);
      if ('problem' in parsed) throw BadRequest.field('uri', `The uri's host ${parsed.problem}.`);
      const uri = await icons.changePasswordUri(parsed.domain);
      if (uri === undefined) throw new TooManyRequests('Too many lookups right now. Try again in a minute.', 60);
      return { uri };
    },
  );
};
