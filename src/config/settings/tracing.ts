import { Type } from 'typebox';

/** OpenTelemetry traces. */
export const tracingSettings = {
  otelEnabled: Type.Boolean({
    default: false,
    description:
      'Send OpenTelemetry traces: one span per request (its route pattern, method and status) with a span per database statement under it, over OTLP/HTTP to OTEL_EXPORTER_OTLP_ENDPOINT. Off: the OpenTelemetry SDK is not even loaded. See docs/operations.md.',
  }),
  otelExporterOtlpEndpoint: Type.String({
    pattern: '^https?://[^\\s]+$',
    expected: 'an http:// or https:// URL such as http://collector:4318',
    default: 'http://localhost:4318',
    description: 'With OTEL_ENABLED: the base URL of the OTLP/HTTP receiver (an OpenTelemetry Collector, Jaeger, Tempo, …); traces go to its /v1/traces.',
  }),
  otelExporterOtlpHeaders: Type.Optional(
    Type.String({
      secret: true,
      pattern: '^[^=,\\s]+=[^,]*(,[^=,\\s]+=[^,]*)*$',
      expected: 'key=value pairs separated by commas, such as authorization=Bearer abc',
      description: 'With OTEL_ENABLED: headers sent with every export, as comma-separated key=value pairs (an API key of a hosted tracing service).',
    }),
  ),
  otelTracesSamplerArg: Type.Number({
    minimum: 0,
    maximum: 1,
    default: 1,
    description:
      'With OTEL_ENABLED: the share of requests traced, 0 to 1 (OpenTelemetry\'s parentbased_traceidratio sampler and its argument): a request arriving with a sampled W3C traceparent is traced whatever it says. Below 1 it cuts the cost of tracing (docs/operations.md).',
  }),
  otelServiceName: Type.String({
    minLength: 1,
    default: 'strongroom',
    description: 'With OTEL_ENABLED: the service.name the traces carry. Each process adds its own service.instance.id, so the instances of a fleet share one name.',
  }),
};
