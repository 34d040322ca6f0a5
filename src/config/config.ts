import { existsSync, readFileSync, statSync } from 'node:fs';
import { isIP } from 'node:net';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { parseEnv } from 'node:util';
import { Type, type Static, type TSchema } from 'typebox';
import Value from 'typebox/value';
import { parsePublicKeyList } from '../shared/public-keys.js';
import { CLOUD_IP_RULES, parseIpList, parseIpRules, type IpRule } from './rate-limit-settings.js';

/**
 * The one typed configuration schema. Every setting has a description and a safe default
 * (or is optional). The environment variable of a setting is its name in SCREAMING_SNAKE
 * case (`databaseUrl` -> `DATABASE_URL`); a JSON file named by `CONFIG_FILE` may carry the
 * same settings under their camelCase names, and the environment wins over the file.
 * This module is the only place that reads `process.env`.
 */

/** A per-caller limit as `requests/period` (`60/1m`; periods as in the IP rules), or `0` for none. */
function callerLimit(defaultValue: string, description: string) {
  return Type.String({ pattern: '^(0|[1-9][0-9]{0,8}/[1-9][0-9]{0,5}[smhd])$', default: defaultValue, description: `${description} 0 turns it off.` });
}

export const ConfigSchema = Type.Object({
  host: Type.String({
    minLength: 1,
    default: '127.0.0.1',
    description: 'Address to listen on. Use 0.0.0.0 to accept connections from other machines.',
  }),
  port: Type.Integer({ minimum: 0, maximum: 65535, default: 8080, description: 'TCP port to listen on (0 picks a free port).' }),
  tlsMode: Type.Optional(
    Type.Enum(['off', 'files', 'self-signed'], {
      description:
        'HTTPS, which the official bw client requires: off (plain HTTP, e.g. behind a TLS-terminating reverse proxy), files (TLS_CERT_FILE and TLS_KEY_FILE) or self-signed (a local certificate authority and a server certificate made once under DATA_DIR/tls; see docs/tls.md). Defaults to files when TLS_CERT_FILE is set, otherwise off.',
    }),
  ),
  tlsCertFile: Type.Optional(
    Type.String({
      minLength: 1,
      description:
        'Path to a PEM certificate (chain). With TLS_KEY_FILE the server speaks HTTPS (TLS_MODE=files). Leave unset for plain HTTP behind a reverse proxy.',
    }),
  ),
  tlsKeyFile: Type.Optional(Type.String({ minLength: 1, description: 'Path to the PEM private key of TLS_CERT_FILE.' })),
  tlsHostnames: Type.Optional(
    Type.String({
      minLength: 1,
      description:
        'TLS_MODE=self-signed: comma list of the host names and IP addresses the server certificate is for. Defaults to localhost, 127.0.0.1, ::1, the PUBLIC_URL host and HOST when it is a specific address.',
    }),
  ),
  publicUrl: Type.Optional(
    Type.String({
      pattern: '^https?://[^\\s/]+(/[^\\s]*)?$',
      expected: 'an http:// or https:// URL such as https://vault.example.com',
      description:
        'Public base URL that clients use (https://vault.example.com). Defaults to the listen address and scheme.',
    }),
  ),
  identityUrl: Type.Optional(
    Type.String({
      pattern: '^https?://[^\\s/]+(/[^\\s]*)?$',
      expected: 'an http:// or https:// URL such as https://vault.example.com/identity',
      description:
        'Public URL of the identity service, the issuer of access tokens. Defaults to PUBLIC_URL/identity (PUBLIC_URL when the identity service runs alone). Set it when the services run in separate processes.',
    }),
  ),
  // Checked by parseServices, which names the allowed services rather than a pattern.
  services: Type.String({
    default: 'all',
    description:
      'Services this process runs: "all", or a comma list of api, identity, events, notifications. A single service is mounted at / (its own base URL); several are mounted under /api, /identity, /events and /notifications.',
  }),
  dataDir: Type.String({ minLength: 1, default: './data', description: 'Directory for the embedded database and other local state.' }),
  webVaultDir: Type.Optional(
    Type.String({
      minLength: 1,
      description:
        'Folder holding a built Bitwarden web vault (its index.html at the top), served at / when the services run together under /api, /identity, ... Defaults to DATA_DIR/web-vault when that folder exists. Without one, / shows how to add it.',
    }),
  ),
  databaseUrl: Type.Optional(
    Type.String({
      pattern: '^(sqlite:.+|postgres(ql)?://.+)$',
      expected: 'sqlite:<path> or postgres://user:pass@host:port/db',
      description:
        'Database: sqlite:<path> (sqlite::memory: for a throw-away database) or postgres://user:pass@host:port/db. Defaults to sqlite:<DATA_DIR>/strongroom.sqlite.',
    }),
  ),
  databasePoolSize: Type.Integer({ minimum: 1, maximum: 200, default: 10, description: 'Connections in the PostgreSQL pool.' }),
  deployment: Type.Enum(['selfhosted', 'cloud'], {
    default: 'selfhosted',
    description: 'Deployment variant. Decides the variant-only operations, health and API documentation defaults.',
  }),
  secretsManager: Type.Boolean({ default: true, description: 'Serve the Secrets Manager endpoints (the commercial edition).' }),
  secretVersionsKept: Type.Integer({
    minimum: 1,
    default: 10,
    description: 'Secrets Manager: how many earlier values of each secret its history keeps; keeping one more drops the oldest (10, as the official server keeps).',
  }),
  environment: Type.Enum(['production', 'development'], {
    default: 'production',
    description: 'development turns on the API documentation and more detailed logs.',
  }),
  healthEnabled: Type.Optional(
    Type.Boolean({ description: 'Serve /healthz and /healthz/extended. Defaults to on for cloud, off for selfhosted.' }),
  ),
  apiDocsEnabled: Type.Optional(
    Type.Boolean({
      description: 'Serve the OpenAPI document and Swagger UI at /docs. Defaults to on for selfhosted and development, off for cloud.',
    }),
  ),
  registrationEnabled: Type.Boolean({
    default: true,
    description: 'Allow anyone to create an account. When off, only invited emails may register.',
  }),
  authRequestsKnownDevicesOnly: Type.Boolean({
    default: true,
    description:
      'Log in with a device: accept requests only from devices the account has logged in from before (the official default). Off: any device may ask; the user still approves each request.',
  }),
  passwordIterations: Type.Integer({
    minimum: 100000,
    maximum: 10000000,
    default: 600000,
    description: 'PBKDF2-SHA256 iterations for the server-side re-hash of master password hashes.',
  }),
  passwordHashingConcurrency: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 64,
      description:
        "Password hashes (PBKDF2, on registration, login and password checks) computed at once. They run on Node's thread pool (UV_THREADPOOL_SIZE, 4 by default), which token checks and file access share: keep this below it. Defaults to one fewer than the CPU cores, at most 2 (1 on a 2-core machine), so that a burst of logins leaves a core to every other request.",
    }),
  ),
  passwordHashingQueue: Type.Integer({
    minimum: 0,
    maximum: 100000,
    default: 64,
    description: 'Password hashes waiting their turn; past this a request that needs one is refused with 429 and Retry-After, so hashing can never starve requests that need none.',
  }),
  accessTokenLifetimeSeconds: Type.Integer({
    minimum: 60,
    maximum: 86400,
    default: 3600,
    description: 'Lifetime of access tokens issued by the identity service.',
  }),
  refreshTokenLifetimeDays: Type.Integer({
    minimum: 1,
    maximum: 365,
    default: 30,
    description: 'Sliding lifetime of refresh tokens.',
  }),
  loginAttemptsPerAccount: Type.Integer({
    minimum: 1,
    default: 10,
    description:
      'Failed password logins allowed for one account from one client address within LOGIN_ATTEMPT_WINDOW_SECONDS; past it that address must wait (one more attempt comes back every window / this count).',
  }),
  loginAttemptsPerAccountTotal: Type.Integer({
    minimum: 1,
    default: 100,
    description:
      'Failed password logins allowed for one account from all addresses together within LOGIN_ATTEMPT_WINDOW_SECONDS: the much higher ceiling against guessing from many addresses, set high so that a stranger cannot lock the owner out.',
  }),
  loginAttemptsPerIp: Type.Integer({
    minimum: 1,
    default: 50,
    description: 'Failed password logins allowed per client address, across accounts, within LOGIN_ATTEMPT_WINDOW_SECONDS.',
  }),
  loginAttemptWindowSeconds: Type.Integer({
    minimum: 1,
    default: 900,
    description: 'Window over which failed logins are counted (see docs/rate-limits.md).',
  }),
  publicApiRateLimit: Type.Integer({
    minimum: 0,
    maximum: 100000,
    default: 100,
    description:
      'Requests per minute each organization may make on the public API (/api/public, organization API key), as a token bucket refilling at this rate; 0 turns the limit off.',
  }),
  publicApiBurst: Type.Integer({
    minimum: 1,
    maximum: 100000,
    default: 20,
    description: 'Requests an organization may make at once on the public API (the size of its token bucket).',
  }),
  ipRateLimiting: Type.Optional(
    Type.Boolean({
      description:
        'Per-endpoint limits per client address (IP_RATE_LIMIT_RULES). Defaults to on for cloud, and on self-hosted only when IP_RATE_LIMIT_RULES is set.',
    }),
  ),
  ipRateLimitRules: Type.Optional(
    Type.String({
      minLength: 1,
      description:
        'The IP rules as a JSON array of {"Endpoint": "verb:path" ("*" matches anything), "Period": "1s|1m|10m|1h|1d", "Limit": n, "Service": "api|identity|events|notifications" (optional)}, e.g. [{"Endpoint":"post:/connect/token","Period":"1m","Limit":10,"Service":"identity"}]. Replaces the cloud defaults listed in docs/rate-limits.md.',
    }),
  ),
  ipRateLimitWhitelist: Type.Optional(
    Type.String({
      description: 'Comma list of client addresses and CIDR ranges (10.0.0.0/8, 2001:db8::/32) the IP rules never limit, such as load balancer health probes.',
    }),
  ),
  rateLimitCollect: callerLimit('60/1m', 'Client event uploads (POST /events/collect) each user may make: requests/period (the official clients upload once a minute from each device).'),
  rateLimitCollectEvents: callerLimit('20000/1h', 'Client events each user may upload: events/period, the burst at least one full request (10,000 events).'),
  rateLimitImport: callerLimit('20/1h', 'Imports (vault, Secrets Manager, directory sync) each caller may make: requests/period.'),
  rateLimitExport: callerLimit('60/1h', 'Exports (Secrets Manager, event log) each caller may make: requests/period.'),
  rateLimitBulk: callerLimit('120/1m', 'Bulk changes (move, delete, restore, purge, collections of many items; bulk deletes in Secrets Manager) each caller may make: requests/period.'),
  rateLimitOrganizationFactor: Type.Integer({
    minimum: 1,
    maximum: 100000,
    default: 10,
    description:
      'On routes of one organization, the import, export and bulk limits also apply to the organization as a whole, this many times over: its members together may make this many times what one may.',
  }),
  rateLimitRedisFailure: Type.Enum(['local', 'open', 'closed'], {
    default: 'local',
    description:
      'With REDIS_URL: what the limits and the login throttle do while Redis does not answer. local counts in each process (each instance enforces the limits alone), open lets requests through unlimited, closed refuses limited requests with 503.',
  }),
  rateLimitRedisTimeoutMs: Type.Integer({
    minimum: 10,
    maximum: 60000,
    default: 500,
    description: 'With REDIS_URL: how long one limit check waits for Redis before it counts as a timeout.',
  }),
  maxRedisTimeoutsThreshold: Type.Integer({
    minimum: 1,
    maximum: 100000,
    default: 10,
    description:
      'With REDIS_URL: Redis timeouts or connection failures within SLIDING_WINDOW_SECONDS after the first one that make the limits stop calling Redis until that window ends (RATE_LIMIT_REDIS_FAILURE applies meanwhile).',
  }),
  slidingWindowSeconds: Type.Integer({
    minimum: 1,
    maximum: 86400,
    default: 120,
    description: 'With REDIS_URL: the window, from the first Redis failure, over which failures are counted and Redis is then left alone.',
  }),
  rateLimitMemoryKeys: Type.Integer({
    minimum: 100,
    maximum: 100000000,
    default: 100000,
    description:
      'Counters kept in the process (without Redis, or in local failure mode), whatever callers send; past it the one unused longest is dropped. About 250 bytes each (25 MB for the default).',
  }),
  bodyLimitBytes: Type.Integer({
    minimum: 1024,
    maximum: 1073741824,
    default: 16777216,
    description:
      'Largest accepted request body, in bytes, on the routes that take large ones: vault and Secrets Manager imports, directory sync, client events.',
  }),
  authenticatedBodyLimitBytes: Type.Integer({
    minimum: 1024,
    maximum: 1073741824,
    default: 1048576,
    description: 'Largest accepted request body, in bytes, on the other routes that need a token (an item, a bulk change).',
  }),
  anonymousBodyLimitBytes: Type.Integer({
    minimum: 1024,
    maximum: 1073741824,
    default: 65536,
    description:
      'Largest accepted request body, in bytes, on routes anyone may call (registration, login, Send access, password hint): it is read before anything can refuse it.',
  }),
  headersTimeoutSeconds: Type.Integer({
    minimum: 1,
    maximum: 600,
    default: 20,
    description: "Time a client has to send a request's headers; a slower connection is closed.",
  }),
  requestTimeoutSeconds: Type.Integer({
    minimum: 1,
    maximum: 3600,
    default: 60,
    description: 'Time a client has to send a whole request, body included (408 after it). Raise it for large imports over slow links.',
  }),
  keepAliveTimeoutSeconds: Type.Integer({
    minimum: 1,
    maximum: 600,
    default: 10,
    description: 'Time an idle kept-alive connection stays open between requests.',
  }),
  maxConnectionsPerIp: Type.Integer({
    minimum: 0,
    maximum: 1000000,
    default: 100,
    description:
      'Open connections allowed from one client address; more are closed at once (0: no limit). Not applied with TRUST_PROXY, where every connection comes from the proxy: limit at the proxy.',
  }),
  sqliteSynchronous: Type.Union([Type.Literal('normal'), Type.Literal('full')], {
    default: 'normal',
    description:
      "SQLite only. 'normal': a commit survives a crash of the server process (kill -9 included) but the last commits before a power loss or operating-system crash may be lost; about 0.1 ms a commit. 'full': every commit is synced to disk and survives a power loss too, at the disk's sync cost (about 7 ms a commit on our test machines), which caps writes at a few hundred a second.",
  }),
  sqliteCacheMegabytes: Type.Integer({
    minimum: 1,
    maximum: 65536,
    default: 2,
    description:
      "SQLite only. Megabytes of database pages the server keeps in memory; reads beyond them come from the operating system's file cache. The memory stays with the process once filled (reading a large vault once fills it), so more costs memory for good and measured no faster on our test machines.",
  }),
  postgresPreparedStatements: Type.Boolean({
    default: true,
    description:
      'PostgreSQL only. Prepare the statements the server sends again and again (those with parameters that name their columns, up to 200 a connection), so that PostgreSQL does not parse and plan them on every request (about a fifth less of its CPU on an item write). Turn off when a connection pooler in transaction mode sits in front of PostgreSQL and does not carry prepared statements between its connections (PgBouncer before 1.21, or later ones without max_prepared_statements).',
  }),
  syncCacheMegabytes: Type.Integer({
    minimum: 0,
    maximum: 65536,
    default: 64,
    description:
      "Memory for sync's encoded items: half for whole vault sections, reused while a vault is unchanged and patched with only the changed items after a change; half for the shared part of each item of vaults with organization collections (kept under its version, so that after a change only the changed items are read again). 0 turns both off: every sync reads and encodes every item. A 10,000-item vault takes about 20 MB.",
  }),
  cacheIdleMinutes: Type.Integer({
    minimum: 0,
    maximum: 1440,
    default: 5,
    description:
      "Minutes after which what the sync and Secrets Manager caches hold for nobody is dropped and its memory given back: an entry goes between this and twice this after its last use, and the next request builds it again (a 10,000-item vault's next sync then reads every item, about 0.1-0.2 s). 0 keeps entries until their cache's budget pushes them out.",
  }),
  secretsCacheMegabytes: Type.Integer({
    minimum: 0,
    maximum: 65536,
    default: 64,
    description:
      "Memory for encoded Secrets Manager answers (listings, machine syncs, get-by-ids), reused while an organization's secrets and projects are unchanged (0 turns it off). 10,000 secrets listed take about 5 MB.",
  }),
  eventRetentionDays: Type.Integer({
    minimum: 0,
    maximum: 36500,
    default: 0,
    description:
      'Days audit events are kept; older ones are deleted in the background, hourly, by one instance of the fleet at a time. 0 keeps them forever.',
  }),
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
  smtpPassword: Type.Optional(Type.String({ description: 'SMTP password.' })),
  smtpFrom: Type.String({ minLength: 3, default: 'Strongroom <no-reply@localhost>', description: 'Sender of outgoing mail.' }),
  licenseIssuerPublicKeys: Type.Optional(
    Type.String({
      description:
        'Self-hosted: public keys of license issuers this server trusts, besides its own issuer key (see `strongroom license issuer-key`). PEM "BEGIN PUBLIC KEY" blocks, a JWK, a JWK set or a JSON array of PEM strings and JWKs; Ed25519, RSA or EC.',
    }),
  ),
  installationId: Type.Optional(
    Type.String({
      pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$',
      expected: 'a GUID such as 6f1c0a52-6f5d-4c43-9d1e-2b1f2a6e4c11',
      description: 'Self-hosted: this installation\'s id (a GUID). When set, a license bound to another installation is refused.',
    }),
  ),
  logLevel: Type.Enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
    default: 'info',
    description: 'Log level.',
  }),
  metricsEnabled: Type.Boolean({
    default: false,
    description:
      'Serve GET /metrics in the Prometheus text format (requests, latencies, errors, database pool, caches, rate limits, hub, outbox, logins). Needs METRICS_TOKEN or METRICS_ALLOWED_ADDRESSES; see docs/operations.md.',
  }),
  metricsToken: Type.Optional(
    Type.String({
      minLength: 16,
      description: 'With METRICS_ENABLED: the bearer token the scraper must send (Authorization: Bearer <token>), at least 16 characters.',
    }),
  ),
  metricsAllowedAddresses: Type.Optional(
    Type.String({
      minLength: 1,
      description:
        'With METRICS_ENABLED: comma list of addresses and CIDR ranges (10.0.0.0/8, ::1) that may read /metrics, checked against the connecting address (never X-Forwarded-For). With METRICS_TOKEN too, both must match.',
    }),
  ),
  shutdownTimeoutSeconds: Type.Integer({
    minimum: 1,
    maximum: 600,
    default: 25,
    description: 'On SIGTERM, how long in-flight requests may take before the process exits anyway.',
  }),
  serverName: Type.String({
    minLength: 1,
    maxLength: 100,
    default: 'Strongroom',
    description: 'The name account mails (two-step login codes, verification, new-device notices) give this server.',
  }),
  twoFactorRememberDays: Type.Integer({
    minimum: 1,
    maximum: 365,
    default: 30,
    description: 'Two-step login: how long a "remember this device" token lets its device skip the second step (a security-stamp change ends them all).',
  }),
  requireVerifiedEmail: Type.Boolean({
    default: false,
    description: 'Refuse password logins until the account has verified its email address (a verification link is mailed when one is refused).',
  }),
  newDeviceLoginMail: Type.Boolean({
    default: true,
    description: 'Mail the account when it logs in from a device it never used (not in its first ten minutes). Without SMTP the notice goes to the log.',
  }),
  newDeviceVerification: Type.Boolean({
    default: false,
    description:
      'The official new-device verification: an account without two-step login, older than a day, that logs in from a new device must enter a code mailed to it (NewDeviceOtp). Needs working mail.',
  }),
  adminToken: Type.Optional(
    Type.String({
      pattern: '^\\$argon2id\\$v=19\\$m=\\d+,t=\\d+,p=\\d+\\$[A-Za-z0-9+/]+\\$[A-Za-z0-9+/]+$',
      expected: 'an Argon2id PHC string ($argon2id$v=19$m=…) as `strongroom admin-token` prints it, never the token itself',
      description:
        'The admin console at /admin (docs/admin-console.md): the Argon2id hash (PHC string) of the operator\'s sign-in token, made with `strongroom admin-token`. Unset: the console is off and /admin answers 404.',
    }),
  ),
  adminEnabled: Type.Boolean({
    default: true,
    description: 'Serve the admin console at /admin when ADMIN_TOKEN is set. false turns it off entirely (404) whatever ADMIN_TOKEN says.',
  }),
  adminAllowedIps: Type.Optional(
    Type.String({
      description:
        'Comma list of client addresses and CIDR ranges (127.0.0.1, 10.0.0.0/8, ::1) that may reach the admin console; others get 403. Unset: any address. Behind a reverse proxy set TRUST_PROXY so the client address is known.',
    }),
  ),
  adminSessionMinutes: Type.Integer({
    minimum: 1,
    maximum: 1440,
    default: 20,
    description: 'How long an admin console sign-in lasts; after it the operator signs in again.',
  }),
  filesDir: Type.Optional(
    Type.String({
      minLength: 1,
      description: 'Directory for attachment and Send files (the encrypted bytes the clients upload). Defaults to DATA_DIR/files.',
    }),
  ),
  attachmentUserQuotaMb: Type.Integer({
    minimum: 0,
    maximum: 10_485_760,
    default: 1024,
    description: "Storage each user's personal item attachments may take, in MB (organizations have their plan's storage).",
  }),
  fileMaxMb: Type.Integer({
    minimum: 1,
    maximum: 500,
    default: 500,
    description: 'Largest attachment or Send file, in MB (500 as the official server).',
  }),
  fileStorage: Type.Enum(['local', 's3'], {
    default: 'local',
    description: 'Where attachment and Send files live: local (FILES_DIR) or s3 (an S3-compatible bucket, S3_BUCKET, for several instances).',
  }),
  s3Bucket: Type.Optional(Type.String({ minLength: 1, description: 'FILE_STORAGE=s3: the bucket.' })),
  s3Region: Type.String({ minLength: 1, default: 'us-east-1', description: "FILE_STORAGE=s3: the bucket's region." }),
  s3Endpoint: Type.Optional(
    Type.String({
      pattern: '^https?://[^\\s]+$',
      expected: 'an http:// or https:// URL such as http://127.0.0.1:9000',
      description: 'FILE_STORAGE=s3: the URL of an S3-compatible service (MinIO, Ceph, R2, …); AWS S3 when unset.',
    }),
  ),
  s3ForcePathStyle: Type.Boolean({ default: false, description: 'FILE_STORAGE=s3: address the bucket in the path (most S3-compatible services want this).' }),
  s3AccessKeyId: Type.Optional(Type.String({ minLength: 1, description: 'FILE_STORAGE=s3: access key id (else the AWS default credential chain).' })),
  s3SecretAccessKey: Type.Optional(Type.String({ minLength: 1, description: 'FILE_STORAGE=s3: secret access key.' })),
  s3Prefix: Type.String({ default: '', description: 'FILE_STORAGE=s3: put before every object key, e.g. strongroom/.' }),
  sendAccessPerMinute: Type.Integer({
    minimum: 0,
    maximum: 100_000,
    default: 60,
    description: 'Send accesses (opening a Send, fetching its file, asking for its access token) one client address may make a minute; 0 turns the limit off.',
  }),
  sendPurgeIntervalSeconds: Type.Integer({
    minimum: 1,
    maximum: 86_400,
    default: 600,
    description:
      'How often the Send purge looks for Sends past their deletion date (one instance of a fleet does it, the holder of its lease; the others skip).',
  }),
  otelEnabled: Type.Boolean({
    default: false,
    description:
      'Send OpenTelemetry traces: one span per request (its route pattern, method and status) with a span per database statement under it, over OTLP/HTTP to OTEL_EXPORTER_OTLP_ENDPOINT. Off: the OpenTelemetry SDK is not even loaded. See docs/operations.md.',
  }),
  otelExporterOtlpEndpoint: Type.String({
    pattern: '^https?://[^\\s]+$',
    expected: 'an http:// or https:// URL such as http://collector:4318',
    default: 'http://localhost:4318',
    description: 'With OTEL_ENABLED: the base URL of the OTLP/HTTP receiver (an OpenTelemetry Collector, Jaeger, Tempo, …); traces go to its /v1/traces.',
  }),
  otelExporterOtlpHeaders: Type.Optional(
    Type.String({
      pattern: '^[^=,\\s]+=[^,]*(,[^=,\\s]+=[^,]*)*$',
      expected: 'key=value pairs separated by commas, such as authorization=Bearer abc',
      description: 'With OTEL_ENABLED: headers sent with every export, as comma-separated key=value pairs (an API key of a hosted tracing service).',
    }),
  ),
  otelTracesSamplerArg: Type.Number({
    minimum: 0,
    maximum: 1,
    default: 1,
    description:
      'With OTEL_ENABLED: the share of requests traced, 0 to 1 (OpenTelemetry\'s parentbased_traceidratio sampler and its argument): a request arriving with a sampled W3C traceparent is traced whatever it says. Below 1 it cuts the cost of tracing (docs/operations.md).',
  }),
  otelServiceName: Type.String({
    minLength: 1,
    default: 'strongroom',
    description: 'With OTEL_ENABLED: the service.name the traces carry. Each process adds its own service.instance.id, so the instances of a fleet share one name.',
  }),
});

