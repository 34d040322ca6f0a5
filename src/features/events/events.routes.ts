import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { list, ListOf } from '../../http/schemas.js';
import { membershipOf, type OrgAccess } from '../organizations/org-access.js';
import { EventQuery, EventResponse, OrgParams, toEventResponse } from './events.schemas.js';
import type { EventQueryService } from './events.service.js';

const tags = ['Events'];

/** The organization's audit log ({base_url}/organizations/{orgId}/events), for members who may read it. */
export const eventRoutes: FastifyPluginAsyncTypebox<{ events: EventQueryService; orgAccess: OrgAccess }> = async (app, { events, orgAccess }) => {
  app.get(
    '/organizations/:orgId/events',
    {
      config: { access: orgAccess.right('accessEventLogs') },
      schema: {
        tags,
        summary: "Read an organization's audit log",
        description:
          "Answers the organization's events newest first, 50 a page with a continuation token, optionally filtered by `actingUserId` or `itemId` (any resource an event is about); without both `start` and `end` the window is the last 30 days, reversed bounds are swapped and a window over 367 days is a 400. Access: a confirmed member holding accessEventLogs (`orgPermission(accessEventLogs)`: owners, admins, custom members with it); non-members get 404, other members 403.",
        params: OrgParams,
        querystring: EventQuery,
        response: { 200: ListOf(EventResponse) },
      },
    },
    async (request) => {
      const page = await events.organizationEvents(membershipOf(request).organizationId, request.query);
      return list(page.data.map(toEventResponse), page.continuationToken);
    },
  );
};
