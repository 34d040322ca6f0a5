import type { FastifyPluginAsync } from 'fastify';
import { Type, type TSchema } from 'typebox';
import { access } from '../../http/access.js';
import { BadRequest } from '../../http/errors.js';
import { ErrorResponse } from '../../http/schemas.js';

/**
 * What the web vault's pages read or send for features Strongroom does not offer, answered as
 * the official self-hosted server answers an account or organization that uses none of them
 * (an empty list, a disabled flag, a refusal the page shows), so no page is left spinning on a
 * 404. Each row is one route; when a feature is built, its rows move to its own folder. Routes no
 * self-hosted page can reach stay unserved, with the gate named in test/official-routes.unserved.ts.
 */
interface NotOffered {
  method: 'GET' | 'POST';
  url: string;
  summary: string;
  description: string;
  /** The 200 body's schema; absent when the answer is always a 400. */
  body?: TSchema;
  answer: () => unknown;
}

const ROUTES: NotOffered[] = [
  {
    // The self-hosted organization's Billing > Subscription asks this first and offers billing
    // sync only on true; the official self-hosted server answers false without cloud communication.
    method: 'GET',
    url: '/organizations/connections/enabled',
    summary: 'Whether organization connections (billing sync, cloud SCIM) can be set up',
    description:
      'Strongroom does not talk to the Bitwarden cloud: always false, as a self-hosted server without cloud communication answers, so the page offers the license upload only. Access: any signed-in user (`user`).',
    body: Type.Boolean(),
    answer: () => false,
  },
  {
    // Settings > Subscription on a self-hosted web vault always shows "Update license", which
    // posts the file here; every Strongroom account already has premium, so there is nothing to
    // apply, and the dialog shows this message instead of failing on a 404.
    method: 'POST',
    url: '/accounts/license',
    summary: "Upload a premium license for the caller's account",
    description:
      'Premium is part of every account on this server, so no user license applies: always 400 with a message the "Update license" dialog shows (the official self-hosted server checks and applies a license bought from Bitwarden here). The body (multipart/form-data, the file in `license`) is not read. Access: any signed-in user (`user`).',
    answer: () => {
      throw BadRequest.field('license', 'Premium is included with every account on this server: there is no user license to upload.');
    },
  },
];

/** The largest body a refused upload may send; the license files the web vault uploads are a few kilobytes. */
const REFUSED_BODY_LIMIT = 1024 * 1024;

export const notOfferedRoutes: FastifyPluginAsync = async (app) => {
  // The license dialog sends multipart/form-data; it is read and dropped so the route answers its
  // own 400 rather than 415. The parser is scoped to this plugin, so other routes are unaffected.
  app.addContentTypeParser('multipart/form-data', { parseAs: 'buffer', bodyLimit: REFUSED_BODY_LIMIT }, (_request, _body, done) => done(null, undefined));

  for (const route of ROUTES) {
    app.route({
      method: route.method,
      url: route.url,
      config: { access: access.user },
      schema: {
        summary: route.summary,
        description: route.description,
        tags: ['Not yet offered'],
        response: route.body ? { 200: route.body } : { 400: ErrorResponse },
      },
      handler: async () => route.answer(),
    });
  }
};
