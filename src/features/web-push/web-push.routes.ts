import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { access } from '../../http/access.js';
import { userCaller } from '../../http/request-context.js';
import { EmptyResponse, emptyOk, DeviceIdentifierParams } from '../../http/schemas.js';
import { WebPushAuthBody } from './web-push.schemas.js';
import type { WebPushSubscriptions } from './web-push.service.js';

const doc = {
  summary: "Register a device's Web Push subscription",
  description:
    "The browser extension (Manifest V3) sends its push subscription when /config advertises Web Push (`push.pushTechnology` 1 and this server's `vapidPublicKey`): the push service's `endpoint` (https) and the browser's keys `p256dh` (an uncompressed P-256 public key, base64url) and `auth` (16 bytes, base64url). The device's changes then reach it by Web Push instead of the WebSocket hub (docs/notifications.md). An endpoint on a private, loopback or link-local address is refused (400), as is a malformed key. Access: a signed-in user, for their own device (another account's device, or a removed one, is 404).",
};

/** `{base_url}/devices/identifier/{identifier}/web-push-auth`: PUT, and the obsolete POST the extension used before. */
export const webPushRoutes: FastifyPluginAsyncTypebox<{ subscriptions: WebPushSubscriptions }> = async (app, { subscriptions }) => {
  const route = { config: { access: access.user }, schema: { tags: ['Devices'], ...doc, params: DeviceIdentifierParams, body: WebPushAuthBody, response: { 200: EmptyResponse } } };
  app.put('/devices/identifier/:identifier/web-push-auth', route, async (request, reply) => {
    await subscriptions.register(userCaller(request), request.params.identifier, request.body);
    return emptyOk(reply);
  });
  // Releases of the extension up to 2025 POST (WebPushNotificationsApiService.putSubscription).
  app.post('/devices/identifier/:identifier/web-push-auth', { ...route, schema: { ...route.schema, summary: `${doc.summary} (the obsolete form)` } }, async (request, reply) => {
    await subscriptions.register(userCaller(request), request.params.identifier, request.body);
    return emptyOk(reply);
  });
};
