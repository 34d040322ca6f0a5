import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { access } from '../../http/access.js';
import { ServiceUnavailable, TooManyRequests } from '../../http/errors.js';
import { clientContext, userCaller } from '../../http/request-context.js';
import { AuthorizeError, SsoPageError, UntrustedRedirect, type SsoLogin } from './sso-login.service.js';
import { SSO_PAGE_CSP, ssoErrorPage } from './sso-login.pages.js';

// Single sign-on is a way of logging in: its routes sit with the identity service's, and the
// account's user identifier with the account's.
const tags = ['Identity'];
const Html = Type.String({ description: 'A page naming the problem and how to start again' });
const Redirect = Type.Null({ description: 'Redirect (Location)' });
const anonymous = { config: { access: access.anonymous } };

/** Errors in the browser become a page; everything else goes to the service's error handler. */
function page(reply: FastifyReply, error: unknown): FastifyReply {
  let status: number;
  let message: string;
  if (error instanceof AuthorizeError) return reply.header('cache-control', 'no-store').redirect(error.location(), 302);
  if (error instanceof UntrustedRedirect) [status, message] = [400, error.message];
  else if (error instanceof SsoPageError) [status, message] = [error.status, error.message];
  else if (error instanceof TooManyRequests || error instanceof ServiceUnavailable) {
    [status, message] = [error.statusCode, error.message];
    if (error.retryAfterSeconds) void reply.header('retry-after', String(error.retryAfterSeconds));
  } else throw error;
  return reply.code(status).header('content-type', 'text/html; charset=utf-8').header('cache-control', 'no-store').header('content-security-policy', SSO_PAGE_CSP).send(ssoErrorPage(message));
}

/** The identity service's part: `/sso/prevalidate` and `/connect/authorize` ({auth_url}). */
export const ssoIdentityRoutes: FastifyPluginAsync<{ ssoLogin: SsoLogin }> = async (app, { ssoLogin }) => {
  app.get(
    '/sso/prevalidate',
    {
      ...anonymous,
      schema: {
        tags,
        summary: 'Prevalidate an SSO identifier',
        description: "Answers a short-lived, signed `token` (the ssoToken of the authorize request) naming the organization whose SSO identifier `domainHint` is, when its SSO is on; 400 `Invalid SSO identifier` otherwise. Access: anonymous.",
        querystring: Type.Object({ domainHint: Type.Optional(Type.String({ maxLength: 300 })) }),
        response: { 200: Type.Object({ token: Type.String() }) },
      },
    },
    async (request) => ssoLogin.prevalidate((request.query as { domainHint?: string }).domainHint),
  );

  app.get(
    '/connect/authorize',
    {
      ...anonymous,
      schema: {
        tags,
        summary: 'Start an SSO login',
        description:
          "The OAuth authorization endpoint of an SSO login: `client_id` (an official client), its `redirect_uri`, `response_type=code`, `scope=api offline_access`, `code_challenge` with `code_challenge_method=S256`, `state`, `domain_hint` (the organization's SSO identifier), `ssoToken` (from prevalidate) and optionally `user_identifier` (to link a signed-in account). Redirects to the organization's identity provider; a bad request is a 400 page until the redirect_uri is known good, then a redirect back with `error`. Throttled per client address. Access: anonymous.",
        querystring: Type.Object({}, { additionalProperties: Type.String({ maxLength: 4000 }) }),
        response: { 302: Redirect, 400: Html, 429: Html, 502: Html, 503: Html },
      },
    },
    async (request, reply) => {
      try {
        const location = await ssoLogin.authorize(request.query as Record<string, string | undefined>, clientContext(request));
        return await reply.header('cache-control', 'no-store').redirect(location, 302);
      } catch (error) {
        return page(reply, error);
      }
    },
  );
};

/**
 * The callback at `PUBLIC_URL/sso/oidc-signin`, the official self-hosted path, so that an
 * identity provider's settings for a Bitwarden server carry over; GET, and POST for form_post.
 */
export const ssoCallbackRoutes: FastifyPluginAsync<{ ssoLogin: SsoLogin }> = async (app, { ssoLogin }) => {
  const Params = Type.Object({}, { additionalProperties: Type.String({ maxLength: 8000 }) });
  const schema = (method: string) => ({
    tags,
    summary: method === 'GET' ? "Take the identity provider's answer" : "Take the identity provider's answer (form post)",
    description:
      "Where the organization's identity provider sends the browser back (`code`, `state`, or `error`): the code is exchanged and the id_token checked, the account found, linked or made (just-in-time), and the browser sent on to the client's redirect_uri with Strongroom's own code. A problem is a page naming it. Access: anonymous.",
    response: { 302: Redirect, 400: Html, 403: Html, 409: Html, 429: Html, 502: Html, 503: Html },
  });
  const handle = async (params: Record<string, string | undefined>, request: Parameters<typeof clientContext>[0] & { validationError?: Error }, reply: FastifyReply) => {
    try {
      // Malformed answers are shown in the browser like any other problem, not as JSON.
      if (request.validationError) throw new SsoPageError(`The identity provider's answer is malformed (${request.validationError.message.slice(0, 200)}).`);
      const location = await ssoLogin.callback(params, clientContext(request));
      return await reply.header('cache-control', 'no-store').redirect(location, 302);
    } catch (error) {
      return page(reply, error);
    }
  };
  app.get('/oidc-signin', { ...anonymous, attachValidation: true, schema: { ...schema('GET'), querystring: Params } }, async (request, reply) => handle(request.query as Record<string, string>, request, reply));
  app.post(
    '/oidc-signin',
    {
      ...anonymous,
      attachValidation: true,
      schema: { ...schema('POST'), body: Params, consumes: ['application/x-www-form-urlencoded'] },
      // A body refused before the handler runs (too large, another content type) is shown as a page too.
      errorHandler: (error: { statusCode?: number }, _request, reply) => {
        const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 400;
        void page(reply, new SsoPageError("The identity provider's answer could not be read: it is too large or not a form post.", status));
      },
    },
    async (request, reply) => handle((request.body ?? {}) as Record<string, string>, request, reply),
  );
  app.get(
    '/oidc-signedout',
    { ...anonymous, schema: { tags, summary: 'Signed out of the identity provider', description: 'Where an identity provider may send the browser after signing out: a plain page. Access: anonymous.', response: { 200: Html } } },
    async (_request, reply) =>
      reply.header('content-type', 'text/html; charset=utf-8').header('content-security-policy', "default-src 'none'").send('<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Signed out</title></head><body><p>You are signed out of single sign-on. You may close this page.</p></body></html>'),
  );
};

/** The API's part: `GET /accounts/sso/user-identifier`. */
export const ssoAccountRoutes: FastifyPluginAsync<{ ssoLogin: SsoLogin }> = async (app, { ssoLogin }) => {
  app.get(
    '/accounts/sso/user-identifier',
    {
      config: { access: access.user },
      schema: {
        tags: ['Accounts'],
        summary: 'Get an SSO user identifier',
        description: "A short-lived `<user id>,<token>` naming the caller, for the `user_identifier` of an SSO login that links this account to the organization's identity provider. Access: user.",
        response: { 200: Type.String() },
      },
    },
    async (request, reply) => {
      const caller = userCaller(request);
      // The clients read it as JSON: a quoted string.
      return reply.header('cache-control', 'no-store').type('application/json; charset=utf-8').send(JSON.stringify(await ssoLogin.userIdentifier(caller.userId)));
    },
  );
};
