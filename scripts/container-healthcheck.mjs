// The container's health check (Dockerfile HEALTHCHECK): asks the server in this
// container whether it is healthy and exits 0 (healthy) or 1. It reads the same environment as
// the server, so it follows PORT, TLS_MODE, SERVICES and HEALTH_ENABLED. Plain Node, no curl:
// the slim image has none.
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

const env = process.env;
const port = Number(env.PORT || 8080);
const tls = env.TLS_MODE ? env.TLS_MODE !== 'off' : Boolean(env.TLS_CERT_FILE);
// Listening on every address (or none named) is reached on loopback; a named address as it is.
const host = !env.HOST || env.HOST === '0.0.0.0' || env.HOST === '::' ? '127.0.0.1' : env.HOST;
const services = (env.SERVICES ?? 'all').trim();
// One service alone is mounted at /, several under /api, /identity, ...
const alone = services !== 'all' && !services.includes(',');
const prefix = alone ? '' : '/api';
const healthServed = env.HEALTH_ENABLED === 'true' && (!alone || services === 'api');
// /healthz probes the database (503 when it is down); /alive only says the process answers.
const path = `${prefix}${healthServed ? '/healthz' : '/alive'}`;

const request = tls ? httpsRequest : httpRequest;
// The server's own certificate is for its public name, not for 127.0.0.1; this check asks the
// process it sits beside and sends nothing secret, so the certificate is not checked.
const req = request({ host, port, path, method: 'GET', timeout: 4000, rejectUnauthorized: false }, (res) => {
  res.resume();
  console.error(`${path}: ${res.statusCode}`);
  process.exit(res.statusCode === 200 ? 0 : 1);
});
req.on('timeout', () => req.destroy(new Error('no answer within 4 s')));
req.on('error', (error) => {
  console.error(`${path}: ${error.message}`);
  process.exit(1);
});
req.end();
