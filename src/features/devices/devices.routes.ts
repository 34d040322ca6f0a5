import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { access } from '../../http/access.js';
import { userCaller } from '../../http/request-context.js';
import { ListOf, list } from '../../http/schemas.js';
import { DeviceIdentifierParams } from '../../http/schemas.js';
import { DeviceResponse, KnownDeviceHeaders } from './devices.schemas.js';
import type { DeviceService } from './devices.service.js';

const tags = ['Devices'];

/** The device routes of the API service ({base_url}/devices/...). */
export const deviceRoutes: FastifyPluginAsyncTypebox<{ devices: DeviceService }> = async (app, { devices }) => {
  const user = { config: { access: access.user } };

  // The login page asks before the password is sent, to decide whether a new-device notice applies.
  app.get(
    '/devices/knowndevice',
    {
      config: { access: access.anonymous },
      schema: {
        summary: 'Is this a known device?',
        description:
          'true when the account named by X-Request-Email (base64url) has logged in from the device X-Device-Identifier; false otherwise, also for an unknown account.',
        tags,
        headers: KnownDeviceHeaders,
        response: { 200: Type.Boolean() },
      },
    },
    async (request) => devices.known(request.headers['x-request-email'], request.headers['x-device-identifier']),
  );

  app.get(
    '/devices',
    {
      ...user,
      schema: {
        summary: "The caller's devices",
        description: 'Every device the account has logged in from and has not removed, oldest first; a trusted device carries its wrapped keys (`isTrusted`, docs/trusted-devices.md), and a device with an unanswered login request its `devicePendingAuthRequest`.',
        tags,
        response: { 200: ListOf(DeviceResponse) },
      },
    },
    async (request) => list(await devices.list(userCaller(request))),
  );

  app.get(
    '/devices/identifier/:identifier',
    {
      ...user,
      schema: {
        summary: 'One of the caller’s devices by its identifier',
        description: "The device with this client-made identifier; 404 when the account has not logged in from it.",
        tags,
        params: DeviceIdentifierParams,
        response: { 200: DeviceResponse },
      },
    },
    async (request) => devices.byIdentifier(userCaller(request), request.params.identifier),
  );
};
