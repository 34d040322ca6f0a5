import { Type } from 'typebox';

/** A per-caller limit as `requests/period` (`60/1m`; periods as in the IP rules), or `0` for none. */
function callerLimit(defaultValue: string, description: string) {
  return Type.String({ pattern: '^(0|[1-9][0-9]{0,8}/[1-9][0-9]{0,5}[smhd])$', default: defaultValue, description: `${description} 0 turns it off.` });
}

/** Rate limits, request sizes, timeouts and connections per client. */
export const limitSettings = {
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
  rateLimitHibp: callerLimit('10/1m', 'Data breach lookups (GET /hibp/breach, passed on to Have I Been Pwned with the server\'s key) each user may make: requests/period.'),
  rateLimitEmergencyInvite: callerLimit('10/1h', 'Emergency access invitation mails (invite and resend) each user may send: requests/period.'),
  rateLimitDeviceApproval: callerLimit('10/1h', 'Device approval requests to organization admins (POST /auth-requests/admin-request, which mails the approvers) each user may make: requests/period.'),
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
};
