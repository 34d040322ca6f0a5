import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { access } from '../../http/access.js';
import { userCaller } from '../../http/request-context.js';
import { olderForm, type RouteDoc } from '../../http/route-docs.js';
import { emptyOk, EmptyResponse, list, ListOf, normalizeGuid } from '../../http/schemas.js';
import { memberCaller, type OrgAccess } from '../../platform/access/org-access.js';
import { registerOrgDeleteRoutes } from '../organizations/org-delete-routes.js';
import {
  AccessSelectionResponse,
  BulkAccessBody,
  CollectionAccessDetailsResponse,
  CollectionDetailsResponse,
  CollectionResponse,
  CollectionUsersBody,
  CreateCollectionBody,
  OrgIdParams,
  OrgParams,
  UpdateCollectionBody,
} from './collections.schemas.js';
import type { CollectionService } from './collections.service.js';

const tags = ['Collections'];

const MEMBER = 'Access: a confirmed member of the organization (`orgMember`; anyone else gets 404); the collection rights are checked by the operation.';
const SEEN = 'A collection the caller cannot see answers 404, one they see but may not read 403.';
const docs = {
  mine: {
    summary: "List the caller's collections",
    description:
      'Answers every collection the caller reaches in the organizations they are a confirmed member of, with their access to each (read-only, hide passwords, manage). Access: any signed-in user (`user`).',
  },
  list: {
    summary: "List an organization's collections",
    description: `Answers the organization's collections with their member and group access: all of them to members who may edit or delete any collection, import and export, or manage groups; to others only those they manage. ${MEMBER}`,
  },
  listDetails: {
    summary: "List an organization's collections with access details",
    description: `Answers the organization's collections with their member and group access: all of them to members who may edit or delete any collection, manage users or manage groups; to others only those they manage. \`bw list org-collections\` reads this list. ${MEMBER}`,
  },
  get: {
    summary: 'Read a collection',
    description: `Answers a collection (without its access) to members who may edit or delete any collection or who manage it. ${SEEN} ${MEMBER}`,
  },
  getDetails: {
    summary: 'Read a collection with its access',
    description: `Answers a collection with its member and group access to members who may read it (see \`GET …/collections/{id}\`) or who manage users or groups. ${SEEN} ${MEMBER}`,
  },
  users: {
    summary: "List a collection's members",
    description: `Answers the members with direct access to the collection and their access (read-only, hide passwords, manage), to members who may edit or delete any collection or who manage it. ${SEEN} ${MEMBER}`,
  },
  create: {
    summary: 'Create a collection',
    description: `Creates a collection with the encrypted name and the member and group access given, for members who may create collections (everyone, unless the organization limits creation to those with createNewCollections); a creator who cannot edit every collection becomes its manager, and unless admins reach all collections someone must manage it. Records Collection_Created (1300). ${MEMBER}`,
  },
  update: {
    summary: 'Update a collection',
    description: `Changes a collection's name, external id and, when given, its member and group access, for members who may edit any collection or who manage it (owners, admins and editAnyCollection members also take over one nobody manages); records Collection_Updated (1301). ${SEEN.replace(' read', ' edit')} ${MEMBER}`,
  },
  replaceUsers: {
    summary: "Replace a collection's members",
    description: `Replaces the members with direct access to the collection (group access stays), for members who may edit it, or who manage users when admins reach all collections; records Collection_Updated (1301). ${MEMBER}`,
  },
  delete: {
    summary: 'Delete a collection',
    description: `Deletes a collection and records Collection_Deleted (1302). Members who may delete any collection (owners and admins only while admins reach all collections) delete any; others delete those they manage and, as owners, admins or editAnyCollection members, those nobody manages, but while the organization limits deletion only owners and admins do. ${SEEN.replace(' read', ' delete')} ${MEMBER}`,
  },
  bulkAccess: {
    summary: 'Give members and groups access to several collections',
    description: `Adds the given members' and groups' access (replacing theirs where they already have some) on up to 500 collections, all or nothing, for a caller who may edit every one of them (see \`PUT …/collections/{id}\`); a collection that is not the organization's, or that the caller may not edit, answers 404. Records Collection_Updated (1301) for each. ${MEMBER}`,
  },
  deleteMany: {
    summary: 'Delete collections',
    description: `Deletes several collections, all or nothing, under the rules of \`DELETE …/collections/{id}\`: an id the caller cannot see answers 404, one they may not delete 403; records Collection_Deleted (1302) for each. ${MEMBER}`,
  },
} satisfies Record<string, RouteDoc>;

