/**
 * The npm packages only a configured server, or a feature's first use, needs: a default start on
 * SQLite loads none of them (src/main.lazy.test.ts checks it; bench/lean.ts measures what each
 * would cost).
 */
export const OPTIONAL_PACKAGES = [
  ...['pg', 'ioredis', 'amqplib', 'nodemailer', '@aws-sdk/client-s3', '@aws-sdk/lib-storage', '@simplewebauthn/server', 'prom-client', '@peculiar/x509', 'tar', 'hash-wasm', 'otplib', 'eta'],
  // The API docs (API_DOCS_ENABLED, on by default self-hosted), on the first request under /docs.
  ...['@fastify/swagger', '@fastify/swagger-ui'],
  // OpenTelemetry, only with OTEL_ENABLED (not even its API: prom-client requires it, and loads only with metrics on).
  ...['@opentelemetry/api', '@opentelemetry/core', '@opentelemetry/resources', '@opentelemetry/sdk-trace-node', '@opentelemetry/exporter-trace-otlp-http'],
  // The zip reader of `strongroom web-vault install`, an operator command.
  ...['yauzl'],
  // The OpenID Connect relying party, at the first single sign-on login.
  ...['openid-client', 'oauth4webapi'],
  // The HTML parser (and its entity tables) the icon finder reads a site's page with, at the first page read.
  ...['parse5', 'entities'],
  // Web Push's encryption and signing, at the first push to a browser that subscribed.
  ...['web-push', 'http_ece', 'jws', 'asn1.js', 'https-proxy-agent'],
];
