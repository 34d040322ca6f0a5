import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { access } from '../../http/access.js';
import { anonymousCaller, userCaller } from '../../http/request-context.js';
import type { RouteDoc } from '../../http/route-docs.js';
import { IdParams, ListOf, list } from '../../http/schemas.js';
import type { AuthRequestService } from './auth-requests.service.js';
import {
  AnswerAuthRequestBody,
  AuthRequestResponse,
  CreateAuthRequestBody,
  PendingAuthRequestResponse,
  ResponseCodeQuery,
} from './auth-requests.schemas.js';

const tags = ['Auth requests'];

const USER = 'Access: a signed-in user of an official client (`application`), on their own requests only; another user\'s request answers 404.';
const docs = {
  create: {
    summary: 'Ask to log in with a device',
    description:
      "A device that cannot log in by itself asks to be let in: the account's email, the asking device's identifier and public key, and an access code it made (type 0 to log in, 1 to unlock; 2, admin approval, is refused with 400). Needs the Device-Type header (400 without). An unknown email, or a device the account never logged in from while AUTH_REQUESTS_KNOWN_DEVICES_ONLY is on, answers 400 \"User or known device not found.\" alike. The user's logged-in devices are told (AuthRequest push). Access: anonymous.",
  },
  list: { summary: "The caller's log-in requests", description: `Every log-in request made for the caller's account, newest first. ${USER}` },
  pending: {
    summary: "The caller's pending log-in requests",
    description: `Per asking device, its newest request of the last 15 minutes when it is still unanswered, with the caller's device id of the asking device when it has one. ${USER}`,
  },
  get: { summary: 'Read a log-in request', description: `One of the caller's log-in requests. ${USER}` },
  answer: {
    summary: 'Approve or deny a log-in request',
    description: `One of the caller's devices (\`deviceIdentifier\`, 400 "Invalid device." otherwise) approves a request by sending the user key encrypted to its public key (\`key\`), or denies it. One answer per request (400 after the first); 404 after its 15 minutes; an approval must be of the asking device's newest request (400 otherwise). An approval is pushed to the waiting device (AuthRequestResponse on the anonymous hub); a denial is not. ${USER}`,
  },
  response: {
    summary: 'Read the answer to a log-in request',
    description:
      'The asking device reads the answer with its access code (`code`): the encrypted key once approved, `requestApproved` false while pending or when denied. 404 for a wrong code, an unknown id or a request older than 15 minutes. Access: anonymous.',
  },
} satisfies Record<string, RouteDoc>;

/** `/auth-requests`: log in with a device (auth-requests.service.ts). */
export const authRequestRoutes: FastifyPluginAsyncTypebox<{ authRequests: AuthRequestService }> = async (app, { authRequests }) => {
  const user = { config: { access: access.application } };
  const anonymous = { config: { access: access.anonymous } };

  app.post('/auth-requests', { ...anonymous, schema: { tags, ...docs.create, body: CreateAuthRequestBody, response: { 200: AuthRequestResponse } } }, async (request) =>
    authRequests.create(anonymousCaller(request), request.body),
  );

  app.get('/auth-requests', { ...user, schema: { tags, ...docs.list, response: { 200: ListOf(AuthRequestResponse) } } }, async (request) =>
    list(await authRequests.list(userCaller(request))),
  );

  app.get('/auth-requests/pending', { ...user, schema: { tags, ...docs.pending, response: { 200: ListOf(PendingAuthRequestResponse) } } }, async (request) =>
    list(await authRequests.pending(userCaller(request))),
  );

  app.get('/auth-requests/:id', { ...user, schema: { tags, ...docs.get, params: IdParams, response: { 200: AuthRequestResponse } } }, async (request) =>
    authRequests.get(userCaller(request), request.params.id),
  );

  app.put(
    '/auth-requests/:id',
    { ...user, schema: { tags, ...docs.answer, params: IdParams, body: AnswerAuthRequestBody, response: { 200: AuthRequestResponse } } },
    async (request) => authRequests.answer(userCaller(request), request.params.id, request.body),
  );

  app.get(
    '/auth-requests/:id/response',
    { ...anonymous, schema: { tags, ...docs.response, params: IdParams, querystring: ResponseCodeQuery, response: { 200: AuthRequestResponse } } },
    async (request) => authRequests.response(request.params.id, request.query.code),
  );
};
