import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';

import { access } from '../../http/access.js';
import { userCaller } from '../../http/request-context.js';
import { EmptyResponse, emptyOk, IdParams } from '../../http/schemas.js';
import { DeviceKeysBody, ProtectedDeviceResponse, UntrustDevicesBody, UpdateDevicesTrustBody } from './device-trust.schemas.js';
import type { DeviceTrust } from './device-trust.service.js';
import type { createTdeOffboarding } from './tde-offboarding.js';
import { UpdateTempPasswordBody } from '../account-recovery/account-recovery.schemas.js';
import { DeviceIdentifierParams } from '../../http/schemas.js';
import { DeviceResponse } from './devices.schemas.js';

const tags = ['Devices'];
const OWN = 'Access: a signed-in user, for their own devices (another account\'s device is 404).';

const docs = {
  keys: {
    summary: 'Trust a device',
    description: `Stores the device's wrapped keys (the user key wrapped with the device's public key, that public key wrapped with the user key, the device's private key wrapped with its device key); the device is then trusted (docs/trusted-devices.md). ${OWN}`,
  },
  retrieveKeys: { summary: "A device's wrapped keys", description: `The device's wrapped user key and public key (the official ProtectedDeviceResponseModel). ${OWN}` },
  updateTrust: {
    summary: "Re-wrap the trusted devices' keys",
    description: `After a new user key: the asking device's (Device-Identifier) keys re-wrapped, and those of the other trusted devices the client re-wrapped; a trusted device left out is untrusted. The user is verified by the master password hash (\`masterPasswordHash\` or \`secret\`) or, as for an account without one, a code mailed by \`POST /accounts/request-otp\` (\`otp\`, or \`secret\`); a wrong or missing one is 400 "User verification failed.". The asking device and the list are checked first (404, 400), so a refused request does not spend the code. ${OWN}`,
  },
  untrust: { summary: 'Untrust devices', description: `The listed devices lose their wrapped keys; nothing changes when one of them is not the account's (404). ${OWN}` },
  lostTrust: {
    summary: 'Report a device that lost its trust',
    description: 'A client that holds a device key but received no keys at login reports it; the server logs it. Needs the Device-Identifier and Device-Type headers. Access: a signed-in user.',
  },
  deactivate: {
    summary: 'Remove a device',
    description: `The device leaves the account's list and loses its wrapped keys and push token; its refresh tokens stop working. Logging in from it again brings it back, untrusted. ${OWN}`,
  },
  offboarding: {
    summary: 'Set a master password when leaving trusted devices',
    description:
      'A member without a master password whose organization moved from trusted devices to master passwords sets one: `authenticationData` and `unlockData` (the account\'s salt; their KDF becomes the account\'s), or the obsolete `newMasterPasswordHash` and `key`, and `masterPasswordHint`. 400 when the account has a master password, is in no or several organizations that use SSO, or that organization\'s SSO is not configured for master passwords. Records User_TdeOffboardingPasswordSet (1011) and ends every session. Access: a signed-in user, on their own account.',
  },
};

/** Trusted device encryption's routes ({base_url}/devices/..., /accounts/update-tde-offboarding-password). */
export const deviceTrustRoutes: FastifyPluginAsyncTypebox<{ trust: DeviceTrust; offboarding: ReturnType<typeof createTdeOffboarding> }> = async (app, { trust, offboarding }) => {
  const user = { config: { access: access.user } };

  app.put('/devices/:identifier/keys', { ...user, schema: { tags, ...docs.keys, params: DeviceIdentifierParams, body: DeviceKeysBody, response: { 200: DeviceResponse } } }, async (request) =>
    trust.setKeys(userCaller(request), request.params.identifier, request.body),
  );

  app.post('/devices/:identifier/retrieve-keys', { ...user, schema: { tags, ...docs.retrieveKeys, params: DeviceIdentifierParams, response: { 200: ProtectedDeviceResponse } } }, async (request) =>
    trust.retrieveKeys(userCaller(request), request.params.identifier),
  );

  app.post('/devices/update-trust', { ...user, schema: { tags, ...docs.updateTrust, body: UpdateDevicesTrustBody, response: { 200: EmptyResponse } } }, async (request, reply) => {
    await trust.updateTrust(userCaller(request), request.body);
    return emptyOk(reply);
  });

  app.post('/devices/untrust', { ...user, schema: { tags, ...docs.untrust, body: UntrustDevicesBody, response: { 200: EmptyResponse } } }, async (request, reply) => {
    await trust.untrust(userCaller(request), request.body.devices);
    return emptyOk(reply);
  });

  app.post('/devices/lost-trust', { ...user, schema: { tags, ...docs.lostTrust, response: { 200: EmptyResponse } } }, async (request, reply) => {
    trust.lostTrust(userCaller(request));
    return emptyOk(reply);
  });

  const deactivate = { ...user, schema: { tags, ...docs.deactivate, params: IdParams, response: { 200: EmptyResponse } } };
  app.post('/devices/:id/deactivate', deactivate, async (request, reply) => {
    await trust.deactivate(userCaller(request), request.params.id);
    return emptyOk(reply);
  });
  app.delete('/devices/:id', { ...deactivate, schema: { ...deactivate.schema, summary: 'Remove a device (the current form)' } }, async (request, reply) => {
    await trust.deactivate(userCaller(request), request.params.id);
    return emptyOk(reply);
  });

  app.put(
    '/accounts/update-tde-offboarding-password',
    { ...user, schema: { tags: ['Accounts'], ...docs.offboarding, body: UpdateTempPasswordBody, response: { 200: EmptyResponse } } },
    async (request, reply) => {
      await offboarding(userCaller(request), request.body);
      return emptyOk(reply);
    },
  );
};
