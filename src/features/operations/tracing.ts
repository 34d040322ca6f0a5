import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, defaultTextMapGetter, trace, type Attributes, type Context, type Span } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider, ParentBasedSampler, SimpleSpanProcessor, TraceIdRatioBasedSampler, type SpanExporter } from '@opentelemetry/sdk-trace-node';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Engine } from '../../db/dialect.js';
import type { QueryObserver } from '../../db/observed-dialect.js';
import type { Tracing } from './tracing-port.js';

/**
 * The OpenTelemetry side of tracing. Loaded only by startTracing (./tracing-setup.ts) when
 * OTEL_ENABLED is on: never import it from anywhere else.
 *
 * Each app has its own tracer provider and its own async context (an AsyncLocalStorage holding
 * the request's span), and registers nothing globally: several apps in one process (tests)
 * trace apart, and nothing else in the process is changed.
 */

export interface TracingOptions {
  serviceName: string;
  /** Base URL of the OTLP/HTTP receiver; spans go to its /v1/traces. */
  endpoint: string;
  headers?: Record<string, string>;
  engine: Engine;
  /** The share of requests traced (a traced caller's requests always are); 1 unless given. */
  sampleRatio?: number;
  /** Export here instead (tests: the SDK's InMemorySpanExporter), one span at a time. */
  exporter?: SpanExporter;
}

/** Longest statement text a database span carries. */
const MAX_STATEMENT = 4096;

const INSTRUMENTATION = 'strongroom';

export function createTracing(options: TracingOptions): Tracing {
  const resource = resourceFromAttributes({ 'service.name': options.serviceName, 'service.instance.id': randomUUID() });
  const processor = options.exporter
    ? new SimpleSpanProcessor(options.exporter)
    : new BatchSpanProcessor(new OTLPTraceExporter({ url: `${options.endpoint.replace(/\/+$/, '')}/v1/traces`, headers: options.headers ?? {} }));
  // A request's statements follow its own decision (parent-based), so a trace is whole or absent.
  const sampler = new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(options.sampleRatio ?? 1) });
  const provider = new NodeTracerProvider({ resource, spanProcessors: [processor], sampler });
  const tracer = provider.getTracer(INSTRUMENTATION);
  const propagator = new W3CTraceContextPropagator();
  /** The context of the request being served, where there is one. */
  const current = new AsyncLocalStorage<Context>();
  const requests = new WeakMap<FastifyRequest, { span: Span; context: Context }>();
  const dbSystem = options.engine === 'postgres' ? 'postgresql' : 'sqlite';

  const queries: QueryObserver = {
    async query(sql, run) {
      const parent = current.getStore();
      // Statements outside a request (migrations, background jobs), or of a request the sampler
      // left out, are not traced.
      if (!parent || !trace.getSpan(parent)?.isRecording()) return run();
      const attributes = statementAttributes(sql, dbSystem);
      const span = tracer.startSpan(spanName(attributes), { kind: SpanKind.CLIENT, attributes }, parent);
      try {
        return await run();
      } catch (error) {
        span.recordException(error as Error);
        span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
        throw error;
      } finally {
        span.end();
      }
    },
  };

  function finish(request: FastifyRequest, status: number | undefined): void {
    const entry = requests.get(request);
    if (!entry) return;
    requests.delete(request);
    if (status !== undefined) {
      entry.span.setAttribute('http.response.status_code', status);
      if (status >= 500) entry.span.setStatus({ code: SpanStatusCode.ERROR });
    } else {
      entry.span.setStatus({ code: SpanStatusCode.ERROR, message: 'the client went away before the answer' });
    }
    entry.span.end();
  }

  return {
    queries,
    install(app: FastifyInstance) {
      app.addHook('onRequest', (request, reply, done) => {
        const route = request.routeOptions.url;
        const parent = propagator.extract(ROOT_CONTEXT, request.headers, defaultTextMapGetter);
        const span = tracer.startSpan(
          route === undefined ? request.method : `${request.method} ${route}`,
          { kind: SpanKind.SERVER, attributes: requestAttributes(request, route) },
          parent,
        );
        const context = trace.setSpan(parent, span);
        requests.set(request, { span, context });
        // The rest of the request (hooks, body parsing, handler) runs in this context: Fastify
        // carries the async context across the body's socket events (an AsyncResource).
        current.run(context, done);
      });
      app.addHook('onError', (request, _reply, error, done) => {
        requests.get(request)?.span.recordException(error);
        done();
      });
      app.addHook('onResponse', (request, reply, done) => {
        finish(request, reply.statusCode);
        done();
      });
      app.addHook('onRequestAbort', (request, done) => {
        finish(request, undefined);
        done();
      });
      app.addHook('onClose', async () => provider.forceFlush());
    },
    async shutdown() {
      await provider.shutdown();
    },
  };
}

function requestAttributes(request: FastifyRequest, route: string | undefined): Attributes {
  const attributes: Attributes = {
    'http.request.method': request.method,
    'url.path': request.url.split('?', 1)[0] ?? request.url,
    'url.scheme': request.protocol,
    'network.protocol.version': request.raw.httpVersion,
    'client.address': request.ip,
  };
  if (route !== undefined) attributes['http.route'] = route;
  const agent = request.headers['user-agent'];
  if (agent) attributes['user_agent.original'] = agent;
  return attributes;
}

const OPERATION = /^\s*(select|insert|update|delete|with|create|alter|drop|begin|commit|rollback|savepoint|release|pragma|vacuum)\b/i;
const TARGET = /\b(?:from|into|update|table)\s+"?([A-Za-z_][\w]*)"?/i;

/** `SELECT ciphers`: the operation and the first table it names (OpenTelemetry's naming for database spans). */
export function statementName(sql: string): string {
  return spanName(statementAttributes(sql, ''));
}

function spanName(attributes: Attributes): string {
  const operation = String(attributes['db.operation.name'] ?? 'QUERY');
  const table = attributes['db.collection.name'];
  return table ? `${operation} ${String(table)}` : operation;
}

/**
 * The statement as Kysely compiled it: values travel as parameters ($1, ?), which are never
 * recorded; a quoted literal written into the text itself is replaced by ? too.
 */
export function statementAttributes(sql: string, system: string): Attributes {
  const text = sql.replace(/'(?:[^']|'')*'/g, '?');
  const attributes: Attributes = {
    'db.system.name': system,
    'db.query.text': text.length > MAX_STATEMENT ? `${text.slice(0, MAX_STATEMENT)}…` : text,
  };
  const operation = OPERATION.exec(sql)?.[1];
  if (operation) attributes['db.operation.name'] = operation.toUpperCase();
  const table = TARGET.exec(sql)?.[1];
  if (table) attributes['db.collection.name'] = table;
  return attributes;
}
