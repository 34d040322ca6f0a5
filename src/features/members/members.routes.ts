import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { access } from '../../http/access.js';
import { userCaller } from '../../http/request-context.js';
import { olderForm, type RouteDoc } from '../../http/route-docs.js';
import { emptyOk, EmptyResponse, ListOf, list } from '../../http/schemas.js';
import { memberCaller, type MemberCaller, type OrgAccess } from '../../platform/access/org-access.js';
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
  RestoreBody,
  StatusChangeBody,
  type BulkResult,
  UpdateBody,
} from './members.schemas.js';
import type { MemberService } from './members.service.js';

const tags = ['Members'];
const BASE = '/organizations/:orgId/users';

const MANAGE_USERS =
  'Access: a confirmed member holding manageUsers (`orgPermission(manageUsers)`: owners, admins, custom members with it); non-members get 404, other members 403.';
const ROLES = 'Only owners act on owners, and custom members do not act on admins.';
const BULK = 'Answers one result per id, with the reason each refused one was skipped; the others change together.';
const docs = {
  list: {
    summary: "List an organization's members",
    description:
      "Answers the organization's members with their account details, with their groups (`includeGroups`) and collection access (`includeCollections`) on request; members who hold manageResetPassword without manageUsers see only those enrolled in account recovery. Access: a confirmed member holding manageUsers or manageResetPassword (`orgPermission(manageUsers|manageResetPassword)`); non-members get 404, other members 403.",
  },
  miniDetails: {
    summary: "List an organization's members in brief",
    description:
      "Answers every member's membership id, user id, role, status, name and email. Access: a confirmed member of the organization (`orgMember`; anyone else gets 404).",
  },
  get: {
    summary: 'Read a member',
    description: `Answers one member with their role, permissions and collection access, and their group ids with \`includeGroups\`. ${MANAGE_USERS}`,
  },
  groups: { summary: "List a member's groups", description: `Answers the ids of the groups the member is in. ${MANAGE_USERS}` },
  setGroups: {
    summary: "Set a member's groups",
    description: `Replaces the member's groups with groups of this organization (which must be able to use groups; nobody adds themselves to a group without access to all collections) and records OrganizationUser_UpdatedGroups (1504). ${ROLES} ${MANAGE_USERS}`,
  },
  invite: {
    summary: 'Invite members',
    description: `Creates invited memberships for the emails not yet in the organization, with the role, permissions, collections and groups given and within the seat limit, records OrganizationUser_Invited (1500) and mails each a link to the web vault's accept page, valid 5 days (502 when the mail server refuses, after the invitations are saved). ${ROLES} ${MANAGE_USERS}`,
  },
  reinviteMany: {
    summary: 'Resend invitations',
    description: `Mails a fresh invitation link to each of the given members who is still invited. ${BULK} ${MANAGE_USERS}`,
  },
  reinvite: {
    summary: 'Resend an invitation',
    description: `Mails a fresh invitation link to a member who is still invited (400 otherwise). ${MANAGE_USERS}`,
  },
  accept: {
    summary: 'Accept an invitation',
    description:
      "The invited account takes up its invitation with the token from the invitation mail: the token must be this server's for this membership and the caller's email the invited one, and the organization's policies must let them join; with an account recovery policy that enrols automatically, `resetPasswordKey` is required. Access: any signed-in user (`user`): the invitee is not a member yet.",
  },
  confirm: {
    summary: 'Confirm a member',
    description: `Gives an accepted member the organization key encrypted to their public key, which grants them access, and records OrganizationUser_Confirmed (1501); refused (400) for a member not accepted, already confirmed or revoked, or whom the organization's policies keep out. ${MANAGE_USERS}`,
  },
  confirmMany: {
    summary: 'Confirm members',
    description: `Confirms several accepted members, each with the organization key encrypted to their public key, and records OrganizationUser_Confirmed (1501) for each. ${BULK} ${MANAGE_USERS}`,
  },
  update: {
    summary: 'Update a member',
    description: `Changes a member's role, custom permissions, access to all collections, Secrets Manager access, collection access and (when given) groups, and records OrganizationUser_Updated (1502); the last confirmed owner keeps the Owner role, and custom members grant only permissions they hold. ${ROLES} ${MANAGE_USERS}`,
  },
  revoke: {
    summary: "Revoke a member's access",
    description: `Revokes a confirmed member (not the caller, nor the last confirmed owner), who keeps the membership without access, and records OrganizationUser_Revoked (1511). ${ROLES} ${MANAGE_USERS}`,
  },
  revokeMany: {
    summary: "Revoke members' access",
    description: `Revokes several confirmed members (not the caller, nor the last confirmed owners) and records OrganizationUser_Revoked (1511) for each. ${ROLES} ${BULK} ${MANAGE_USERS}`,
  },
  revokeSelf: {
    summary: 'Revoke your own access',
    description:
      "A member who declines to move their personal items into the organization, as the Enforce organization data ownership policy asks, revokes their own membership: they keep it without access, the organization's items leave their apps, and OrganizationUser_SelfRevoked (1518) is recorded. Only where the policy binds the caller (on, and the caller neither owner nor admin, whom it exempts); 400 otherwise. Access: a confirmed member of the organization (`orgMember`; anyone else gets 404).",
  },
  restore: {
    summary: "Restore a member's access",
    description: `Gives a revoked member (not the caller) their access back, when a seat is free and the organization's policies allow, and records OrganizationUser_Restored (1512). ${ROLES} ${MANAGE_USERS}`,
  },
  restoreVnext: {
    summary: "Restore a member's access, with their own collection",
    description: `As \`PUT …/users/{id}/restore\` (which older web vaults call), and when the Enforce organization data ownership policy binds the member (on, and the member neither owner nor admin), gives them their own "My Items" collection named \`defaultUserCollectionName\` (encrypted), unless they have one; a missing or null name creates none, and one that is not an encrypted string is refused (400). ${ROLES} ${MANAGE_USERS}`,
  },
  restoreMany: {
    summary: "Restore members' access",
    description: `Gives several revoked members their access back, within the seat limit and the organization's policies, and records OrganizationUser_Restored (1512) for each; with \`defaultUserCollectionName\`, those the data ownership policy binds get their own collection as with \`PUT …/users/{id}/restore/vnext\`. ${ROLES} ${BULK} ${MANAGE_USERS}`,
  },
  remove: {
    summary: 'Remove a member',
    description: `Deletes a membership (not the caller's, nor the last confirmed owner's) and records OrganizationUser_Removed (1503). ${ROLES} ${MANAGE_USERS}`,
  },
  removeMany: {
    summary: 'Remove members',
    description: `Deletes several memberships (not the caller's, nor the last confirmed owners') and records OrganizationUser_Removed (1503) for each. ${ROLES} ${BULK} ${MANAGE_USERS}`,
  },
  enableSecretsManager: {
    summary: 'Give members access to Secrets Manager',
    description: `The member list's bulk "Activate Secrets Manager": the given members of this organization who lack access to Secrets Manager get it, whatever their role or status, within the organization's Secrets Manager seats (members with access who are not revoked hold one); 400 "Users invalid." when none of the ids is such a member, 400 when the organization does not use Secrets Manager, and 400 past the seats (self-hosted: "Cannot autoscale on a self-hosted instance."; no seats are bought). Records no event, as the official server does. ${MANAGE_USERS}`,
  },
} satisfies Record<string, RouteDoc>;

