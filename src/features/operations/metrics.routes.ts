import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import type { Config } from '../../config/config.js';
import { enforceAccessRules, type Authenticator } from '../../http/access.js';
import { apiErrorHandler } from '../../http/error-handler.js';
import { metricsAccess, type Metrics } from './metrics.js';

const Exposition = Type.String({ description: 'Prometheus text exposition format 0.0.4' });

/** `GET /metrics` at the root of the server, whatever services it runs (METRICS_ENABLED). */
export const metricsRoutes: FastifyPluginAsync<{ config: Config; metrics: Metrics; authenticate: Authenticator }> = async (app, { config, metrics, authenticate }) => {
  app.setErrorHandler(apiErrorHandler);
  enforceAccessRules(app, authenticate);
  app.get(
    '/metrics',
    {
      config: { access: metricsAccess(config) },
      schema: {
        tags: ['Health'],
        summary: 'Read the Prometheus metrics',
        description:
          "This instance's metrics in the Prometheus text format: requests and latencies by route, errors by status, 429 refusals, login failures, sync cache hits, database pool use, hub connections, the integrations outbox backlog and the process's own figures. Served only when `METRICS_ENABLED` is on. Access: the scraper, by the `METRICS_TOKEN` bearer token and/or a connecting address in `METRICS_ALLOWED_ADDRESSES` (401 or 403 otherwise).",
        response: { 200: Exposition },
      },
    },
    async (_request, reply) => {
      const text = await metrics.registry.metrics();
      return reply.type(metrics.registry.contentType).send(text);
    },
  );
};
