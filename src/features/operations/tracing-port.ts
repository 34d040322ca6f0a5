import type { FastifyInstance } from 'fastify';
import type { QueryObserver } from '../../db/observed-dialect.js';

/**
 * OpenTelemetry traces (OTEL_ENABLED, docs/operations.md), seen from the rest of the server.
 * Its own module, below both sides: tracing.ts implements it and tracing-setup.ts hands it out,
 * so neither has to import the other for it.
 */
export interface Tracing {
  /** Give it to the database (openDatabase's `queryObserver`): one span per statement under the request's span. */
  readonly queries: QueryObserver;
  /** One server span per request: buildApp calls it before any route; the app's close flushes the spans. */
  install(app: FastifyInstance): void;
  /** Sends the spans not yet exported and stops. */
  shutdown(): Promise<void>;
}
