import type { FastifyPluginAsync } from 'fastify';
import type { Clock } from '../../clock.js';
import { access } from '../../http/access.js';
import { Alive, BasicHealth, ExtendedHealth } from './health.schemas.js';
import type { HealthService } from './health.service.js';

/** `/healthz` and `/healthz/extended`: 503 when a critical dependency is down. */
export const healthRoutes: FastifyPluginAsync<{ health: HealthService }> = async (app, { health }) => {
  app.get(
    '/healthz',
    { config: { access: access.anonymous }, schema: { tags: ['health'], response: { 200: BasicHealth, 503: BasicHealth } } },
    async (_request, reply) => {
      const report = await health.report();
      return reply.status(report.status === 'Unhealthy' ? 503 : 200).send({ status: report.status });
    },
  );
  app.get(
    '/healthz/extended',
    { config: { access: access.anonymous }, schema: { tags: ['health'], response: { 200: ExtendedHealth, 503: ExtendedHealth } } },
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
      { config: { access: access.anonymous }, schema: { tags: ['health'], response: { 200: Alive } } },
      // The official server answers a JSON string, not text.
      async (_request, reply) => reply.type('application/json; charset=utf-8').send(JSON.stringify(clock.now().toISOString())),
    );
  }
};
