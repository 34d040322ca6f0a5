import fastJsonStringify from 'fast-json-stringify';
import type { FastifySchemaCompiler, FastifySerializerCompiler } from 'fastify';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { adminTokenHash } from '../../test/support/admin-console.js';
import { startTestServer, type TestServer } from '../../test/support/test-server.js';
import type * as Serialization from './serialization.js';
import type * as Validation from './validation.js';
import { validatorCompiler as realValidatorCompiler } from './validation.js';

/**
 * Route validators and serializers are compiled on a route's first request, not at start
 * (validation.ts). A schema that cannot compile would then pass every start and fail only when
 * someone calls its route; this test compiles every route's schemas of a server with every
 * service and option on, so such a schema fails here.
 */
const seen = vi.hoisted(() => ({
  validators: [] as { route: string; compile: () => unknown }[],
  serializers: [] as { route: string; schema: object }[],
}));

vi.mock('./validation.js', async (importOriginal) => {
  const real = await importOriginal<typeof Validation>();
  const validatorCompiler: FastifySchemaCompiler<object> = (definition) => {
    const validate = real.validatorCompiler(definition);
    // Any call compiles the lazy validator; `undefined` is only refused.
    seen.validators.push({ route: `${definition.method} ${definition.url} ${definition.httpPart ?? ''}`, compile: () => validate(undefined) });
    return validate;
  };
  return { ...real, validatorCompiler };
});

vi.mock('./serialization.js', async (importOriginal) => {
  const real = await importOriginal<typeof Serialization>();
  const serializerCompiler: FastifySerializerCompiler<object> = (definition) => {
    seen.serializers.push({ route: `${definition.method} ${definition.url} ${String(definition.httpStatus)}`, schema: definition.schema });
    return real.serializerCompiler(definition);
  };
  return { ...real, serializerCompiler };
});

/** The routes whose compile threw, with the reason. */
function failures(compile: { route: string; run: () => unknown }[]): string[] {
  return compile.flatMap(({ route, run }) => {
    try {
      run();
      return [];
    } catch (error) {
      return [`${route}: ${(error as Error).message}`];
    }
  });
}

describe('every route schema', () => {
  let server: TestServer | undefined;
  afterAll(async () => server?.close());

  it('compiles: request validators and response serializers alike', async () => {
    server = await startTestServer({
      env: { API_DOCS_ENABLED: 'true', HEALTH_ENABLED: 'true', SERVICES: 'all', METRICS_ENABLED: 'true', METRICS_TOKEN: 'schema-check-token-0123', ADMIN_TOKEN: await adminTokenHash() },
    });
    // Hundreds of routes: a server that registered none would pass trivially.
    expect(seen.validators.length).toBeGreaterThan(300);
    expect(seen.serializers.length).toBeGreaterThan(300);
    expect(failures(seen.validators.map(({ route, compile }) => ({ route, run: compile })))).toEqual([]);
    expect(failures(seen.serializers.map(({ route, schema }) => ({ route, run: () => fastJsonStringify(schema) })))).toEqual([]);
  }, 60_000);

  it('the check can fail: a schema that cannot compile throws on its first use', () => {
    const broken = realValidatorCompiler({ schema: { type: 'string', pattern: '(' }, method: 'POST', url: '/broken', httpPart: 'body' });
    expect(() => broken(undefined)).toThrow();
    expect(() => fastJsonStringify({ type: 'object', properties: { a: { $ref: '#/nowhere' } } })).toThrow();
  });
});