type RawConfig = Static<typeof ConfigSchema>;

export type ServiceName = 'api' | 'identity' | 'events' | 'notifications';
export const ALL_SERVICES: readonly ServiceName[] = ['api', 'identity', 'events', 'notifications'];

export type TlsMode = 'off' | 'files' | 'self-signed';

export interface Config
  extends Omit<
    RawConfig,
    | 'services'
    | 'databaseUrl'
    | 'healthEnabled'
    | 'apiDocsEnabled'
    | 'publicUrl'
    | 'identityUrl'
    | 'tlsMode'
    | 'tlsHostnames'
    | 'webVaultDir'
    | 'ipRateLimiting'
    | 'ipRateLimitRules'
    | 'ipRateLimitWhitelist'
    | 'metricsAllowedAddresses'
    | 'passwordHashingConcurrency'
  > {
  /** Addresses and CIDR ranges that may read /metrics (empty: any, when a token is set). */
  metricsAllowedAddresses: string[];
  /** Whether the IP rules apply (cloud default, or rules configured). */
  ipRateLimiting: boolean;
  /** The IP rules in force: IP_RATE_LIMIT_RULES, or the cloud defaults. */
  ipRateLimitRules: readonly IpRule[];
  /** Addresses and CIDR ranges the IP rules never limit. */
  ipRateLimitWhitelist: string[];
  /** How HTTPS is served; `off` is plain HTTP. */
  tlsMode: TlsMode;
  /** TLS_MODE=self-signed: the names (DNS or IP) the generated server certificate must cover. */
  tlsHostnames: string[];
  identityUrl: string;
  services: readonly ServiceName[];
  /** True when the services are mounted under their prefixes (/api, /identity, ...). */
  servicePrefixes: boolean;
  databaseUrl: string;
  healthEnabled: boolean;
  apiDocsEnabled: boolean;
  publicUrl: string;
  selfHosted: boolean;
  /** Absolute path of the web vault folder, or null when none is configured or found. */
  webVaultDir: string | null;
  /** PASSWORD_HASHING_CONCURRENCY, or its default for this machine (defaultHashingConcurrency). */
  passwordHashingConcurrency: number;
}

