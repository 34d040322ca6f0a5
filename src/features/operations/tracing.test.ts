import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { SpanKind } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-node';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createUser, type LoggedInUser } from '../../../test/support/accounts.js';
import { encryptText } from '../../../test/support/bw-crypto.js';
import { startTestServer, testConfig, type TestServer } from '../../../test/support/test-server.js';
import { parseHeaders, startTracing } from './tracing-setup.js';
import { statementAttributes, statementName } from './tracing.js';

const exporter = new InMemorySpanExporter();
let server: TestServer;
let alice: LoggedInUser;
let folderId: string;

beforeAll(async () => {
  server = await startTestServer({ env: { OTEL_ENABLED: 'true', OTEL_SERVICE_NAME: 'strongroom-test' }, traceExporter: exporter });
  alice = await createUser(server, { email: 'alice@example.com' });
  const folder = await server.request('POST', '/api/folders', { token: alice.accessToken, json: { name: encryptText('Work', alice.account.userKey) } });
  expect(folder.status).toBe(200);
  folderId = folder.body.id;
});
afterAll(async () => server?.close());
beforeEach(() => exporter.reset());

const serverSpans = () => exporter.getFinishedSpans().filter((span) => span.kind === SpanKind.SERVER);

/** The one server span the request left (it ends in onResponse, just after the answer is sent). */
async function onlyServerSpan(): Promise<ReadableSpan> {
  await vi.waitFor(() => expect(serverSpans()).toHaveLength(1));
  const [span] = serverSpans();
  if (!span) throw new Error('no server span');
  return span;
}

function childrenOf(parent: ReadableSpan): ReadableSpan[] {
  return exporter
    .getFinishedSpans()
    .filter((span) => span.parentSpanContext?.spanId === parent.spanContext().spanId && span.spanContext().traceId === parent.spanContext().traceId);
}

describe('OpenTelemetry traces (OTEL_ENABLED)', () => {
  it('makes one server span per request, named by its route pattern, with its database statements as children', async () => {
    const newName = encryptText('Renamed', alice.account.userKey);
    const res = await server.request('PUT', `/api/folders/${folderId}`, { token: alice.accessToken, json: { name: newName } });
    expect(res.status).toBe(200);

    const span = await onlyServerSpan();
    expect(span.name).toBe('PUT /api/folders/:id');
    expect(span.attributes).toMatchObject({
      'http.request.method': 'PUT',
      'http.route': '/api/folders/:id',
      'http.response.status_code': 200,
      'url.path': `/api/folders/${folderId}`,
      'url.scheme': 'http',
    });
    expect(span.resource.attributes['service.name']).toBe('strongroom-test');

    const statements = childrenOf(span);
    // Every database span of the request is under it, and none is left over without a parent.
    const allDb = exporter.getFinishedSpans().filter((s) => s.kind === SpanKind.CLIENT);
    expect(statements).toHaveLength(allDb.length);
    expect(statements.every((s) => s.kind === SpanKind.CLIENT)).toBe(true);
    const names = statements.map((s) => s.name);
    // Before the body is parsed (the token's check) and after it (the update itself).
    expect(names).toContain('UPDATE folders');
    expect(names.some((name) => name.startsWith('SELECT '))).toBe(true);
    const update = statements.find((s) => s.name === 'UPDATE folders');
    expect(update?.attributes).toMatchObject({ 'db.operation.name': 'UPDATE', 'db.collection.name': 'folders', 'db.system.name': expect.any(String) });
    expect(String(update?.attributes['db.query.text'])).toMatch(/^update "folders" set/);
    // Statement text only: no parameter value (the new name, the folder's or the user's id).
    for (const statement of statements) {
      const text = String(statement.attributes['db.query.text']);
      expect(text).not.toContain(newName);
      expect(text).not.toContain(folderId);
      expect(text).not.toContain(alice.userId);
    }
  });

  it('keeps the statements of a handler under the request when its body arrives in pieces', async () => {
    // The body's last piece comes from the socket after a pause, outside the request's own
    // continuation: the handler must still run in the request's context.
    const body = JSON.stringify({ name: encryptText('Slow', alice.account.userKey) });
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(`${server.baseUrl}/api/folders/${folderId}`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${alice.accessToken}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.write(body.slice(0, 10));
      void sleep(150).then(() => req.end(body.slice(10)));
    });
    expect(status).toBe(200);
    const span = await onlyServerSpan();
    expect(childrenOf(span).map((s) => s.name)).toContain('UPDATE folders');
  });

  it('names an answer by its route pattern even when it is an error, and records the status', async () => {
    const res = await server.request('GET', '/api/folders/6f1c2a3b-0000-4000-8000-00000000000a', { token: alice.accessToken });
    expect(res.status).toBe(404);
    const span = await onlyServerSpan();
    expect(span.name).toBe('GET /api/folders/:id');
    expect(span.attributes['http.response.status_code']).toBe(404);
    expect(childrenOf(span).length).toBeGreaterThan(0);
  });

  it('names a request no route matched by its method alone', async () => {
    const res = await server.request('GET', '/api/no-such-thing/123');
    expect(res.status).toBe(404);
    const span = await onlyServerSpan();
    expect(span.name).toBe('GET');
    expect(span.attributes['http.route']).toBeUndefined();
  });

  it('continues the trace of a W3C traceparent header', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const parentId = '00f067aa0ba902b7';
    const res = await server.request('GET', '/api/folders', { token: alice.accessToken, headers: { traceparent: `00-${traceId}-${parentId}-01` } });
    expect(res.status).toBe(200);
    const span = await onlyServerSpan();
    expect(span.spanContext().traceId).toBe(traceId);
    expect(span.parentSpanContext?.spanId).toBe(parentId);
    expect(childrenOf(span).length).toBeGreaterThan(0);
  });

  it('keeps concurrent requests apart: each statement is under its own request', async () => {
    const answers = await Promise.all(Array.from({ length: 6 }, () => server.request('GET', `/api/folders/${folderId}`, { token: alice.accessToken })));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200]);
    await vi.waitFor(() => expect(serverSpans()).toHaveLength(6));
    const byRequest = serverSpans().map((span) => childrenOf(span).length);
    const allDb = exporter.getFinishedSpans().filter((s) => s.kind === SpanKind.CLIENT).length;
    expect(byRequest.every((n) => n > 0)).toBe(true);
    expect(byRequest.reduce((a, b) => a + b, 0)).toBe(allDb);
  });

  it('does not trace statements run outside a request', async () => {
    await server.database.db.selectFrom('users').select('id').execute();
    expect(exporter.getFinishedSpans()).toHaveLength(0);
  });
});