const lower = (id: string) => id.toLowerCase();

/** Organization membership administration ({base_url}/organizations/{orgId}/users/...). */
export const memberRoutes: FastifyPluginAsyncTypebox<{ members: MemberService; orgAccess: OrgAccess }> = async (app, { members, orgAccess }) => {
  const manageUsers = { config: { access: orgAccess.right('manageUsers') } };
  const BulkResults = ListOf(BulkResultResponse);

  app.get(
    BASE,
    {
      config: { access: orgAccess.anyRight(['manageUsers', 'manageResetPassword']) },
      schema: { tags, ...docs.list, params: OrgParams, querystring: ListQuery, response: { 200: ListOf(MemberUserDetailsResponse) } },
    },
    async (request) => {
      const { includeGroups = false, includeCollections = false } = request.query;
      return list(await members.list(memberCaller(request), lower(request.params.orgId), { includeGroups, includeCollections }));
    },
  );

  app.get(
    `${BASE}/mini-details`,
    { config: { access: orgAccess.member() }, schema: { tags, ...docs.miniDetails, params: OrgParams, response: { 200: ListOf(MiniDetailsResponse) } } },
    async (request) => list(await members.miniDetails(memberCaller(request), lower(request.params.orgId))),
  );

  app.get(`${BASE}/:id`, { ...manageUsers, schema: { tags, ...docs.get, params: OrgIdParams, querystring: GetQuery, response: { 200: MemberDetailsResponse } } }, async (request) =>
    members.get(memberCaller(request), lower(request.params.orgId), lower(request.params.id), request.query.includeGroups ?? false),
  );

  app.get(`${BASE}/:id/groups`, { ...manageUsers, schema: { tags, ...docs.groups, params: OrgIdParams, response: { 200: Type.Array(Type.String()) } } }, async (request) =>
    members.groupIds(memberCaller(request), lower(request.params.orgId), lower(request.params.id)),
  );

  for (const method of ['PUT', 'POST'] as const) {
    app.route({
      method,
      url: `${BASE}/:id/groups`,
      ...manageUsers,
      schema: { tags, ...(method === 'PUT' ? docs.setGroups : olderForm(docs.setGroups, 'PUT /organizations/{orgId}/users/{id}/groups')), params: OrgIdParams, body: GroupIdsBody, response: { 200: EmptyResponse } },
      handler: async (request, reply) => {
        await members.updateGroups(memberCaller(request), lower(request.params.orgId), lower(request.params.id), request.body.groupIds);
        return emptyOk(reply);
      },
    });
  }

  app.post(`${BASE}/invite`, { ...manageUsers, schema: { tags, ...docs.invite, params: OrgParams, body: InviteBody, response: { 200: EmptyResponse } } }, async (request, reply) => {
    await members.invite(memberCaller(request), lower(request.params.orgId), request.body);
    return emptyOk(reply);
  });

  app.post(`${BASE}/reinvite`, { ...manageUsers, schema: { tags, ...docs.reinviteMany, params: OrgParams, body: IdsBody, response: { 200: BulkResults } } }, async (request) =>
    list(await members.reinviteMany(memberCaller(request), lower(request.params.orgId), request.body.ids)),
  );

  app.post(`${BASE}/:id/reinvite`, { ...manageUsers, schema: { tags, ...docs.reinvite, params: OrgIdParams, response: { 200: EmptyResponse } } }, async (request, reply) => {
    await members.reinvite(memberCaller(request), lower(request.params.orgId), lower(request.params.id));
    return emptyOk(reply);
  });

  // The invitee is not a member yet, so any signed-in user may try; the token and email decide.
  app.post(
    `${BASE}/:id/accept`,
    { config: { access: access.user }, schema: { tags, ...docs.accept, params: OrgIdParams, body: AcceptBody, response: { 200: EmptyResponse } } },
    async (request, reply) => {
      await members.accept(userCaller(request), lower(request.params.orgId), lower(request.params.id), request.body);
      return emptyOk(reply);
    },
  );

  app.post(`${BASE}/:id/confirm`, { ...manageUsers, schema: { tags, ...docs.confirm, params: OrgIdParams, body: ConfirmBody, response: { 200: EmptyResponse } } }, async (request, reply) => {
    await members.confirm(memberCaller(request), lower(request.params.orgId), lower(request.params.id), request.body.key, request.body.defaultUserCollectionName);
    return emptyOk(reply);
  });

  app.post(`${BASE}/confirm`, { ...manageUsers, schema: { tags, ...docs.confirmMany, params: OrgParams, body: BulkConfirmBody, response: { 200: BulkResults } } }, async (request) =>
    list(await members.confirmMany(memberCaller(request), lower(request.params.orgId), request.body.keys, request.body.defaultUserCollectionName)),
  );

  for (const method of ['PUT', 'POST'] as const) {
    app.route({
      method,
      url: `${BASE}/:id`,
      ...manageUsers,
      schema: { tags, ...(method === 'PUT' ? docs.update : olderForm(docs.update, 'PUT /organizations/{orgId}/users/{id}')), params: OrgIdParams, body: UpdateBody, response: { 200: EmptyResponse } },
      handler: async (request, reply) => {
        await members.update(memberCaller(request), lower(request.params.orgId), lower(request.params.id), request.body);
        return emptyOk(reply);
      },
    });
  }

  app.put(`${BASE}/revoke-self`, { config: { access: orgAccess.member() }, schema: { tags, ...docs.revokeSelf, params: OrgParams, response: { 200: EmptyResponse } } }, async (request, reply) => {
    await members.revokeSelf(memberCaller(request), lower(request.params.orgId));
    return emptyOk(reply);
  });

  for (const [verb, one, many] of [
    ['revoke', members.revoke, members.revokeMany],
    ['restore', members.restore, members.restoreMany],
  ] as const) {
    app.put(`${BASE}/:id/${verb}`, { ...manageUsers, schema: { tags, ...docs[verb], params: OrgIdParams, response: { 200: EmptyResponse } } }, async (request, reply) => {
      await one(memberCaller(request), lower(request.params.orgId), lower(request.params.id));
      return emptyOk(reply);
    });
    const bulkChange: (caller: MemberCaller, organizationId: string, ids: readonly string[], defaultCollectionName?: string | null) => Promise<BulkResult[]> = many;
    app.put(`${BASE}/${verb}`, { ...manageUsers, schema: { tags, ...docs[`${verb}Many`], params: OrgParams, body: StatusChangeBody, response: { 200: BulkResults } } }, async (request) =>
      list(await bulkChange(memberCaller(request), lower(request.params.orgId), request.body.ids, request.body.defaultUserCollectionName)),
    );
  }

  app.put(`${BASE}/:id/restore/vnext`, { ...manageUsers, schema: { tags, ...docs.restoreVnext, params: OrgIdParams, body: RestoreBody, response: { 200: EmptyResponse } } }, async (request, reply) => {
    await members.restore(memberCaller(request), lower(request.params.orgId), lower(request.params.id), request.body.defaultUserCollectionName);
    return emptyOk(reply);
  });

  app.put(`${BASE}/enable-secrets-manager`, { ...manageUsers, schema: { tags, ...docs.enableSecretsManager, params: OrgParams, body: IdsBody, response: { 200: EmptyResponse } } }, async (request, reply) => {
    await members.enableSecretsManager(memberCaller(request), lower(request.params.orgId), request.body.ids);
    return emptyOk(reply);
  });

  // DELETE is current; older clients POST to /remove.
  for (const [method, url] of [
    ['DELETE', `${BASE}/:id`],
    ['POST', `${BASE}/:id/remove`],
  ] as const) {
    app.route({
      method,
      url,
      ...manageUsers,
      schema: { tags, ...(method === 'DELETE' ? docs.remove : olderForm(docs.remove, 'DELETE /organizations/{orgId}/users/{id}')), params: OrgIdParams, response: { 200: EmptyResponse } },
      handler: async (request, reply) => {
        await members.remove(memberCaller(request), lower(request.params.orgId), lower(request.params.id));
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
      schema: { tags, ...(method === 'DELETE' ? docs.removeMany : olderForm(docs.removeMany, 'DELETE /organizations/{orgId}/users')), params: OrgParams, body: IdsBody, response: { 200: BulkResults } },
      handler: async (request) => list(await members.removeMany(memberCaller(request), lower(request.params.orgId), request.body.ids)),
    });
  }

};