/**
 * Password hashes computed at once when PASSWORD_HASHING_CONCURRENCY is not set: one fewer than
 * the CPU cores, at most 2. Each hash keeps a core busy for its whole time (600,000 iterations:
 * about 0.3 s), so on a 2-core machine two at once left the event loop competing for the cores
 * and doubled the latency of other requests during a burst of logins (docs/benchmarks.md).
 */
export function defaultHashingConcurrency(cores = availableParallelism()): number {
  return Math.min(2, Math.max(1, cores - 1));
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

export function envName(key: string): string {
  return key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();
}

function schemaKind(schema: TSchema): 'integer' | 'number' | 'boolean' | 'string' {
  const type = (schema as { type?: unknown }).type;
  if (type === 'integer' || type === 'number' || type === 'boolean') return type;
  return 'string';
}

/** Turns an environment string into the setting's type; undefined means "cannot". */
function coerce(kind: ReturnType<typeof schemaKind>, text: string): unknown {
  const value = text.trim();
  switch (kind) {
    case 'integer':
    case 'number':
      return /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : text;
    case 'boolean':
      if (/^(true|1|yes|on)$/i.test(value)) return true;
      if (/^(false|0|no|off)$/i.test(value)) return false;
      return text;
    default:
      return text;
  }
}

function readConfigFile(path: string, problems: string[]): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(readFileSync(path, 'utf8'));
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
    problems.push(`CONFIG_FILE: ${path} must hold a JSON object`);
  } catch (error) {
    problems.push(`CONFIG_FILE: cannot read ${path}: ${(error as Error).message}`);
  }
  return {};
}