describe('sampling (OTEL_TRACES_SAMPLER_ARG)', () => {
  it('leaves out the requests the ratio excludes, but follows a caller that traces', async () => {
    const sampled = new InMemorySpanExporter();
    const none = await startTestServer({ env: { OTEL_ENABLED: 'true', OTEL_TRACES_SAMPLER_ARG: '0' }, traceExporter: sampled });
    try {
      const user = await createUser(none);
      expect((await none.request('GET', '/api/folders', { token: user.accessToken })).status).toBe(200);
      const traceId = '0af7651916cd43dd8448eb211c80319c';
      const res = await none.request('GET', '/api/sync', { token: user.accessToken, headers: { traceparent: `00-${traceId}-b7ad6b7169203331-01` } });
      expect(res.status).toBe(200);
      await vi.waitFor(() => expect(sampled.getFinishedSpans().some((s) => s.kind === SpanKind.SERVER)).toBe(true));
      // Only the traced caller's request, whole: its server span and its statements.
      const spans = sampled.getFinishedSpans();
      expect(new Set(spans.map((s) => s.spanContext().traceId))).toEqual(new Set([traceId]));
      expect(spans.filter((s) => s.kind === SpanKind.SERVER).map((s) => s.name)).toEqual(['GET /api/sync']);
      expect(spans.filter((s) => s.kind === SpanKind.CLIENT).length).toBeGreaterThan(0);
    } finally {
      await none.close();
    }
  });
});

describe('statement spans', () => {
  it('are named by operation and table', () => {
    expect(statementName('select "id" from "users" where "email" = $1')).toBe('SELECT users');
    expect(statementName('insert into "events" ("id") values (?)')).toBe('INSERT events');
    expect(statementName('update "ciphers" set "data" = $1')).toBe('UPDATE ciphers');
    expect(statementName('delete from "sends" where "id" = ?')).toBe('DELETE sends');
    expect(statementName('select 1')).toBe('SELECT');
  });

  it('carry no literal written into the statement text', () => {
    const text = statementAttributes(`select * from "users" where "email" = 'it''s@example.com' and "id" = $1`, 'postgresql')['db.query.text'];
    expect(text).toBe('select * from "users" where "email" = ? and "id" = $1');
  });
});

describe('OTEL settings', () => {
  it('are off by default, and then nothing is started', async () => {
    const config = testConfig();
    expect(config.otelEnabled).toBe(false);
    expect(config.otelExporterOtlpEndpoint).toBe('http://localhost:4318');
    expect(await startTracing(config)).toBeNull();
  });

  it('refuses an endpoint that is not a URL and malformed headers', () => {
    expect(() => testConfig({ OTEL_ENABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT/);
    expect(() => testConfig({ OTEL_EXPORTER_OTLP_HEADERS: 'no-equals-sign' })).toThrow(/OTEL_EXPORTER_OTLP_HEADERS/);
    expect(parseHeaders('authorization=Bearer abc, x-scope = team-a')).toEqual({ authorization: 'Bearer abc', 'x-scope': 'team-a' });
  });
});

describe('the OTLP exporter', () => {
  it('sends the spans to OTEL_EXPORTER_OTLP_ENDPOINT/v1/traces with OTEL_EXPORTER_OTLP_HEADERS', async () => {
    const received: { url: string | undefined; headers: Record<string, unknown>; body: string }[] = [];
    const collector = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        received.push({ url: req.url, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    const { port } = collector.address() as AddressInfo;
    const traced = await startTestServer({
      env: { OTEL_ENABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}/`, OTEL_EXPORTER_OTLP_HEADERS: 'x-collector-key=k3y' },
    });
    try {
      expect((await traced.request('POST', '/identity/accounts/prelogin', { json: { email: 'nobody@example.com' } })).status).toBe(200);
    } finally {
      // Closing the server flushes the batch.
      await traced.close();
      await new Promise((resolve) => collector.close(resolve));
    }
    expect(received.length).toBeGreaterThan(0);
    expect(received.every((r) => r.url === '/v1/traces' && r.headers['x-collector-key'] === 'k3y')).toBe(true);
    const text = received.map((r) => r.body).join('\n');
    expect(text).toContain('POST /identity/accounts/prelogin');
    expect(text).toContain('SELECT users');
    expect(text).not.toContain('nobody@example.com');
  });
});
