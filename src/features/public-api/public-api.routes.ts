import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { access } from '../../http/access.js';
import { publicErrorHandler } from '../../http/error-handler.js';
import { NotFound, Unauthorized } from '../../http/errors.js';
import { callerOf } from '../../http/request-context.js';
import type { RouteDoc } from '../../http/route-docs.js';
import { emptyOk, EmptyResponse, IdParams, list, ListOf } from '../../http/schemas.js';
import { EventQuery } from '../events/events.schemas.js';
import {
  CollectionBody,
  CollectionResponse,
  EventResponse,
  GroupBody,
  GroupIdsBody,
  GroupResponse,
  ImportBody,
  MemberCreateBody,
  MemberIdsBody,
  MemberResponse,
  MemberUpdateBody,
  PolicyBody,
  PolicyResponse,
  PolicyTypeParams,
  SubscriptionBody,
  SubscriptionResponse,
} from './public-api.schemas.js';
import type { PublicApiService, PublicCaller } from './public-api.service.js';

const tags = ['Public API'];
const ACCESS = "Access: the organization's API key token (`organizationApiKey`, scope api.organization); user and machine-account tokens get 401.";
const NOT_FOUND = "An id that is not this organization's answers 404.";
const AUDIT = 'Recorded in the event log with system user PublicApi (3) and no acting user.';

const doc = (summary: string, description: string): RouteDoc => ({ summary, description: `${description} ${ACCESS}` });

const docs = {
  listMembers: doc('List members', "Answers every member of the organization with their collection access, in the list envelope (one page; continuationToken null)."),
  getMember: doc('Read a member', `Answers one member with their collection access and, for Custom members, permissions. ${NOT_FOUND}`),
  inviteMember: doc(
    'Invite a member',
    `Invites an email with a role, external id, custom permissions, collection access and groups, within the seat limit, and mails the same invitation as the web vault's invite; 400 "This user has already been invited." when the address is in the organization. ${AUDIT}`,
  ),
  updateMember: doc(
    'Replace a member',
    `Sets the member's role, external id, custom permissions and collection access; what the body leaves out is reset (external id cleared, collection access removed), except groups, which stay unless given, and a Custom member's permissions, kept when left out. The last confirmed owner keeps the Owner role. ${NOT_FOUND} ${AUDIT}`,
  ),
  memberGroupIds: doc("List a member's group ids", `Answers the ids of the member's groups as a bare JSON array. ${NOT_FOUND}`),
  setMemberGroupIds: doc("Set a member's groups", `Replaces the member's groups with groups of this organization (\`groupIds\`). ${NOT_FOUND} ${AUDIT}`),
  removeMember: doc('Remove a member', `Deletes the membership; the last confirmed owner cannot be removed. ${NOT_FOUND} ${AUDIT}`),
  reinviteMember: doc('Resend an invitation', `Mails a fresh invitation to a member who is still invited (400 otherwise). ${NOT_FOUND}`),
  revokeMember: doc("Revoke a member's access", `Revokes a confirmed member, who keeps the membership without access (400 for others, and for the last confirmed owner). ${NOT_FOUND} ${AUDIT}`),
  restoreMember: doc("Restore a member's access", `Gives a revoked member their access back when a seat is free and the organization's policies allow. ${NOT_FOUND} ${AUDIT}`),
  listGroups: doc('List groups', 'Answers every group with its collection access, in the list envelope.'),
  getGroup: doc('Read a group', `Answers one group with its collection access. ${NOT_FOUND}`),
  createGroup: doc('Create a group', `Creates a group with a name, external id and collection access (this organization's collections only; the plan must include groups). ${AUDIT}`),
  updateGroup: doc('Replace a group', `Sets the group's name, external id and collection access; what the body leaves out is reset; the members stay. ${NOT_FOUND} ${AUDIT}`),
  deleteGroup: doc('Delete a group', `Deletes the group; its members stay in the organization. ${NOT_FOUND} ${AUDIT}`),
  groupMemberIds: doc("List a group's member ids", `Answers the ids of the group's members as a bare JSON array. ${NOT_FOUND}`),
  setGroupMemberIds: doc("Set a group's members", `Replaces the group's members with members of this organization (\`memberIds\`). ${NOT_FOUND} ${AUDIT}`),
  listCollections: doc('List collections', "Answers every shared collection with its groups' access (no names: they are encrypted), in the list envelope; members' own My Items collections are left out."),
  getCollection: doc('Read a collection', `Answers one collection with its groups' access. ${NOT_FOUND}`),
  updateCollection: doc(
    'Update a collection',
    `Sets the collection's external id (cleared when left out) and, when \`groups\` is given, the groups' access; there is no create, as the name is encrypted with the organization key. ${NOT_FOUND} ${AUDIT}`,
  ),
  deleteCollection: doc('Delete a collection', `Deletes a shared collection (a member's My Items collection: 400). ${NOT_FOUND} ${AUDIT}`),
  listPolicies: doc('List policies', "Answers the organization's saved policies, enabled or not, in the list envelope."),
  getPolicy: doc('Read a policy', 'Answers the policy of the type in the path (an integer PolicyType); 404 when the organization never saved it; an unknown type is a 400.'),
  savePolicy: doc(
    'Save a policy',
    `Turns the policy of the type in the path on or off with its data, checked per type as the web route checks it, with the same dependencies (Single organization) and plan rules. ${AUDIT}`,
  ),
  events: doc(
    'Read the event log',
    "Answers the organization's events newest first, 50 a page, in the list envelope with a continuation token (pass it back as `continuationToken`); `start` and `end` (ISO 8601; default the last 30 days, at most 367 days), `actingUserId` and `itemId` (any resource an event is about) filter them.",
  ),
  importDirectory: doc(
    'Import a directory',
    `Directory sync in one transaction: members matched by external id (or linked by email), new ones invited and mailed, those marked \`deleted\` removed; groups created or renamed by external id with their members; with \`overwriteExisting\`, members and groups with an external id the directory no longer lists are removed. Owners are never removed. On the cloud variant more than 2000 groups or 2000 enabled members need \`largeImport\` ("You cannot import this much data at once."). ${AUDIT}`,
  ),
  subscription: doc(
    'Read the subscription',
    'Answers seats and storage (and the Secrets Manager seats and machine-account limit) on the cloud variant; on a self-hosted server the license decides them, and the answer is a 400 saying so.',
  ),
  updateSubscription: doc(
    'Change the subscription',
    `Sets seats (not below the members occupying seats; plans with fixed seats refuse), storage in GB (the web route's storage rules) and the Secrets Manager seats and machine-account limit, as absolute figures; no payment is taken. Self-hosted: 400, the license decides. ${AUDIT}`,
  ),
} satisfies Record<string, RouteDoc>;

