import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { access } from '../../http/access.js';
import { userCaller } from '../../http/request-context.js';
import { olderForm, type RouteDoc } from '../../http/route-docs.js';
import { EmptyResponse, emptyOk, DeviceIdentifierParams } from '../../http/schemas.js';
import { PUSH_TOKEN_MAX_LENGTH, PUSH_TOKEN_PATTERN } from '../../platform/push/push-token.js';
import type { DeviceTokens } from './device-tokens.js';

const tags = ['Devices'];

/** The official DeviceTokenRequestModel: the token is optional, at most 255 characters. */
const DeviceTokenBody = Type.Object({
  // Apple's and Google's tokens are printable ASCII; anything else is not a token.
  pushToken: Type.Optional(Type.Union([Type.String({ maxLength: PUSH_TOKEN_MAX_LENGTH, pattern: PUSH_TOKEN_PATTERN }), Type.Null()], { description: "The app's push token (APNs or FCM, printable ASCII); empty or null clears it." })),
});

const docs: Record<'token' | 'clearToken', RouteDoc> = {
  token: {
    summary: "Set a device's push token",
    description:
      "The mobile app's push token for this device (Apple's or Google's); with the mobile push relay on (INSTALLATION_ID and INSTALLATION_KEY), the device is then registered with Bitwarden's relay after the change is saved. 404 when the account has not logged in from the device or removed it. Access: a signed-in user, for their own devices.",
  },
  clearToken: {
    summary: "Clear a device's push token",
    description:
      'The app on this device stops receiving pushes: every device with this identifier loses its push token and the relay forgets it. 404 when no device has the identifier. Access: anonymous, as officially (an app logging out may no longer hold a session).',
  },
};

/** `{base_url}/devices/identifier/{identifier}/token` and `.../clear-token` (PUT, and the obsolete POST). */
export const deviceTokenRoutes: FastifyPluginAsyncTypebox<{ tokens: DeviceTokens }> = async (app, { tokens }) => {
  const tokenUrl = '/devices/identifier/:identifier/token';
  const clearUrl = '/devices/identifier/:identifier/clear-token';
  for (const method of ['PUT', 'POST'] as const) {
    app.route({
      method,
      url: tokenUrl,
      config: { access: access.user },
      schema: { tags, ...(method === 'PUT' ? docs.token : olderForm(docs.token, 'PUT /devices/identifier/{identifier}/token')), params: DeviceIdentifierParams, body: DeviceTokenBody, response: { 200: EmptyResponse } },
      handler: async (request, reply) => {
        await tokens.setToken(userCaller(request), request.params.identifier, request.body.pushToken);
        return emptyOk(reply);
      },
    });
    app.route({
      method,
      url: clearUrl,
      config: { access: access.anonymous },
      schema: { tags, ...(method === 'PUT' ? docs.clearToken : olderForm(docs.clearToken, 'PUT /devices/identifier/{identifier}/clear-token')), params: DeviceIdentifierParams, response: { 200: EmptyResponse } },
      handler: async (request, reply) => {
        await tokens.clearToken(request.params.identifier);
        return emptyOk(reply);
      },
    });
  }
};
