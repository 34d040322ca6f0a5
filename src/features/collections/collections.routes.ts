import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { access, currentUser } from '../../http/access.js';
import { clientContext } from '../../http/request-context.js';
import { emptyOk, EmptyResponse, list, ListOf, normalizeGuid } from '../../http/schemas.js';
import { membershipOf, type OrgAccess } from '../organizations/org-access.js';
import { registerOrgDeleteRoutes } from '../organizations/org-delete-routes.js';
import {
  AccessSelectionResponse,
  CollectionAccessDetailsResponse,
  CollectionDetailsResponse,
  CollectionResponse,
  CollectionUsersBody,
  CreateCollectionBody,
  OrgIdParams,
  OrgParams,
  toAccessSelection,
  UpdateCollectionBody,
} from './collections.schemas.js';
import type { CollectionService } from './collections.service.js';

const tags = ['collections'];

/** Organization collections ({base_url}/organizations/{orgId}/collections/...) and the user's own list. */
export const collectionRoutes: FastifyPluginAsyncTypebox<{ collections: CollectionService; orgAccess: OrgAccess }> = async (
  app,
  { collections, orgAccess },
) => {
  const member = { access: orgAccess.member() };
  const base = '/organizations/:orgId/collections';

  app.get('/collections', { config: { access: access.user }, schema: { tags, response: { 200: ListOf(CollectionDetailsResponse) } } }, async (request) =>
    list(await collections.forUser(currentUser(request).userId)),
  );

  // `bw list org-collections` reads this list with access details (groups, users).
  for (const [url, withAccess] of [
    [base, false],
    [`${base}/details`, true],
  ] as const) {
    app.get(url, { config: member, schema: { tags, params: OrgParams, response: { 200: ListOf(CollectionAccessDetailsResponse) } } }, async (request) =>
      list(await collections.listForOrganization(membershipOf(request), withAccess)),
    );
  }

  app.get(`${base}/:id`, { config: member, schema: { tags, params: OrgIdParams, response: { 200: CollectionResponse } } }, async (request) =>
    collections.get(membershipOf(request), normalizeGuid(request.params.id)),
  );

  app.get(`${base}/:id/details`, { config: member, schema: { tags, params: OrgIdParams, response: { 200: CollectionAccessDetailsResponse } } }, async (request) =>
    collections.getDetails(membershipOf(request), normalizeGuid(request.params.id)),
  );

  app.get(`${base}/:id/users`, { config: member, schema: { tags, params: OrgIdParams, response: { 200: Type.Array(AccessSelectionResponse) } } }, async (request) =>
    (await collections.getUsers(membershipOf(request), normalizeGuid(request.params.id))).map(toAccessSelection),
  );

  app.post(base, { config: member, schema: { tags, params: OrgParams, body: CreateCollectionBody, response: { 200: CollectionAccessDetailsResponse } } }, async (request) =>
    collections.create(membershipOf(request), request.body, clientContext(request)),
  );

  // POST is the deprecated form the older clients still send.
  for (const method of ['PUT', 'POST'] as const) {
    app.route({
      method,
      url: `${base}/:id`,
      config: member,
      schema: { tags, params: OrgIdParams, body: UpdateCollectionBody, response: { 200: CollectionAccessDetailsResponse } },
      handler: async (request) => collections.update(membershipOf(request), normalizeGuid(request.params.id), request.body, clientContext(request)),
    });
  }

  app.put(`${base}/:id/users`, { config: member, schema: { tags, params: OrgIdParams, body: CollectionUsersBody, response: { 200: EmptyResponse } } }, async (request, reply) => {
    await collections.replaceUsers(membershipOf(request), normalizeGuid(request.params.id), request.body, clientContext(request));
    return emptyOk(reply);
  });

  registerOrgDeleteRoutes(app, { base, access: member.access, tags, remove: (membership, ids, client) => collections.delete(membership, ids, client) });
};
