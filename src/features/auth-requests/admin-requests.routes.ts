import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { access } from '../../http/access.js';
import { userCaller } from '../../http/request-context.js';
import type { RouteDoc } from '../../http/route-docs.js';
import { emptyOk, EmptyResponse, list, ListOf, OrgIdParams, OrgParams } from '../../http/schemas.js';
import { memberCaller, type OrgAccess } from '../../platform/access/org-access.js';
import type { AdminRequestService } from './admin-requests.service.js';
import { AdminAnswerBody, AdminAnswerManyBody, AdminDenyBody, PendingOrganizationAuthRequestResponse } from './admin-requests.schemas.js';
import { AuthRequestResponse, CreateAuthRequestBody } from './auth-requests.schemas.js';

const tags = ['Auth requests'];
const BASE = '/organizations/:orgId/auth-requests';
const RIGHT =
  "Access: a confirmed member holding manageResetPassword (`orgPermission(manageResetPassword)`: owners, admins, custom members with it); non-members get 404, other members 403 (the official server answers 401). As for account recovery, an owner's requests are an owner's to answer, and an admin's an owner's or admin's: others neither see them nor answer them (404, or skipped in a batch).";
const ANSWER = `An approval pushes AuthRequestResponse to the asking device (anonymous hub) and mails the member; a denial does neither. Records OrganizationUser_ApprovedAuthRequest (1513) or OrganizationUser_RejectedAuthRequest (1514) on the member. ${RIGHT}`;

const docs = {
  create: {
    summary: 'Ask organization admins to approve this device',
    description:
      'A member signed in (through SSO, with trusted device encryption) on a device that holds no key asks the admins of their organizations: the same body as `POST /auth-requests`, with `type` 2 (AdminApproval; 400 otherwise) and the caller\'s own email (400 "User or known device not found." otherwise, as for a device the account never logged in from while AUTH_REQUESTS_KNOWN_DEVICES_ONLY is on). One request is made per organization the caller is an accepted or confirmed member of and enrolled in account recovery with (400 when none); the answer is the first. Records User_RequestedDeviceApproval (1010), and mails the approvers of each organization (members holding manageResetPassword). The same device asking again while its request to an organization is unanswered and unexpired gets that request back (same id) with the key and access code it sent now, and nothing is recorded or mailed. Each user may ask `RATE_LIMIT_DEVICE_APPROVAL` times (10 an hour by default; 429 with Retry-After beyond). The request can be answered for 7 days; an approval can be read (`GET /auth-requests/{id}`) for 12 hours. Access: a signed-in user of an official client (`application`).',
  },
  pending: {
    summary: "An organization's pending device approval requests",
    description: `The unanswered admin approval requests of the organization's members made in the last 7 days, with the member's email and membership id and the asking device. ${RIGHT}`,
  },
  answer: {
    summary: 'Approve or deny a device approval request',
    description: `Approves (\`requestApproved\` true, with \`encryptedUserKey\`: the member's user key wrapped with the request's public key; 400 naming it without) or denies one request. 404 for a request of another organization or past its 7 days; 400 "An authentication request with the same device already exists." once answered. ${ANSWER}`,
  },
  answerMany: {
    summary: 'Approve or deny several device approval requests',
    description: `A list of \`{id, approved, key}\`. Requests that cannot be answered (unknown, another organization's, answered, expired) are skipped and the rest answered, as officially; an approval without its key is refused (400 naming it) before anything is written. ${ANSWER}`,
  },
  deny: {
    summary: 'Deny several device approval requests',
    description: `Denies the requests of \`ids\`; ids of other organizations are skipped. An answered request refuses the batch (400) and an expired one answers 404, before anything is written. Records OrganizationUser_RejectedAuthRequest (1514) for each. ${RIGHT}`,
  },
} satisfies Record<string, RouteDoc>;

const lower = (id: string) => id.toLowerCase();

/** Device approvals by organization admins: the member's request, and the admins' list and answers (admin-requests.service.ts). */
export const adminRequestRoutes: FastifyPluginAsyncTypebox<{ adminRequests: AdminRequestService; orgAccess: OrgAccess }> = async (app, { adminRequests, orgAccess }) => {
  const recoverer = { config: { access: orgAccess.right('manageResetPassword') } };

  app.post(
    '/auth-requests/admin-request',
    { config: { access: access.application, callerLimit: 'deviceApproval' }, schema: { tags, ...docs.create, body: CreateAuthRequestBody, response: { 200: AuthRequestResponse } } },
    async (request) => adminRequests.create(userCaller(request), request.body),
  );

  app.get(BASE, { ...recoverer, schema: { tags, ...docs.pending, params: OrgParams, response: { 200: ListOf(PendingOrganizationAuthRequestResponse) } } }, async (request) =>
    list(await adminRequests.pending(memberCaller(request), lower(request.params.orgId))),
  );

  // Registered before `/:id` reads it: a static segment wins in Fastify's router either way.
  app.post(`${BASE}/deny`, { ...recoverer, schema: { tags, ...docs.deny, params: OrgParams, body: AdminDenyBody, response: { 200: EmptyResponse } } }, async (request, reply) => {
    await adminRequests.deny(memberCaller(request), lower(request.params.orgId), request.body.ids);
    return emptyOk(reply);
  });

  app.post(`${BASE}/:id`, { ...recoverer, schema: { tags, ...docs.answer, params: OrgIdParams, body: AdminAnswerBody, response: { 200: EmptyResponse } } }, async (request, reply) => {
    await adminRequests.answer(memberCaller(request), lower(request.params.orgId), lower(request.params.id), request.body);
    return emptyOk(reply);
  });

  app.post(BASE, { ...recoverer, schema: { tags, ...docs.answerMany, params: OrgParams, body: AdminAnswerManyBody, response: { 200: EmptyResponse } } }, async (request, reply) => {
    await adminRequests.answerMany(memberCaller(request), lower(request.params.orgId), request.body);
    return emptyOk(reply);
  });
};
