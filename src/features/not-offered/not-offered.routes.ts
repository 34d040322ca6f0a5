import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { access } from '../../http/access.js';
import { ListOf, list } from '../../http/schemas.js';

/**
 * Lists the web vault reads on its settings pages for features Strongroom does not offer yet.
 * Each answers the empty list the official server gives an account that uses none of them, so
 * the pages open instead of failing. When a feature is built, its routes move to its own folder.
 */
const EMPTY_LISTS = [
  {
    url: '/emergency-access/trusted',
    summary: 'Emergency contacts the caller trusts',
    description: 'Emergency access is not offered yet: always an empty list.',
  },
  {
    url: '/emergency-access/granted',
    summary: 'Accounts that trust the caller',
    description: 'Emergency access is not offered yet: always an empty list.',
  },
] as const;

export const notOfferedRoutes: FastifyPluginAsync = async (app) => {
  for (const route of EMPTY_LISTS) {
    app.get(
      route.url,
      {
        config: { access: access.user },
        schema: {
          summary: route.summary,
          description: route.description,
          tags: ['Not yet offered'],
          response: { 200: ListOf(Type.Object({}, { description: 'Never present yet' })) },
        },
      },
      async () => list([]),
    );
  }

  // The self-hosted organization's Billing sync settings ask this first; the official self-hosted
  // server answers false unless cloud communication is on, which Strongroom never does.
  app.get(
    '/organizations/connections/enabled',
    {
      config: { access: access.user },
      schema: {
        summary: 'Whether organization connections (billing sync, cloud SCIM) can be set up',
        description: 'Strongroom does not talk to the Bitwarden cloud: always false, as a self-hosted server without cloud communication answers.',
        tags: ['Not yet offered'],
        response: { 200: Type.Boolean() },
      },
    },
    async () => false,
  );
};
