import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { access, currentUser } from '../../http/access.js';
import { userCaller } from '../../http/request-context.js';
import { emptyOk, EmptyResponse, Guid, Nullable } from '../../http/schemas.js';
import { takeCallerLimit } from '../rate-limits/rate-limit.hooks.js';
import type { RateLimits } from '../rate-limits/rate-limits.js';
import { COLLECT_MAX_EVENTS, type EventCollector } from './collect.js';

/** The official EventModel; other properties are ignored. */
const CollectedEventBody = Type.Object({
  type: Type.Integer({ description: 'EventType number' }),
  cipherId: Type.Optional(Nullable(Guid)),
  organizationId: Type.Optional(Nullable(Guid)),
  date: Type.Optional(Nullable(Type.String({ maxLength: 64, description: 'ISO 8601; missing means now' }))),
});

const CollectBody = Type.Array(CollectedEventBody, { minItems: 1, maxItems: COLLECT_MAX_EVENTS });
/** A full request of the official clients' events, with room for their longest ids and dates. */
export const COLLECT_BODY_LIMIT = 2 * 1024 * 1024;

/** `POST {events_url}/collect`: what clients report (items viewed, copied, autofilled, exports). */
export const collectRoutes: FastifyPluginAsyncTypebox<{ collector: EventCollector; limits: RateLimits }> = async (app, { collector, limits }) => {
  app.post(
    '/collect',
    {
      config: { access: access.application, callerLimit: 'collect' },
      bodyLimit: COLLECT_BODY_LIMIT,
      schema: {
        tags: ['Events'],
        summary: 'Report client events',
        description: `Takes a JSON array of 1 to ${COLLECT_MAX_EVENTS} events \`{type, cipherId?, organizationId?, date?}\` and answers 200 with an empty body. Logged: User_ClientExportedVault for the caller; the client cipher events (1107–1114, 1117, 1119–1132) for items the caller can access: their own, items in their collections, or items of \`organizationId\` when their role or permissions there let them read every item of it (owners, admins, custom users who may edit or delete any collection, export the vault or read reports), so a member is never logged about an item they cannot see; Organization_ClientExportedVault, AutoConfirmEnabled/Disabled_Admin and InviteLinkClientCopied, and ItemOrganization_Accepted/Declined and NotificationBannerActionClicked, for confirmed members of \`organizationId\`. Anything else is skipped silently, as the official server does. Dates later than now are stored as now; a date that is not ISO 8601 or older than 367 days is a 400 and nothing is written. A missing body, a non-array or an empty array is a 400. Access: a user token with scope \`api\` from a client login (\`amr\` Application or external); machine-account and organization tokens get 401.`,
        body: CollectBody,
        response: { 200: EmptyResponse },
      },
    },
    async (request, reply) => {
      const user = currentUser(request);
      // Each event is a row: what one user may upload is counted in events, not only in requests.
      await takeCallerLimit(limits, 'collectEvents', user, null, request.body.length);
      await collector.collect(userCaller(request), request.body);
      return emptyOk(reply);
    },
  );
};