/**
 * Reads settings from the environment (and CONFIG_FILE), applies defaults and reports every
 * invalid setting at once.
 */
/** The database when DATABASE_URL is not set: a SQLite file in the data directory. */
export function defaultDatabaseUrl(dataDir: string): string {
  return `sqlite:${dataDir.replace(/\/+$/, '')}/strongroom.sqlite`;
}

/** Where local attachment and Send files live: FILES_DIR, or DATA_DIR/files. */
export function filesDirOf(config: Pick<Config, 'filesDir' | 'dataDir'>): string {
  return config.filesDir ?? join(config.dataDir, 'files');
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const problems: string[] = [];
  const properties = ConfigSchema.properties as Record<string, TSchema>;
  const fromFile = env.CONFIG_FILE ? readConfigFile(env.CONFIG_FILE, problems) : {};

  for (const key of Object.keys(fromFile)) {
    if (!(key in properties)) problems.push(`CONFIG_FILE: unknown setting "${key}"`);
  }

  const raw: Record<string, unknown> = {};
  for (const [key, schema] of Object.entries(properties)) {
    const fromEnv = env[envName(key)];
    if (fromEnv !== undefined && fromEnv !== '') raw[key] = coerce(schemaKind(schema), fromEnv);
    else if (fromFile[key] !== undefined) raw[key] = fromFile[key];
    else if ('default' in schema) raw[key] = schema.default;
  }

  for (const error of Value.Errors(ConfigSchema, raw)) {
    const key = error.instancePath.replace(/^\//, '').split('/')[0] ?? '';
    if (!key) continue;
    problems.push(`${envName(key)}: ${problemText(error, properties[key])} (got ${shownValue(key, raw[key])})`);
  }
  const services = typeof raw.services === 'string' ? parseServices(raw.services) : [];
  if (typeof raw.services === 'string' && typeof services === 'string') {
    problems.push(`SERVICES: ${services} (got ${JSON.stringify(raw.services)})`);
  }
  if (problems.length > 0 || typeof services === 'string') throw new ConfigError(dedupe(problems));

  const parsed = raw as RawConfig;
  const tlsMode = resolveTlsMode(parsed, problems);
  if (parsed.fileStorage === 's3' && parsed.s3Bucket === undefined) problems.push('S3_BUCKET: required when FILE_STORAGE is s3');
  if (parsed.smtpUsername !== undefined && parsed.smtpHost === undefined) {
    problems.push('SMTP_HOST: required when SMTP_USERNAME is set');
  }
  if (parsed.licenseIssuerPublicKeys !== undefined) {
    try {
      parsePublicKeyList(parsed.licenseIssuerPublicKeys);
    } catch (error) {
      problems.push(`LICENSE_ISSUER_PUBLIC_KEYS: ${(error as Error).message}`);
    }
  }
  const webVaultDir = resolveWebVaultDir(parsed.webVaultDir, parsed.dataDir, problems);
  const ipRules = parsed.ipRateLimitRules === undefined ? { rules: CLOUD_IP_RULES, problems: [] } : parseIpRules(parsed.ipRateLimitRules);
  for (const problem of ipRules.problems) problems.push(`IP_RATE_LIMIT_RULES: ${problem}`);
  const whitelist = parseIpList(parsed.ipRateLimitWhitelist ?? '');
  for (const problem of whitelist.problems) problems.push(`IP_RATE_LIMIT_WHITELIST: ${problem}`);
  const metricsAddresses = parseIpList(parsed.metricsAllowedAddresses ?? '');
  for (const problem of metricsAddresses.problems) problems.push(`METRICS_ALLOWED_ADDRESSES: ${problem}`);
  if (parsed.metricsEnabled && parsed.metricsToken === undefined && metricsAddresses.entries.length === 0) {
    problems.push('METRICS_ENABLED: set METRICS_TOKEN (a bearer token the scraper sends) or METRICS_ALLOWED_ADDRESSES (who may scrape), or both');
  }
  for (const problem of parseIpList(parsed.adminAllowedIps ?? '').problems) problems.push(`ADMIN_ALLOWED_IPS: ${problem}`);
  if (problems.length > 0) throw new ConfigError(problems);

  const cloud = parsed.deployment === 'cloud';
  const scheme = tlsMode === 'off' ? 'http' : 'https';
  const listenHost = anyAddress(parsed.host) ? 'localhost' : parsed.host;
  const urlHost = isIP(listenHost) === 6 ? `[${listenHost}]` : listenHost;
  const publicUrl = (parsed.publicUrl ?? `${scheme}://${urlHost}:${parsed.port}`).replace(/\/+$/, '');
  const tlsHostnames = resolveTlsHostnames(parsed, tlsMode, publicUrl, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  const identityAlone = services.length === 1 && services[0] === 'identity';
  return {
    ...parsed,
    tlsMode,
    tlsHostnames,
    services,
    servicePrefixes: services.length > 1,
    databaseUrl: parsed.databaseUrl ?? defaultDatabaseUrl(parsed.dataDir),
    healthEnabled: parsed.healthEnabled ?? cloud,
    apiDocsEnabled: parsed.apiDocsEnabled ?? (!cloud || parsed.environment === 'development'),
    passwordHashingConcurrency: parsed.passwordHashingConcurrency ?? defaultHashingConcurrency(),
    publicUrl,
    identityUrl: (parsed.identityUrl ?? (identityAlone ? publicUrl : `${publicUrl}/identity`)).replace(/\/+$/, ''),
    installationId: parsed.installationId?.toLowerCase(),
    selfHosted: !cloud,
    webVaultDir,
    ipRateLimiting: parsed.ipRateLimiting ?? (cloud || parsed.ipRateLimitRules !== undefined),
    ipRateLimitRules: ipRules.rules,
    ipRateLimitWhitelist: whitelist.entries,
    metricsAllowedAddresses: metricsAddresses.entries,
  };
}

/**
 * The web vault folder: the one named, or DATA_DIR/web-vault when it exists. A folder without
 * index.html at its top is reported, since an archive unpacked one level too deep is the usual
 * mistake and would otherwise serve nothing but 404s.
 */
function resolveWebVaultDir(configured: string | undefined, dataDir: string, problems: string[]): string | null {
  const dir = resolve(configured ?? join(dataDir, 'web-vault'));
  if (configured === undefined && !existsSync(dir)) return null;
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    problems.push(`WEB_VAULT_DIR: ${dir} is not a folder`);
    return null;
  }
  if (!existsSync(join(dir, 'index.html'))) {
    problems.push(`WEB_VAULT_DIR: ${dir} has no index.html (unpack the web vault so that index.html is at its top)`);
    return null;
  }
  return dir;
}

/** TLS_MODE, or what the certificate settings imply; contradictions are problems. */
function resolveTlsMode(parsed: RawConfig, problems: string[]): TlsMode {
  const files = parsed.tlsCertFile !== undefined || parsed.tlsKeyFile !== undefined;
  if ((parsed.tlsCertFile === undefined) !== (parsed.tlsKeyFile === undefined)) {
    problems.push('TLS_CERT_FILE and TLS_KEY_FILE: set both or neither');
  }
  const mode = parsed.tlsMode ?? (files ? 'files' : 'off');
  if (mode === 'off' && files) {
    problems.push('TLS_MODE: "off" contradicts TLS_CERT_FILE/TLS_KEY_FILE; unset them for plain HTTP, or use TLS_MODE=files');
  }
  if (mode === 'self-signed' && files) {
    problems.push(
      'TLS_MODE: "self-signed" makes its own certificate under DATA_DIR/tls; unset TLS_CERT_FILE and TLS_KEY_FILE, or use TLS_MODE=files to serve them',
    );
  }
  if (mode === 'files' && !files) problems.push('TLS_MODE: "files" needs TLS_CERT_FILE and TLS_KEY_FILE');
  if (parsed.tlsHostnames !== undefined && mode !== 'self-signed') {
    problems.push(`TLS_HOSTNAMES: only used with TLS_MODE=self-signed (TLS_MODE is "${mode}")`);
  }
  return mode;
}

const DNS_NAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

function anyAddress(host: string): boolean {
  return host === '0.0.0.0' || host === '::';
}

/** `[::1]` -> `::1`, `Vault.Example.` -> `vault.example`. */
function normalizeHostname(name: string): string {
  return name.trim().replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '').toLowerCase();
}