/** The calling organization, from its API key token; any other token is a 401. */
export function publicCaller(request: FastifyRequest): PublicCaller {
  const principal = request.principal;
  if (principal?.kind !== 'organization') throw new Unauthorized();
  return callerOf(request, { organizationId: principal.organizationId });
}

const lower = (id: string) => id.toLowerCase();
const IdList = Type.Array(Type.String());

/**
 * The organization public API ({base_url}/public/...): the organization's own API key token,
 * scoped to that organization, with the spec's envelopes (list, error with validationErrors).
 */
export const publicApiRoutes: FastifyPluginAsyncTypebox<{ publicApi: PublicApiService }> = async (app, { publicApi: api }) => {
  app.setErrorHandler(publicErrorHandler);
  app.setNotFoundHandler(() => {
    throw new NotFound();
  });
  const config = { access: access.organizationApiKey };

  // -- members ------------------------------------------------------------------------
  app.get('/members', { config, schema: { tags, ...docs.listMembers, response: { 200: ListOf(MemberResponse) } } }, async (request) => list(await api.listMembers(publicCaller(request))));
  app.get('/members/:id', { config, schema: { tags, ...docs.getMember, params: IdParams, response: { 200: MemberResponse } } }, async (request) =>
    api.getMember(publicCaller(request), lower(request.params.id)),
  );
  app.post('/members', { config, schema: { tags, ...docs.inviteMember, body: MemberCreateBody, response: { 200: MemberResponse } } }, async (request) =>
    api.inviteMember(publicCaller(request), request.body),
  );
  app.put('/members/:id', { config, schema: { tags, ...docs.updateMember, params: IdParams, body: MemberUpdateBody, response: { 200: MemberResponse } } }, async (request) =>
    api.updateMember(publicCaller(request), lower(request.params.id), request.body),
  );
  app.delete('/members/:id', { config, schema: { tags, ...docs.removeMember, params: IdParams, response: { 200: EmptyResponse } } }, async (request, reply) => {
    await api.removeMember(publicCaller(request), lower(request.params.id));
    return emptyOk(reply);
  });
  app.get('/members/:id/group-ids', { config, schema: { tags, ...docs.memberGroupIds, params: IdParams, response: { 200: IdList } } }, async (request) =>
    api.memberGroupIds(publicCaller(request), lower(request.params.id)),
  );
  app.put('/members/:id/group-ids', { config, schema: { tags, ...docs.setMemberGroupIds, params: IdParams, body: GroupIdsBody, response: { 200: EmptyResponse } } }, async (request, reply) => {
    await api.setMemberGroupIds(publicCaller(request), lower(request.params.id), request.body.groupIds);
    return emptyOk(reply);
  });
  for (const [verb, run, routeDoc] of [
    ['reinvite', (caller: PublicCaller, id: string) => api.reinviteMember(caller, id), docs.reinviteMember],
    ['revoke', (caller: PublicCaller, id: string) => api.revokeMember(caller, id), docs.revokeMember],
    ['restore', (caller: PublicCaller, id: string) => api.restoreMember(caller, id), docs.restoreMember],
  ] as const) {
    app.post(`/members/:id/${verb}`, { config, schema: { tags, ...routeDoc, params: IdParams, response: { 200: EmptyResponse } } }, async (request, reply) => {
      await run(publicCaller(request), lower(request.params.id));
      return emptyOk(reply);
    });
  }

  // -- groups -------------------------------------------------------------------------
  app.get('/groups', { config, schema: { tags, ...docs.listGroups, response: { 200: ListOf(GroupResponse) } } }, async (request) => list(await api.listGroups(publicCaller(request))));
  app.get('/groups/:id', { config, schema: { tags, ...docs.getGroup, params: IdParams, response: { 200: GroupResponse } } }, async (request) =>
    api.getGroup(publicCaller(request), lower(request.params.id)),
  );
  app.post('/groups', { config, schema: { tags, ...docs.createGroup, body: GroupBody, response: { 200: GroupResponse } } }, async (request) => api.createGroup(publicCaller(request), request.body));
  app.put('/groups/:id', { config, schema: { tags, ...docs.updateGroup, params: IdParams, body: GroupBody, response: { 200: GroupResponse } } }, async (request) =>
    api.updateGroup(publicCaller(request), lower(request.params.id), request.body),
  );
  app.delete('/groups/:id', { config, schema: { tags, ...docs.deleteGroup, params: IdParams, response: { 200: EmptyResponse } } }, async (request, reply) => {
    await api.deleteGroup(publicCaller(request), lower(request.params.id));
    return emptyOk(reply);
  });
  app.get('/groups/:id/member-ids', { config, schema: { tags, ...docs.groupMemberIds, params: IdParams, response: { 200: IdList } } }, async (request) =>
    api.groupMemberIds(publicCaller(request), lower(request.params.id)),
  );
  app.put('/groups/:id/member-ids', { config, schema: { tags, ...docs.setGroupMemberIds, params: IdParams, body: MemberIdsBody, response: { 200: EmptyResponse } } }, async (request, reply) => {
    await api.setGroupMemberIds(publicCaller(request), lower(request.params.id), request.body.memberIds);
    return emptyOk(reply);
  });

  // -- collections --------------------------------------------------------------------
  app.get('/collections', { config, schema: { tags, ...docs.listCollections, response: { 200: ListOf(CollectionResponse) } } }, async (request) =>
    list(await api.listCollections(publicCaller(request))),
  );
  app.get('/collections/:id', { config, schema: { tags, ...docs.getCollection, params: IdParams, response: { 200: CollectionResponse } } }, async (request) =>
    api.getCollection(publicCaller(request), lower(request.params.id)),
  );
  app.put('/collections/:id', { config, schema: { tags, ...docs.updateCollection, params: IdParams, body: CollectionBody, response: { 200: CollectionResponse } } }, async (request) =>
    api.updateCollection(publicCaller(request), lower(request.params.id), request.body),
  );
  app.delete('/collections/:id', { config, schema: { tags, ...docs.deleteCollection, params: IdParams, response: { 200: EmptyResponse } } }, async (request, reply) => {
    await api.deleteCollection(publicCaller(request), lower(request.params.id));
    return emptyOk(reply);
  });

  // -- policies -----------------------------------------------------------------------
  app.get('/policies', { config, schema: { tags, ...docs.listPolicies, response: { 200: ListOf(PolicyResponse) } } }, async (request) => list(await api.listPolicies(publicCaller(request))));
  app.get('/policies/:type', { config, schema: { tags, ...docs.getPolicy, params: PolicyTypeParams, response: { 200: PolicyResponse } } }, async (request) =>
    api.getPolicy(publicCaller(request), request.params.type),
  );
  app.put('/policies/:type', { config, schema: { tags, ...docs.savePolicy, params: PolicyTypeParams, body: PolicyBody, response: { 200: PolicyResponse } } }, async (request) =>
    api.savePolicy(publicCaller(request), request.params.type, request.body),
  );

  // -- events -------------------------------------------------------------------------
  app.get('/events', { config, schema: { tags, ...docs.events, querystring: EventQuery, response: { 200: ListOf(EventResponse) } } }, async (request) => {
    const page = await api.events(publicCaller(request), request.query);
    return list(page.data, page.continuationToken);
  });

  // -- organization -------------------------------------------------------------------
  app.post('/organization/import', { config: { ...config, bodySize: 'large', callerLimit: 'import' }, schema: { tags, ...docs.importDirectory, body: ImportBody, response: { 200: EmptyResponse } } }, async (request, reply) => {
    await api.importDirectory(publicCaller(request), request.body);
    return emptyOk(reply);
  });
  app.get('/organization/subscription', { config, schema: { tags, ...docs.subscription, response: { 200: SubscriptionResponse } } }, async (request) =>
    api.subscription(publicCaller(request)),
  );
  app.put('/organization/subscription', { config, schema: { tags, ...docs.updateSubscription, body: SubscriptionBody, response: { 200: SubscriptionResponse } } }, async (request) =>
    api.updateSubscription(publicCaller(request), request.body),
  );
};
