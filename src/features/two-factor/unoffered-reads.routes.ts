import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { RouteDoc } from '../../http/route-docs.js';
import { BadRequest } from '../../http/errors.js';
import { EmptyResponse, IdParams, ListOf, list } from '../../http/schemas.js';
import type { OrgAccess } from '../../platform/access/org-access.js';
import { ProviderResponse } from './two-factor.schemas.js';

const tags = ['Two-step login'];

const docs = {
  organization: {
    summary: "An organization's two-step login providers",
    description:
      "The two-step login providers an organization sets for its members (the official server offers Duo there). This server offers none at organization level yet: always an empty list. Access: a confirmed owner or admin (the official OrganizationAdmin); anyone else gets 404, as the official server answers.",
  },
  organizationDuo: {
    summary: "An organization's Duo two-step login",
    description:
      "Reading (with the caller's secret), saving or removing the Duo settings an organization's members log in with. Organization-wide Duo calls Duo's service, which this server does not use, so no organization has it here: always 400 \"Duo two-step login is not offered by this server.\", the answer the account-level Duo routes give. Access: a confirmed member holding managePolicies (`orgPermission(managePolicies)`: owners, admins, custom members with it), as the official server asks; non-members get 404, other members 403.",
  },
} satisfies Record<string, RouteDoc>;

/**
 * A read of a feature this server does not offer yet, answered with the empty list the official
 * server gives an organization that uses none, so the web vault's page opens instead of
 * spinning; and organization-wide Duo, refused with a reason.
 */
export const unofferedTwoFactorRoutes: FastifyPluginAsyncTypebox<{ orgAccess: OrgAccess }> = async (app, { orgAccess }) => {
  app.get(
    '/organizations/:id/two-factor',
    { config: { access: orgAccess.admin('id') }, schema: { tags, ...docs.organization, params: IdParams, response: { 200: ListOf(ProviderResponse) } } },
    async () => list([]),
  );

  // The web vault's organization two-step login page opens the Duo dialog with get-duo; an answer naming what is missing beats a 404.
  for (const [method, url] of [
    ['POST', '/organizations/:id/two-factor/get-duo'],
    ['PUT', '/organizations/:id/two-factor/duo'],
    ['DELETE', '/organizations/:id/two-factor/duo'],
  ] as const) {
    app.route({
      method,
      url,
      config: { access: orgAccess.right('managePolicies', 'id') },
      schema: { tags, ...docs.organizationDuo, params: IdParams, body: Type.Optional(Type.Object({}, { additionalProperties: true })), response: { 200: EmptyResponse } },
      handler: async () => {
        throw BadRequest.field('type', 'Duo two-step login is not offered by this server.');
      },
    });
  }
};
