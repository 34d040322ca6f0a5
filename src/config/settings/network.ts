import { Type } from 'typebox';

/** The systems around the server: a reverse proxy in front, Redis, notification clients, the event broker and integrations, mail. */
export const networkSettings = {
  trustProxy: Type.Boolean({
    default: false,
    description: 'Trust X-Forwarded-For/-Proto from a reverse proxy (for client IPs in audit events and rate limits).',
  }),
  redisUrl: Type.Optional(
    Type.String({
      pattern: '^rediss?://.+',
      expected: 'a redis:// or rediss:// URL',
      description: 'Redis for shared rate limits (every limit and the login throttle) and notification fan-out across instances.',
    }),
  ),
  notificationsKeepAliveSeconds: Type.Integer({
    minimum: 1,
    maximum: 15,
    default: 15,
    description:
      'Notifications hub: a SignalR ping goes out on a connection that carried nothing else for this long. The apps drop a connection silent for 30 s, so at most 15.',
  }),
  notificationsHeartbeatSeconds: Type.Integer({
    minimum: 1,
    maximum: 86400,
    default: 120,
    description: 'Notifications hub: how often every /hub connection gets the `Heartbeat` invocation, as the official server sends it (not sent on the anonymous hub).',
  }),
  notificationsMaxConnectionsPerUser: Type.Integer({
    minimum: 1,
    default: 50,
    description: 'Notifications hub: open connections one user may hold on this instance (each app, browser tab and device holds one); more are refused with 429.',
  }),
  notificationsMaxConnectionsPerIp: Type.Integer({
    minimum: 1,
    default: 1000,
    description: 'Notifications hub: open connections from one client IP on this instance (behind a proxy, set TRUST_PROXY); more are refused with 429.',
  }),
  notificationsMaxBufferedKilobytes: Type.Integer({
    minimum: 16,
    maximum: 65536,
    default: 256,
    description:
      'Notifications hub: unsent data a connection may hold before it is dropped, so that a client that stops reading never holds up pushes to the others.',
  }),
  amqpUrl: Type.Optional(
    Type.String({ pattern: '^amqps?://.+', expected: 'an amqp:// or amqps:// URL', description: 'AMQP broker (RabbitMQ) for forwarding events to integrations.' }),
  ),
  amqpPrefix: Type.String({
    minLength: 1,
    maxLength: 100,
    pattern: '^[A-Za-z0-9._-]+$',
    default: 'strongroom',
    description: 'Prefix of the exchange and queue names this deployment declares on the broker; deployments sharing a broker (virtual host) need different ones.',
  }),
  integrationsAllowPrivateAddresses: Type.Boolean({
    default: false,
    description:
      'Let integrations (webhooks, Slack, Teams, HEC, Datadog) reach loopback, private and link-local addresses. Off: such addresses are refused, whatever name resolves to them.',
  }),
  ssoAllowPrivateAddresses: Type.Boolean({
    default: false,
    description:
      "Let organizations' single sign-on identity providers be reached at loopback, private and link-local addresses (an IdP on your own network), and over plain http there. Off: such addresses are refused, whatever name resolves to them.",
  }),
  ssoTimeoutMs: Type.Integer({ minimum: 500, maximum: 60000, default: 10000, description: "Time limit of one request to an organization's identity provider (discovery, keys, code exchange, userinfo), in milliseconds." }),
  integrationsTimeoutMs: Type.Integer({ minimum: 100, maximum: 120000, default: 10000, description: 'Time limit of one delivery to an integration, connection to last byte, in milliseconds.' }),
  integrationsMaxRetries: Type.Integer({
    minimum: 0,
    maximum: 20,
    default: 6,
    description: 'Retries of a failed delivery (exponential backoff with jitter) before it is parked in the dead-letter queue.',
  }),
  integrationsRetryBaseMs: Type.Integer({ minimum: 10, maximum: 600000, default: 1000, description: 'First retry delay of a failed delivery; each later one doubles (up to an hour), with jitter.' }),
  integrationsPollMs: Type.Integer({ minimum: 10, maximum: 60000, default: 1000, description: 'How often the event relay looks for new events to forward when it has found none.' }),
  integrationsRelay: Type.Boolean({
    default: true,
    description: 'Run the event relay (forwarding to integrations) in this instance. One instance of a fleet relays at a time, whatever this says.',
  }),
  smtpHost: Type.Optional(
    Type.String({
      minLength: 1,
      description: 'SMTP server for invitation and notification mail. Unset: messages (with their links) are written to the log instead.',
    }),
  ),
  smtpPort: Type.Integer({ minimum: 1, maximum: 65535, default: 587, description: 'SMTP port.' }),
  smtpSecure: Type.Boolean({ default: false, description: 'Use implicit TLS (port 465). When off, STARTTLS is used if offered.' }),
  smtpUsername: Type.Optional(Type.String({ description: 'SMTP user name.' })),
  smtpPassword: Type.Optional(Type.String({ secret: true, description: 'SMTP password.' })),
  hibpApiKey: Type.Optional(
    Type.String({
      secret: true,
      minLength: 1,
      description:
        "Have I Been Pwned API key for the web vault's data breach report (GET /hibp/breach): the server looks the username up with this key, which never leaves the server. Get one at https://haveibeenpwned.com/API/Key (a paid subscription). Unset: the report answers that the lookup is not available.",
    }),
  ),
  hibpApiUrl: Type.String({
    pattern: '^https?://.+',
    expected: 'an http:// or https:// URL',
    default: 'https://haveibeenpwned.com/api/v3',
    description: 'Base URL of the Have I Been Pwned API the breach lookup calls (`{url}/breachedaccount/{username}`); change it only to go through a proxy of your own.',
  }),
  hibpCacheSeconds: Type.Integer({
    minimum: 0,
    maximum: 86400,
    default: 300,
    description: 'How long this instance keeps a breach lookup\'s answer (in memory, at most 1 MiB of answers) before asking Have I Been Pwned again; 0 keeps none.',
  }),
  smtpFrom: Type.String({ minLength: 3, default: 'Strongroom <no-reply@localhost>', description: 'Sender of outgoing mail.' }),
};
