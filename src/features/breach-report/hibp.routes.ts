import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { access } from '../../http/access.js';
import { userCaller } from '../../http/request-context.js';
import type { RouteDoc } from '../../http/route-docs.js';
import type { BreachLookup } from './hibp.service.js';

const tags = ['Reports'];

const docs = {
  breach: {
    summary: 'Look an account up in Have I Been Pwned',
    description:
      "The web vault's data breach report. With HIBP_API_KEY set, asks Have I Been Pwned (`breachedaccount/{username}`) with the server's key, which never leaves the server, and answers its list of breaches as it gives it; 404 when it lists none. Answers are kept briefly (HIBP_CACHE_SECONDS); each user may make RATE_LIMIT_HIBP lookups. Without a key, or when the upstream fails, 400 (the official server's answer, which the web vault shows as an error rather than as no breaches). Access: any signed-in user (`user`).",
  },
} satisfies Record<string, RouteDoc>;

const BreachQuery = Type.Object({ username: Type.String({ minLength: 1, maxLength: 256, description: 'The email address or username to look up.' }) });

/** Have I Been Pwned breach lookups ({base_url}/hibp/breach). */
export const hibpRoutes: FastifyPluginAsyncTypebox<{ lookup: BreachLookup }> = async (app, { lookup }) => {
  app.get(
    '/hibp/breach',
    {
      config: { access: access.user, callerLimit: 'hibp' },
      schema: { tags, ...docs.breach, querystring: BreachQuery, response: { 200: Type.Array(Type.Unknown(), { description: "Have I Been Pwned's breach models, as it answers them" }) } },
    },
    async (request) => lookup.breaches(userCaller(request), request.query.username),
  );
};
