import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { clientContext } from '../../http/request-context.js';
import { emptyOk, EmptyResponse, list, ListOf, normalizeGuid } from '../../http/schemas.js';
import { membershipOf, type OrgAccess } from '../organizations/org-access.js';
import { registerOrgDeleteRoutes } from '../organizations/org-delete-routes.js';
import {
  CreateGroupBody,
  GroupDetailsResponse,
  GroupResponse,
  GroupUsersBody,
  OrgIdParams,
  OrgIdUserParams,
  OrgParams,
  UpdateGroupBody,
} from './groups.schemas.js';
import type { GroupService } from './groups.service.js';

const tags = ['groups'];

/** Groups of an organization ({base_url}/organizations/{orgId}/groups/...). */
export const groupRoutes: FastifyPluginAsyncTypebox<{ groups: GroupService; orgAccess: OrgAccess }> = async (app, { groups, orgAccess }) => {
  const member = { access: orgAccess.member() };
  const manage = { access: orgAccess.right('manageGroups') };
  const base = '/organizations/:orgId/groups';

  app.get(base, { config: member, schema: { tags, params: OrgParams, response: { 200: ListOf(GroupResponse) } } }, async (request) =>
    list(await groups.list(membershipOf(request))),
  );

  app.get(`${base}/details`, { config: { access: orgAccess.anyRight(['manageGroups', 'manageUsers']) }, schema: { tags, params: OrgParams, response: { 200: ListOf(GroupDetailsResponse) } } }, async (request) =>
    list(await groups.listDetails(membershipOf(request))),
  );

  app.get(`${base}/:id`, { config: manage, schema: { tags, params: OrgIdParams, response: { 200: GroupResponse } } }, async (request) =>
    groups.get(membershipOf(request), normalizeGuid(request.params.id)),
  );

  app.get(`${base}/:id/details`, { config: manage, schema: { tags, params: OrgIdParams, response: { 200: GroupDetailsResponse } } }, async (request) =>
    groups.getDetails(membershipOf(request), normalizeGuid(request.params.id)),
  );

  app.get(`${base}/:id/users`, { config: manage, schema: { tags, params: OrgIdParams, response: { 200: Type.Array(Type.String()) } } }, async (request) =>
    groups.members(membershipOf(request), normalizeGuid(request.params.id)),
  );

  app.post(base, { config: manage, schema: { tags, params: OrgParams, body: CreateGroupBody, response: { 200: GroupResponse } } }, async (request) =>
    groups.create(membershipOf(request), request.body, clientContext(request)),
  );

  // POST is the deprecated form of the update.
  for (const method of ['PUT', 'POST'] as const) {
    app.route({
      method,
      url: `${base}/:id`,
      config: manage,
      schema: { tags, params: OrgIdParams, body: UpdateGroupBody, response: { 200: GroupResponse } },
      handler: async (request) => groups.update(membershipOf(request), normalizeGuid(request.params.id), request.body, clientContext(request)),
    });
  }

  app.put(`${base}/:id/users`, { config: manage, schema: { tags, params: OrgIdParams, body: GroupUsersBody, response: { 200: EmptyResponse } } }, async (request, reply) => {
    await groups.replaceMembers(membershipOf(request), normalizeGuid(request.params.id), request.body, clientContext(request));
    return emptyOk(reply);
  });

  for (const [method, url] of [
    ['DELETE', `${base}/:id/user/:orgUserId`],
    ['POST', `${base}/:id/delete-user/:orgUserId`],
  ] as const) {
    app.route({
      method,
      url,
      config: manage,
      schema: { tags, params: OrgIdUserParams, response: { 200: EmptyResponse } },
      handler: async (request, reply) => {
        const { id, orgUserId } = request.params;
        await groups.removeMember(membershipOf(request), normalizeGuid(id), normalizeGuid(orgUserId), clientContext(request));
        return emptyOk(reply);
      },
    });
  }

  registerOrgDeleteRoutes(app, { base, access: manage.access, tags, remove: (membership, ids, client) => groups.delete(membership, ids, client) });
};
