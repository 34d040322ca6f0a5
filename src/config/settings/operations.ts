import { Type } from 'typebox';

/** For the operator: licenses, logs, metrics and shutdown. */
export const operationsSettings = {
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
      secret: true,
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
};