/**
 * The names a self-signed server certificate covers (none in other modes): TLS_HOSTNAMES, or the
 * loopback names plus the PUBLIC_URL host and a specific listen address. Every entry is a DNS
 * name or an IP address.
 */
function resolveTlsHostnames(parsed: RawConfig, mode: TlsMode, publicUrl: string, problems: string[]): string[] {
  if (mode !== 'self-signed') return [];
  let publicHost: string;
  try {
    publicHost = normalizeHostname(new URL(publicUrl).hostname);
  } catch {
    problems.push(`PUBLIC_URL: not a valid URL (got ${JSON.stringify(publicUrl)})`);
    return [];
  }
  if (parsed.tlsHostnames === undefined) {
    const names = ['localhost', '127.0.0.1', '::1', publicHost];
    if (!anyAddress(parsed.host)) names.push(normalizeHostname(parsed.host));
    return dedupe(names.filter((name) => isIP(name) !== 0 || DNS_NAME.test(name)));
  }
  const names = dedupe(parsed.tlsHostnames.split(',').map(normalizeHostname).filter(Boolean));
  for (const name of names) {
    if (isIP(name) === 0 && !DNS_NAME.test(name)) {
      problems.push(`TLS_HOSTNAMES: "${name}" is neither a host name nor an IP address (wildcards are not supported)`);
    }
  }
  if (names.length === 0) problems.push('TLS_HOSTNAMES: lists no host name');
  else if (parsed.publicUrl?.startsWith('https:') && !names.includes(publicHost)) {
    problems.push(`TLS_HOSTNAMES: does not include "${publicHost}", the host of PUBLIC_URL, so clients would refuse the certificate`);
  }
  return names;
}

