import type { FastifyPluginAsync } from 'fastify';
import type { Clock } from '../../shared/clock.js';
import { access } from '../../http/access.js';
import { Alive, BasicHealth, ExtendedHealth } from './health.schemas.js';
import type { HealthService } from './health.service.js';

/** `/healthz` and `/healthz/extended`: 503 when a critical dependency is down. */
export const healthRoutes: FastifyPluginAsync<{ health: HealthService }> = async (app, { health }) => {
  app.get(
    '/healthz',
    {
      config: { access: access.anonymous },
      exposeHeadRoute: true, // uptime monitors may ask with HEAD
      schema: {
        tags: ['Health'],
        summary: 'Check the server health',
        description:
          'Probes the database and, when configured, Redis and the message broker, and answers the basic health record: `Healthy`, `Degraded` (an optional dependency is down) or `Unhealthy` with status 503 (the database is down). Served only when `HEALTH_ENABLED` is on (the default on cloud). Access: anonymous.',
        response: { 200: BasicHealth, 503: BasicHealth },
      },
    },
    async (_request, reply) => {
      const report = await health.report();
      return reply.status(report.status === 'Unhealthy' ? 503 : 200).send({ status: report.status });
    },
  );
  app.get(
    '/healthz/extended',
    {
      config: { access: access.anonymous },
      schema: {
        tags: ['Health'],
        summary: 'Check the server health, per dependency',
        description:
          'Like `/healthz`, with one entry per probed dependency (database, Redis, broker): its status, the error when it failed, and how long the probe took; 503 when the database is down. Served only when `HEALTH_ENABLED` is on. Access: anonymous.',
        response: { 200: ExtendedHealth, 503: ExtendedHealth },
      },
    },
    async (_request, reply) => {
      const report = await health.report();
      return reply.status(report.status === 'Unhealthy' ? 503 : 200).send(report);
    },
  );
};

/** Liveness on every service, as the official server has it: the current UTC time. */
export const aliveRoutes: FastifyPluginAsync<{ clock: Clock }> = async (app, { clock }) => {
  for (const path of ['/alive', '/now']) {
    app.get(
      path,
      {
        config: { access: access.anonymous },
        exposeHeadRoute: true, // uptime monitors may ask with HEAD
        schema: {
          tags: ['Health'],
          summary: path === '/alive' ? 'Check that the service is alive' : 'Read the server time',
          description: `Answers the current UTC time as a JSON string, as the official server does on each of its services${path === '/now' ? ' (the same answer as `/alive`)' : ''}. Access: anonymous.`,
          response: { 200: Alive },
        },
      },
      // The official server answers a JSON string, not text.
      async (_request, reply) => reply.type('application/json; charset=utf-8').send(JSON.stringify(clock.now().toISOString())),
    );
  }
};
