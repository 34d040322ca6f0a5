import type { FastifyPluginAsync } from 'fastify';
import { Type, type Static } from 'typebox';
import type { Config } from '../../config/config.js';
import { access } from '../../http/access.js';
import type { RouteDoc } from '../../http/route-docs.js';
import { Nullable } from '../../http/schemas.js';
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
  // 0 SignalR (the hub), 1 Web Push with this key: the official PushTechnologyType and PushSettings.
  push: Type.Object({ pushTechnology: Type.Integer(), vapidPublicKey: Nullable(Type.String()) }),
  settings: Type.Object({ disableUserRegistration: Type.Boolean(), suppressOnboardingInterstitials: Type.Boolean() }),
  communication: Type.Null(),
});

const configDoc: RouteDoc = {
  summary: 'Read the server configuration',
  description:
    'Answers the Bitwarden server version the clients compare (Strongroom\'s own release is `server.version`), the URLs of the vault, API, identity and notifications services, and whether registration is open, and in `featureStates` the client feature flags Strongroom turns on, from one table (docs/feature-flags.md); a flag left out is off in every client, and in `push` how the browser extension is told of changes: `pushTechnology` 1 with this server\'s VAPID public key when Web Push is on (WEB_PUSH_ENABLED, docs/notifications.md), else 0 (the WebSocket hub). The official clients read it before and after login and compare the version with their minimum server versions. Access: anonymous.',
};

/** The official ConfigResponseModel, from the settings; `vapidPublicKey` when Web Push is on. */
function toConfigResponse(config: Config, vapidPublicKey: string | null): Static<typeof ConfigResponse> {
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
    // The extension subscribes to Web Push, and leaves the hub, when it reads 1 and a key here.
    push: vapidPublicKey ? { pushTechnology: 1, vapidPublicKey } : { pushTechnology: 0, vapidPublicKey: null },
    settings: { disableUserRegistration: !config.registrationEnabled, suppressOnboardingInterstitials: false },
    communication: null,
  };
}

export interface ServerConfigOptions {
  config: Config;
  /** Web Push's VAPID public key (features/web-push/vapid-keys.ts); absent or null: Web Push is off. */
  vapidPublicKey?: (() => Promise<string | null>) | undefined;
}

/** GET {base_url}/config: what the clients read before and after login. */
export const serverConfigRoutes: FastifyPluginAsync<ServerConfigOptions> = async (app, { config, vapidPublicKey }) => {
  app.get('/config', { config: { access: access.anonymous }, schema: { tags: ['Configuration'], ...configDoc, response: { 200: ConfigResponse } } }, async (request) => {
    let key: string | null = null;
    try {
      key = (await vapidPublicKey?.()) ?? null;
    } catch (error) {
      // The apps read /config before anything else: without the key they keep the hub.
      request.log.error({ err: error }, 'web push: the VAPID key could not be read; /config advertises the hub only');
    }
    return toConfigResponse(config, key);
  });
};