/** The services named, in their mounting order; or the problem with the list. */
function parseServices(text: string): ServiceName[] | string {
  const names = text.split(',').map((s) => s.trim().toLowerCase());
  const allowed = `use "all" or a comma list of ${ALL_SERVICES.join(', ')}`;
  const unknown = names.filter((name) => name !== 'all' && !(ALL_SERVICES as readonly string[]).includes(name));
  if (unknown.length > 0) {
    const what = unknown.map((name) => (name === '' ? 'an empty name' : `"${name}"`)).join(', ');
    return `unknown service ${what}; ${allowed}`;
  }
  if (names.includes('all')) return names.length === 1 ? [...ALL_SERVICES] : `"all" cannot be combined with other services; ${allowed}`;
  return ALL_SERVICES.filter((name) => names.includes(name));
}

/** Settings whose values are never shown (start-up errors, the admin console): passwords, secrets, tokens and the trace exporter's headers (an API key). */
export function isSecretSetting(key: string): boolean {
  return /password|secret|token|headers/i.test(key);
}

/**
 * A rejected value as a problem message may show it: a secret setting not at all, and a URL
 * without the password it may carry (a mistyped DATABASE_URL would otherwise put one in the log).
 */
function shownValue(key: string, value: unknown): string {
  if (isSecretSetting(key)) return '(hidden)';
  const text = JSON.stringify(value);
  return typeof value === 'string' ? text.replace(/(\/\/[^/:@\s]*):[^@/\s]*@/, '$1:(hidden)@') : text;
}

