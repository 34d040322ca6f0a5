import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { access, currentUser } from '../../http/access.js';
import { NotFound } from '../../http/errors.js';
import { clientContext } from '../../http/request-context.js';
import { emptyOk, EmptyResponse, ListOf, list } from '../../http/schemas.js';
import { membershipOf, type OrgAccess } from '../organizations/org-access.js';
import {
  AcceptBody,
  BulkConfirmBody,
  BulkResultResponse,
  ConfirmBody,
  GetQuery,
  GroupIdsBody,
  IdsBody,
  InviteBody,
  ListQuery,
  MemberDetailsResponse,
  MemberUserDetailsResponse,
  MiniDetailsResponse,
  OrgIdParams,
  OrgParams,
  ResetPasswordDetailsResponse,
  UpdateBody,
} from './members.schemas.js';
import type { Actor, MemberService } from './members.service.js';

const tags = ['organization users'];
const BASE = '/organizations/:orgId/users';

function actorOf(request: FastifyRequest): Actor {
  return { membership: membershipOf(request), client: clientContext(request), log: request.log };
}

const lower = (id: string) => id.toLowerCase();

/** Organization membership administration ({base_url}/organizations/{orgId}/users/...). */
export const memberRoutes: FastifyPluginAsyncTypebox<{ members: MemberService; orgAccess: OrgAccess }> = async (app, { members, orgAccess }) => {
  const manageUsers = { config: { access: orgAccess.right('manageUsers') } };
  const resetPassword = { config: { access: orgAccess.right('manageResetPassword') } };
  const BulkResults = ListOf(BulkResultResponse);

  // Account-recovery managers see the members they may recover: those enrolled in account recovery.
  app.get(
    BASE,
    {
      config: { access: orgAccess.anyRight(['manageUsers', 'manageResetPassword']) },
      schema: { tags, params: OrgParams, querystring: ListQuery, response: { 200: ListOf(MemberUserDetailsResponse) } },
    },
    async (request) => {
      const { includeGroups = false, includeCollections = false } = request.query;
      const enrolledOnly = !membershipOf(request).rights.has('manageUsers');
      return list(await members.list(lower(request.params.orgId), { includeGroups, includeCollections, enrolledOnly }));
    },
  );

  app.get(
    `${BASE}/mini-details`,
    { config: { access: orgAccess.member() }, schema: { tags, params: OrgParams, response: { 200: ListOf(MiniDetailsResponse) } } },
    async (request) => list(await members.miniDetails(lower(request.params.orgId))),
  );

  app.get(`${BASE}/:id`, { ...manageUsers, schema: { tags, params: OrgIdParams, querystring: GetQuery, response: { 200: MemberDetailsResponse } } }, async (request) =>
    members.get(lower(request.params.orgId), lower(request.params.id), request.query.includeGroups ?? false),
  );

  app.get(`${BASE}/:id/groups`, { ...manageUsers, schema: { tags, params: OrgIdParams, response: { 200: Type.Array(Type.String()) } } }, async (request) =>
    members.groupIds(lower(request.params.orgId), lower(request.params.id)),
  );

  for (const method of ['PUT', 'POST'] as const) {
    app.route({
      method,
      url: `${BASE}/:id/groups`,
      ...manageUsers,
      schema: { tags, params: OrgIdParams, body: GroupIdsBody, response: { 200: EmptyResponse } },
      handler: async (request, reply) => {
        await members.updateGroups(actorOf(request), lower(request.params.orgId), lower(request.params.id), request.body.groupIds);
        return emptyOk(reply);
      },
    });
  }

  app.post(`${BASE}/invite`, { ...manageUsers, schema: { tags, params: OrgParams, body: InviteBody, response: { 200: EmptyResponse } } }, async (request, reply) => {
    await members.invite(actorOf(request), lower(request.params.orgId), request.body);
    return emptyOk(reply);
  });

  app.post(`${BASE}/reinvite`, { ...manageUsers, schema: { tags, params: OrgParams, body: IdsBody, response: { 200: BulkResults } } }, async (request) =>
    list(await members.reinviteMany(actorOf(request), lower(request.params.orgId), request.body.ids)),
  );

  app.post(`${BASE}/:id/reinvite`, { ...manageUsers, schema: { tags, params: OrgIdParams, response: { 200: EmptyResponse } } }, async (request, reply) => {
    await members.reinvite(actorOf(request), lower(request.params.orgId), lower(request.params.id));
    return emptyOk(reply);
  });

  // The invitee is not a member yet, so any signed-in user may try; the token and email decide.
  app.post(
    `${BASE}/:id/accept`,
    { config: { access: access.user }, schema: { tags, params: OrgIdParams, body: AcceptBody, response: { 200: EmptyResponse } } },
    async (request, reply) => {
      await members.accept(currentUser(request), clientContext(request), lower(request.params.orgId), lower(request.params.id), request.body);
      return emptyOk(reply);
    },
  );

  app.post(`${BASE}/:id/confirm`, { ...manageUsers, schema: { tags, params: OrgIdParams, body: ConfirmBody, response: { 200: EmptyResponse } } }, async (request, reply) => {
    await members.confirm(actorOf(request), lower(request.params.orgId), lower(request.params.id), request.body.key);
    return emptyOk(reply);
  });

  app.post(`${BASE}/confirm`, { ...manageUsers, schema: { tags, params: OrgParams, body: BulkConfirmBody, response: { 200: BulkResults } } }, async (request) =>
    list(await members.confirmMany(actorOf(request), lower(request.params.orgId), request.body.keys)),
  );

  for (const method of ['PUT', 'POST'] as const) {
    app.route({
      method,
      url: `${BASE}/:id`,
      ...manageUsers,
      schema: { tags, params: OrgIdParams, body: UpdateBody, response: { 200: EmptyResponse } },
      handler: async (request, reply) => {
        await members.update(actorOf(request), lower(request.params.orgId), lower(request.params.id), request.body);
        return emptyOk(reply);
      },
    });
  }

  for (const [verb, one, many] of [
    ['revoke', members.revoke, members.revokeMany],
    ['restore', members.restore, members.restoreMany],
  ] as const) {
    app.put(`${BASE}/:id/${verb}`, { ...manageUsers, schema: { tags, params: OrgIdParams, response: { 200: EmptyResponse } } }, async (request, reply) => {
      await one(actorOf(request), lower(request.params.orgId), lower(request.params.id));
      return emptyOk(reply);
    });
    app.put(`${BASE}/${verb}`, { ...manageUsers, schema: { tags, params: OrgParams, body: IdsBody, response: { 200: BulkResults } } }, async (request) =>
      list(await many(actorOf(request), lower(request.params.orgId), request.body.ids)),
    );
  }

  // DELETE is current; older clients POST to /remove.
  for (const [method, url] of [
    ['DELETE', `${BASE}/:id`],
    ['POST', `${BASE}/:id/remove`],
  ] as const) {
    app.route({
      method,
      url,
      ...manageUsers,
      schema: { tags, params: OrgIdParams, response: { 200: EmptyResponse } },
      handler: async (request, reply) => {
        await members.remove(actorOf(request), lower(request.params.orgId), lower(request.params.id));
        return emptyOk(reply);
      },
    });
  }
  for (const [method, url] of [
    ['DELETE', BASE],
    ['POST', `${BASE}/remove`],
  ] as const) {
    app.route({
      method,
      url,
      ...manageUsers,
      schema: { tags, params: OrgParams, body: IdsBody, response: { 200: BulkResults } },
      handler: async (request) => list(await members.removeMany(actorOf(request), lower(request.params.orgId), request.body.ids)),
    });
  }

  app.get(
    `${BASE}/:id/reset-password-details`,
    { ...resetPassword, schema: { tags, params: OrgIdParams, response: { 200: ResetPasswordDetailsResponse } } },
    async (request) => {
      const [details] = await members.recoveryDetails(lower(request.params.orgId), [lower(request.params.id)]);
      if (!details) throw new NotFound();
      return details;
    },
  );

  app.post(
    `${BASE}/account-recovery-details`,
    { ...resetPassword, schema: { tags, params: OrgParams, body: IdsBody, response: { 200: ListOf(ResetPasswordDetailsResponse) } } },
    async (request) => list(await members.recoveryDetails(lower(request.params.orgId), request.body.ids)),
  );
};
