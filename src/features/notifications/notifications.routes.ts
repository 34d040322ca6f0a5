import { randomUUID } from 'node:crypto';
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { access } from '../../http/access.js';
import type { RouteDoc } from '../../http/route-docs.js';
import type { Hub } from './hub.js';

const NegotiateResponse = Type.Object({
  connectionId: Type.String(),
  connectionToken: Type.String(),
  negotiateVersion: Type.Integer(),
  availableTransports: Type.Array(Type.Object({ transport: Type.String(), transferFormats: Type.Array(Type.String()) })),
});

const NegotiateQuery = Type.Object({ negotiateVersion: Type.Optional(Type.Integer({ minimum: 0 })) }, { additionalProperties: true });

const hubNegotiateDoc: RouteDoc = {
  summary: 'Negotiate a connection to the notifications hub',
  description:
    'The SignalR negotiate step, for SignalR clients that do not skip it (the official apps do and open the WebSocket at once: `GET /hub` with `Upgrade: websocket`, the token in `Authorization: Bearer` or the `access_token` query parameter). Offers the WebSockets transport only, in text (JSON protocol) and binary (MessagePack) formats; the `id` the client then sends is accepted and not needed. Access: a user token from a client login (scope `api`).',
};

const anonymousNegotiateDoc: RouteDoc = {
  summary: 'Negotiate a connection to the anonymous hub',
  description:
    'The SignalR negotiate step for `/anonymous-hub`, where a device waiting for its login request to be approved listens (`GET /anonymous-hub?Token=<auth request id>` with `Upgrade: websocket`). Offers the WebSockets transport only. Access: anonymous.',
};

function negotiation() {
  // The hub keeps no state between negotiate and connect: any id works, none is required.
  const id = randomUUID();
  return {
    connectionId: id,
    connectionToken: id,
    negotiateVersion: 1,
    availableTransports: [{ transport: 'WebSockets', transferFormats: ['Text', 'Binary'] }],
  };
}

/**
 * `/hub` and `/anonymous-hub`: the WebSocket upgrades are served by the hub on the HTTP
 * server's `upgrade` event (they never reach Fastify's router); here are the negotiate routes
 * and the hook that closes the hub's connections when the server stops.
 */
export const notificationsRoutes: FastifyPluginAsync<{ hub: Hub }> = async (app, { hub }) => {
  const base = app.prefix;
  hub.attach(app.server, { hub: `${base}/hub`, anonymousHub: `${base}/anonymous-hub` });
  // Before the server stops listening and waits for its connections: a Close message with reconnect allowed, then the WebSocket close.
  app.addHook('preClose', async () => hub.shutdown());

  app.post(
    '/hub/negotiate',
    { config: { access: access.application }, schema: { tags: ['Notifications'], ...hubNegotiateDoc, querystring: NegotiateQuery, response: { 200: NegotiateResponse } } },
    async () => negotiation(),
  );
  app.post(
    '/anonymous-hub/negotiate',
    {
      config: { access: access.anonymous },
      schema: { tags: ['Notifications'], ...anonymousNegotiateDoc, querystring: NegotiateQuery, response: { 200: NegotiateResponse } },
    },
    async () => negotiation(),
  );
};
