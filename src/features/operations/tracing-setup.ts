import type { FastifyInstance } from 'fastify';
import type { Config } from '../../config/config.js';
import type { QueryObserver } from '../../db/observed-dialect.js';
import { engineOf } from '../../db/database.js';
import type { TracingOptions } from './tracing.js';

/**
 * OpenTelemetry traces (OTEL_ENABLED, docs/operations.md), seen from the rest of the server.
 * This module loads no OpenTelemetry code: `startTracing` imports ./tracing.js (and with it the
 * SDK and the exporter) only when traces are on, so a server without them never loads them.
 */
export interface Tracing {
  /** Give it to the database (openDatabase's `queryObserver`): one span per statement under the request's span. */
  readonly queries: QueryObserver;
  /** One server span per request: buildApp calls it before any route; the app's close flushes the spans. */
  install(app: FastifyInstance): void;
  /** Sends the spans not yet exported and stops. */
  shutdown(): Promise<void>;
}

/** The tracing OTEL_ENABLED asks for, or null (nothing loaded) when it is off. */
export async function startTracing(
  config: Pick<Config, 'otelEnabled' | 'otelExporterOtlpEndpoint' | 'otelExporterOtlpHeaders' | 'otelServiceName' | 'otelTracesSamplerArg' | 'databaseUrl'>,
  options: Pick<TracingOptions, 'exporter'> = {},
): Promise<Tracing | null> {
  if (!config.otelEnabled) return null;
  const { createTracing } = await import('./tracing.js');
  return createTracing({
    serviceName: config.otelServiceName,
    endpoint: config.otelExporterOtlpEndpoint,
    headers: parseHeaders(config.otelExporterOtlpHeaders),
    sampleRatio: config.otelTracesSamplerArg,
    engine: engineOf(config.databaseUrl),
    ...options,
  });
}

/** `a=1,b=two` -> { a: '1', b: 'two' } (the setting's pattern has checked the shape). */
export function parseHeaders(text: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of (text ?? '').split(',')) {
    const at = pair.indexOf('=');
    if (at > 0) headers[pair.slice(0, at).trim()] = pair.slice(at + 1).trim();
  }
  return headers;
}