/** Organization collections ({base_url}/organizations/{orgId}/collections/...) and the user's own list. */
export const collectionRoutes: FastifyPluginAsyncTypebox<{ collections: CollectionService; orgAccess: OrgAccess }> = async (
  app,
  { collections, orgAccess },
) => {
  const member = { access: orgAccess.member() };
  const base = '/organizations/:orgId/collections';

  app.get('/collections', { config: { access: access.user }, schema: { tags, ...docs.mine, response: { 200: ListOf(CollectionDetailsResponse) } } }, async (request) =>
    list(await collections.forUser(userCaller(request))),
  );

  // `bw list org-collections` reads this list with access details (groups, users).
  for (const [url, withAccess] of [
    [base, false],
    [`${base}/details`, true],
  ] as const) {
    app.get(url, { config: member, schema: { tags, ...(withAccess ? docs.listDetails : docs.list), params: OrgParams, response: { 200: ListOf(CollectionAccessDetailsResponse) } } }, async (request) =>
      list(await collections.listForOrganization(memberCaller(request), withAccess)),
    );
  }

  app.get(`${base}/:id`, { config: member, schema: { tags, ...docs.get, params: OrgIdParams, response: { 200: CollectionResponse } } }, async (request) =>
    collections.get(memberCaller(request), normalizeGuid(request.params.id)),
  );

  app.get(`${base}/:id/details`, { config: member, schema: { tags, ...docs.getDetails, params: OrgIdParams, response: { 200: CollectionAccessDetailsResponse } } }, async (request) =>
    collections.getDetails(memberCaller(request), normalizeGuid(request.params.id)),
  );

  app.get(`${base}/:id/users`, { config: member, schema: { tags, ...docs.users, params: OrgIdParams, response: { 200: Type.Array(AccessSelectionResponse) } } }, async (request) =>
    collections.getUsers(memberCaller(request), normalizeGuid(request.params.id)),
  );

  app.post(base, { config: member, schema: { tags, ...docs.create, params: OrgParams, body: CreateCollectionBody, response: { 200: CollectionAccessDetailsResponse } } }, async (request) =>
    collections.create(memberCaller(request), request.body),
  );

  // POST is the deprecated form the older clients still send.
  for (const method of ['PUT', 'POST'] as const) {
    app.route({
      method,
      url: `${base}/:id`,
      config: member,
      schema: { tags, ...(method === 'PUT' ? docs.update : olderForm(docs.update, 'PUT /organizations/{orgId}/collections/{id}')), params: OrgIdParams, body: UpdateCollectionBody, response: { 200: CollectionAccessDetailsResponse } },
      handler: async (request) => collections.update(memberCaller(request), normalizeGuid(request.params.id), request.body),
    });
  }

  app.put(`${base}/:id/users`, { config: member, schema: { tags, ...docs.replaceUsers, params: OrgIdParams, body: CollectionUsersBody, response: { 200: EmptyResponse } } }, async (request, reply) => {
    await collections.replaceUsers(memberCaller(request), normalizeGuid(request.params.id), request.body);
    return emptyOk(reply);
  });

  app.post(`${base}/bulk-access`, { config: member, schema: { tags, ...docs.bulkAccess, params: OrgParams, body: BulkAccessBody, response: { 200: EmptyResponse } } }, async (request, reply) => {
    await collections.addAccess(memberCaller(request), request.body);
    return emptyOk(reply);
  });

  registerOrgDeleteRoutes(app, { base, access: member.access, tags, docs: { one: docs.delete, many: docs.deleteMany }, remove: (caller, ids) => collections.delete(caller, ids) });
};
