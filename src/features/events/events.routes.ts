import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { list, ListOf } from '../../http/schemas.js';
import { membershipOf, type OrgAccess } from '../organizations/org-access.js';
import { EventQuery, EventResponse, OrgParams, toEventResponse } from './events.schemas.js';
import type { EventQueryService } from './events.service.js';

const tags = ['events'];

/** The organization's audit log ({base_url}/organizations/{orgId}/events), for members who may read it. */
export const eventRoutes: FastifyPluginAsyncTypebox<{ events: EventQueryService; orgAccess: OrgAccess }> = async (app, { events, orgAccess }) => {
  app.get(
    '/organizations/:orgId/events',
    {
      config: { access: orgAccess.right('accessEventLogs') },
      schema: { tags, params: OrgParams, querystring: EventQuery, response: { 200: ListOf(EventResponse) } },
    },
    async (request) => {
      const page = await events.organizationEvents(membershipOf(request), request.query);
      return list(page.data.map(toEventResponse), page.continuationToken);
    },
  );
};
