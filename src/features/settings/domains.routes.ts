import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { access } from '../../http/access.js';
import { userCaller } from '../../http/request-context.js';
import { DomainsQuery, DomainsResponse, UpdateDomainsBody } from './domains.schemas.js';
import type { DomainSettings } from './domains.service.js';

const tags = ['Settings'];

/** {base_url}/settings/domains: the web vault's Domain rules page. */
export const domainSettingsRoutes: FastifyPluginAsyncTypebox<{ domains: DomainSettings }> = async (app, { domains }) => {
  const user = { config: { access: access.user } };

  app.get(
    '/settings/domains',
    {
      ...user,
      schema: {
        summary: 'Equivalent domains',
        description: "The caller's equivalent-domain groups. Bitwarden's global groups are not served yet (an empty list).",
        tags,
        querystring: DomainsQuery,
        response: { 200: DomainsResponse },
      },
    },
    async (request) => domains.get(userCaller(request)),
  );

  // POST is the official deprecated alias of PUT.
  for (const method of ['PUT', 'POST'] as const) {
    app.route({
      method,
      url: '/settings/domains',
      ...user,
      schema: {
        summary: 'Replace the equivalent domains',
        description: 'Replaces the groups (lower-cased, duplicates and groups of fewer than two domains dropped) and the excluded global groups.',
        tags,
        body: UpdateDomainsBody,
        response: { 200: DomainsResponse },
      },
      handler: async (request) => domains.update(userCaller(request), request.body),
    });
  }
};
