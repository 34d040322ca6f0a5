import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { olderForm, type RouteDoc } from '../../http/route-docs.js';
import { emptyOk, EmptyResponse, list, ListOf, normalizeGuid } from '../../http/schemas.js';
import { memberCaller, type OrgAccess } from '../../platform/access/org-access.js';
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

const tags = ['Groups'];

const MANAGE =
  'Access: a confirmed member holding manageGroups (`orgPermission(manageGroups)`: owners, admins, custom members with it); non-members get 404, other members 403.';
const SAVE_RULES =
  'Members and collections must be of this organization, the organization must be able to use groups, access to all collections needs the right to edit any collection, access to a collection needs the right to edit it (unless admins reach all collections), and nobody adds themselves to a group without access to all collections.';
const docs = {
  list: {
    summary: "List an organization's groups",
    description:
      "Answers the organization's groups (without members or collections) to members who assign collection access: everyone while collection creation is open, otherwise those who may create collections, manage groups or users, read reports, edit or delete any collection, edit assigned collections, or who manage a collection (403 for others). Access: a confirmed member of the organization (`orgMember`; anyone else gets 404).",
  },
  listDetails: {
    summary: 'List groups with their collection access',
    description:
      "Answers the organization's groups with the collections each reaches and its access to them. Access: a confirmed member holding manageGroups or manageUsers (`orgPermission(manageGroups|manageUsers)`); non-members get 404, other members 403.",
  },
  get: { summary: 'Read a group', description: `Answers one group of the organization (404 for an id of another organization). ${MANAGE}` },
  getDetails: { summary: 'Read a group with its collection access', description: `Answers one group with the collections it reaches and its access to them. ${MANAGE}` },
  users: { summary: "List a group's members", description: `Answers the membership ids (organization user ids) of the group's members. ${MANAGE}` },
  create: {
    summary: 'Create a group',
    description: `Creates a group with its name, external id, access to all collections or a collection list, and members; records Group_Created (1400) and OrganizationUser_UpdatedGroups (1504) per member added. ${SAVE_RULES} ${MANAGE}`,
  },
  update: {
    summary: 'Update a group',
    description: `Changes a group's name, access to all collections and external id; a collection list replaces its collection access (keeping what the caller may not edit) and a member list replaces its members, null leaves either as it is, and the rules of \`POST …/groups\` apply. Records Group_Updated (1401) and OrganizationUser_UpdatedGroups (1504) per member added or removed. ${MANAGE}`,
  },
  replaceUsers: {
    summary: "Replace a group's members",
    description: `Sets the group's members to the membership ids given (of this organization; nobody adds themselves to a group without access to all collections) and records OrganizationUser_UpdatedGroups (1504) per member added or removed. ${MANAGE}`,
  },
  removeUser: {
    summary: 'Remove a member from a group',
    description: `Takes one member out of the group (404 when they are not in it) and records OrganizationUser_UpdatedGroups (1504). ${MANAGE}`,
  },
  delete: { summary: 'Delete a group', description: `Deletes a group of the organization and records Group_Deleted (1402); its members lose the access it gave. ${MANAGE}` },
  deleteMany: {
    summary: 'Delete groups',
    description: `Deletes several groups of the organization, all or nothing (an id that is not one of its groups answers 404), and records Group_Deleted (1402) for each. ${MANAGE}`,
  },
} satisfies Record<string, RouteDoc>;

/** Groups of an organization ({base_url}/organizations/{orgId}/groups/...). */
export const groupRoutes: FastifyPluginAsyncTypebox<{ groups: GroupService; orgAccess: OrgAccess }> = async (app, { groups, orgAccess }) => {
  const member = { access: orgAccess.member() };
  const manage = { access: orgAccess.right('manageGroups') };
  const base = '/organizations/:orgId/groups';

  app.get(base, { config: member, schema: { tags, ...docs.list, params: OrgParams, response: { 200: ListOf(GroupResponse) } } }, async (request) =>
    list(await groups.list(memberCaller(request))),
  );

  app.get(`${base}/details`, { config: { access: orgAccess.anyRight(['manageGroups', 'manageUsers']) }, schema: { tags, ...docs.listDetails, params: OrgParams, response: { 200: ListOf(GroupDetailsResponse) } } }, async (request) =>
    list(await groups.listDetails(memberCaller(request))),
  );

  app.get(`${base}/:id`, { config: manage, schema: { tags, ...docs.get, params: OrgIdParams, response: { 200: GroupResponse } } }, async (request) =>
    groups.get(memberCaller(request), normalizeGuid(request.params.id)),
  );

  app.get(`${base}/:id/details`, { config: manage, schema: { tags, ...docs.getDetails, params: OrgIdParams, response: { 200: GroupDetailsResponse } } }, async (request) =>
    groups.getDetails(memberCaller(request), normalizeGuid(request.params.id)),
  );

  app.get(`${base}/:id/users`, { config: manage, schema: { tags, ...docs.users, params: OrgIdParams, response: { 200: Type.Array(Type.String()) } } }, async (request) =>
    groups.members(memberCaller(request), normalizeGuid(request.params.id)),
  );

  app.post(base, { config: manage, schema: { tags, ...docs.create, params: OrgParams, body: CreateGroupBody, response: { 200: GroupResponse } } }, async (request) =>
    groups.create(memberCaller(request), request.body),
  );

  // POST is the deprecated form of the update.
  for (const method of ['PUT', 'POST'] as const) {
    app.route({
      method,
      url: `${base}/:id`,
      config: manage,
      schema: { tags, ...(method === 'PUT' ? docs.update : olderForm(docs.update, 'PUT /organizations/{orgId}/groups/{id}')), params: OrgIdParams, body: UpdateGroupBody, response: { 200: GroupResponse } },
      handler: async (request) => groups.update(memberCaller(request), normalizeGuid(request.params.id), request.body),
    });
  }

  app.put(`${base}/:id/users`, { config: manage, schema: { tags, ...docs.replaceUsers, params: OrgIdParams, body: GroupUsersBody, response: { 200: EmptyResponse } } }, async (request, reply) => {
    await groups.replaceMembers(memberCaller(request), normalizeGuid(request.params.id), request.body);
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
      schema: { tags, ...(method === 'DELETE' ? docs.removeUser : olderForm(docs.removeUser, 'DELETE /organizations/{orgId}/groups/{id}/user/{orgUserId}')), params: OrgIdUserParams, response: { 200: EmptyResponse } },
      handler: async (request, reply) => {
        const { id, orgUserId } = request.params;
        await groups.removeMember(memberCaller(request), normalizeGuid(id), normalizeGuid(orgUserId));
        return emptyOk(reply);
      },
    });
  }

  registerOrgDeleteRoutes(app, { base, access: manage.access, tags, docs: { one: docs.delete, many: docs.deleteMany }, remove: (caller, ids) => groups.delete(caller, ids) });
};