/** One setting's problem in words: the allowed values of an enum, the expected form of a pattern. */
function problemText(error: { keyword: string; message: string; params: Record<string, unknown> }, schema: TSchema | undefined): string {
  const allowed = error.params.allowedValues;
  if (error.keyword === 'enum' && Array.isArray(allowed)) return `must be one of ${allowed.join(', ')}`;
  const expected = schema ? (schema as Record<string, unknown>).expected : undefined;
  if (error.keyword === 'pattern' && typeof expected === 'string') return `must be ${expected}`;
  return error.message;
}

/** The program's settings: the environment, over a `.env` file in the working directory. */
export function loadProcessConfig(): Config {
  return loadConfig({ ...readEnvFile('.env'), ...process.env });
}

/**
 * The settings of a `.env` file (KEY=value lines, as `.env.example` shows), or none when there
 * is no such file. The caller lays the real environment over them, so the environment wins.
 */
export function readEnvFile(path: string): Record<string, string | undefined> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new ConfigError([`.env: cannot read ${path}: ${(error as Error).message}`]);
  }
  return parseEnv(text);
}

function dedupe(items: string[]): string[] {
  return [...new Set(items)];
}

/** The documented settings, for `.env.example` and the configuration reference. */
export function describeSettings(): { env: string; description: string; default?: string | number | boolean }[] {
  return Object.entries(ConfigSchema.properties as Record<string, TSchema>).map(([key, schema]) => {
    const s = schema as { description?: string; default?: string | number | boolean; enum?: unknown[] };
    const choices = s.enum ? ` One of: ${s.enum.join(', ')}.` : '';
    return { env: envName(key), description: `${s.description ?? ''}${choices}`, default: s.default };
  });
}
