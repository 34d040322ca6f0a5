import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { access } from '../../http/access.js';
import { userCaller, type UserCaller } from '../../http/request-context.js';

/**
 * GET {base_url}/ciphers/has-unassigned-ciphers: the web vault's vault page asks it to decide
 * whether to show its "unassigned items" banner to organization owners and admins.
 */
export const unassignedCipherRoutes: FastifyPluginAsync<{ hasUnassignedItems: (caller: UserCaller) => Promise<boolean> }> = async (
  app,
  { hasUnassignedItems },
) => {
  app.get(
    '/ciphers/has-unassigned-ciphers',
    {
      config: { access: access.user },
      schema: {
        summary: 'Unassigned organization items?',
        description: 'true when an organization the caller owns or administers holds an item (not in the trash) that is in no collection.',
        tags: ['Items'],
        response: { 200: Type.Boolean() },
      },
    },
    async (request) => hasUnassignedItems(userCaller(request)),
  );
};
