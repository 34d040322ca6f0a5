import { Type } from 'typebox';

/** Where the server listens and keeps its data, which services and variant it runs, and what it offers. */
export const serverSettings = {
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
  // Checked by parseServices (load.ts), which names the allowed services rather than a pattern.
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
    Type.Boolean({ description: 'Serve /api/healthz and /api/healthz/extended (/healthz when the API service runs alone at /). Defaults to on for cloud, off for selfhosted.' }),
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
};
