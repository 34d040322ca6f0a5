import { access } from '../../http/access.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { RouteDoc } from '../../http/route-docs.js';
import { Guid, list, ListOf, OrgIdParams } from '../../http/schemas.js';
import { EventQuery, EventResponse } from '../events/events.schemas.js';
import { smCaller } from './sm-access.js';
import type { SmEventService } from './sm-events.service.js';

const tags = ['Secrets Manager'];

/** `?start&end&continuationToken`, as the organization's event log pages. */
const PageQuery = Type.Omit(EventQuery, ['actingUserId', 'itemId']);

const PAGING = 'Newest first, 50 a page with a continuation token; without both `start` and `end` the window is the last 30 days, and more than 367 days is a 400.';
const LOG_READER =
  'a user token with scope api (`secretsManager`) of a confirmed member who may read the event log (owners, admins, custom members with accessEventLogs); anyone else, and an id of another organization, gets 404.';

const docs = {
  secret: {
    summary: "Read a secret's events",
    description: `Answers the organization's events about the secret. ${PAGING} Access: ${LOG_READER} The caller also needs Secrets Manager access and read access to the secret; the events of a secret deleted for good are for owners and admins.`,
  },
  project: { summary: "Read a project's events", description: `Answers the organization's events about the project. ${PAGING} Access: ${LOG_READER}` },
  account: {
    summary: "Read a machine account's events",
    description: `Answers the organization's events performed by the machine account or about it. ${PAGING} Access: ${LOG_READER}`,
  },
  accountOwn: {
    summary: "Read a machine account's events (machine-account page)",
    description: `Answers the events performed by the machine account or about it. ${PAGING} Access: a user token with scope api or a machine-account token with scope api.secrets (\`secretsManager\`) of a member with Secrets Manager access who can read the machine account (owners, admins, members granted it); anyone else gets 404.`,
  },
} satisfies Record<string, RouteDoc>;

/** Secrets Manager event routes; note the singular `organization` of the official paths. */
export const smEventRoutes: FastifyPluginAsyncTypebox<{ smEvents: SmEventService }> = async (app, { smEvents }) => {
  const config = { access: access.userOrServiceAccount };
  const response = { 200: ListOf(EventResponse) };
  const asList = (page: Awaited<ReturnType<SmEventService['itemEvents']>>) => list(page.data, page.continuationToken);

  app.get('/organization/:orgId/secrets/:id/events', { config, schema: { tags, ...docs.secret, params: OrgIdParams, querystring: PageQuery, response } }, async (request) =>
    asList(await smEvents.secretEvents(smCaller(request), request.params.orgId, request.params.id, request.query)),
  );
  app.get('/organization/:orgId/projects/:id/events', { config, schema: { tags, ...docs.project, params: OrgIdParams, querystring: PageQuery, response } }, async (request) =>
    asList(await smEvents.itemEvents(smCaller(request), 'project', request.params.orgId, request.params.id, request.query)),
  );
  app.get('/organization/:orgId/service-account/:id/events', { config, schema: { tags, ...docs.account, params: OrgIdParams, querystring: PageQuery, response } }, async (request) =>
    asList(await smEvents.itemEvents(smCaller(request), 'serviceAccount', request.params.orgId, request.params.id, request.query)),
  );
  app.get(
    '/sm/events/service-accounts/:serviceAccountId',
    { config, schema: { tags, ...docs.accountOwn, params: Type.Object({ serviceAccountId: Guid }), querystring: PageQuery, response } },
    async (request) => asList(await smEvents.machineAccountEvents(smCaller(request), request.params.serviceAccountId, request.query)),
  );
};
