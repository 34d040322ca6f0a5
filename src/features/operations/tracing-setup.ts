import type { Config } from '../../config/config.js';
import { engineOf } from '../../db/database.js';
import type { TracingOptions } from './tracing.js';
import type { Tracing } from './tracing-port.js';

export type { Tracing } from './tracing-port.js';

/**
 * The tracing OTEL_ENABLED asks for, or null (nothing loaded) when it is off. This module loads
 * no OpenTelemetry code: ./tracing.js (and with it the SDK and the exporter) is imported only
 * when traces are on, so a server without them never loads them.
 */
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
