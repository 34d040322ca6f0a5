import type { FastifyPluginAsync } from 'fastify';
import { Type, type Static } from 'typebox';
import type { Config } from '../../config/config.js';
import { access } from '../../http/access.js';
import type { RouteDoc } from '../../http/route-docs.js';
import { STRONGROOM_VERSION } from '../../shared/version.js';
import { featureStates } from './feature-flags.js';

/** Clients compare this with their minimum server versions before using newer features. */
export const SERVER_VERSION = '2026.8.0';

const ConfigResponse = Type.Object({
  object: Type.Literal('config'),
  version: Type.String(),
  gitHash: Type.String(),
  // `version` is Strongroom's own release, for people; the clients read only name and url here.
  server: Type.Object({ name: Type.String(), url: Type.String(), version: Type.String() }),
  environment: Type.Object({
    cloudRegion: Type.Null(),
    vault: Type.String(),
    api: Type.String(),
    identity: Type.String(),
    notifications: Type.String(),
    sso: Type.String(),
  }),
  featureStates: Type.Record(Type.String(), Type.Unknown()),
  push: Type.Object({ pushTechnology: Type.Integer(), vapidPublicKey: Type.Null() }),
  settings: Type.Object({ disableUserRegistration: Type.Boolean(), suppressOnboardingInterstitials: Type.Boolean() }),
  communication: Type.Null(),
});

const configDoc: RouteDoc = {
  summary: 'Read the server configuration',
  description:
    'Answers the Bitwarden server version the clients compare (Strongroom\'s own release is `server.version`), the URLs of the vault, API, identity and notifications services, and whether registration is open, and in `featureStates` the client feature flags Strongroom turns on, from one table (docs/feature-flags.md); a flag left out is off in every client. The official clients read it before and after login and compare the version with their minimum server versions. Access: anonymous.',
};

/** The official ConfigResponseModel, from the settings. */
function toConfigResponse(config: Config): Static<typeof ConfigResponse> {
  const url = config.publicUrl;
  return {
    object: 'config',
    version: SERVER_VERSION,
    gitHash: 'strongrm',
    server: { name: 'Strongroom', url, version: STRONGROOM_VERSION },
    environment: {
      cloudRegion: null,
      vault: url,
      api: `${url}/api`,
      identity: `${url}/identity`,
      notifications: `${url}/notifications`,
      sso: '',
    },
    featureStates: featureStates(),
    push: { pushTechnology: 0, vapidPublicKey: null },
    settings: { disableUserRegistration: !config.registrationEnabled, suppressOnboardingInterstitials: false },
    communication: null,
  };
}

/** GET {base_url}/config: what the clients read before and after login. */
export const serverConfigRoutes: FastifyPluginAsync<{ config: Config }> = async (app, { config }) => {
  app.get('/config', { config: { access: access.anonymous }, schema: { tags: ['Configuration'], ...configDoc, response: { 200: ConfigResponse } } }, async () => toConfigResponse(config));
};
