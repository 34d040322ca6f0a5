import { Type } from 'typebox';

/** For phones and browsers: the mobile push relay and self-hosted Web Push (docs/notifications.md). */
export const pushSettings = {
  installationKey: Type.Optional(
    Type.String({
      secret: true,
      minLength: 1,
      description:
        'Self-hosted: this installation\'s key from https://bitwarden.com/host (with INSTALLATION_ID). With both set, changes reach the official mobile apps through Bitwarden\'s push relay; without them mobile push is off.',
    }),
  ),
  pushRelayUri: Type.String({
    default: 'https://push.bitwarden.com',
    pattern: '^https?://[^\\s/]+(/[^\\s]*)?$',
    expected: 'an http:// or https:// URL',
    description: 'The push relay the mobile apps\' notifications go through (https://push.bitwarden.eu for an installation id from the EU region).',
  }),
  pushIdentityUri: Type.String({
    default: 'https://identity.bitwarden.com',
    pattern: '^https?://[^\\s/]+(/[^\\s]*)?$',
    expected: 'an http:// or https:// URL',
    description: 'Where the relay\'s access token is asked for with the installation id and key (https://identity.bitwarden.eu for the EU region).',
  }),
  pushAudienceRefreshSeconds: Type.Integer({
    default: 15,
    minimum: 1,
    maximum: 3600,
    description:
      'How often each instance reads again which users have a phone registered with the relay or a browser subscribed to Web Push; pushes to other users are not sent. A device registered on another instance of a fleet is reached after at most this long (on the instance it registered with, at once).',
  }),
  webPushEnabled: Type.Boolean({
    default: true,
    description: 'Send Web Push to browser extensions with this server\'s own VAPID keys (no outside relay). false: the browsers keep the WebSocket hub only.',
  }),
  webPushAllowPrivateAddresses: Type.Boolean({
    default: false,
    description:
      'Web Push: accept subscriptions whose push service is on http, a private, loopback or link-local address, or localhost (a push service on your own network; tests). Off: the server never sends to such an address, checked again at connect time.',
  }),
  webPushSubject: Type.Optional(
    Type.String({
      pattern: '^(mailto:|https://)',
      expected: 'a mailto: address or an https:// URL',
      description: 'Web Push: the contact the browsers\' push services may reach about this server (VAPID subject). Default: PUBLIC_URL when it is https, else mailto:admin@ the server\'s host.',
    }),
  ),
};
