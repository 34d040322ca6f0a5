import fastJsonStringify from 'fast-json-stringify';
import type { FastifyInstance, FastifyReply, FastifySerializerCompiler } from 'fastify';

type Serializer = (data: unknown) => string;

const compiled = new WeakMap<object, Serializer>();

/**
 * Response serializers, compiled once per schema for the whole process. fast-json-stringify
 * generates code for every schema it is given, and Fastify would compile each route's again for
 * every app instance; route schemas are module constants, so every app built in this process
 * (three services here, hundreds in the test suite) shares them. No shared `$ref` schemas are
 * registered, so a schema compiles the same wherever it is used.
 */
export const serializerCompiler: FastifySerializerCompiler<object> = ({ schema }) => {
  // Compiled on the route's first answer, not at start (see validatorCompiler for why).
  let serialize: Serializer | undefined;
  return (data) => (serialize ??= serializerOf(schema))(data);
};

function serializerOf(schema: object): Serializer {
  let serializer = compiled.get(schema);
  if (!serializer) {
    serializer = fastJsonStringify(schema) as Serializer;
    compiled.set(schema, serializer);
  }
  return serializer;
}

/**
 * Gives Fastify a route's success schema under `2xx` instead of `200` when no other 2xx code has
 * one. Fastify keeps a route's response serializers in an object keyed by status code, and an
 * integer-like key such as 200 is an array index to V8, which gives the object a backing store
 * with room for 200-odd entries: 2.6 KB a route, about 1.6 MB for the server's routes (issue #43,
 * docs/benchmarks.md). `2xx` is an ordinary property. Fastify tries the exact code, then `2xx`,
 * so an answer of 200 gets the same serializer; the routes that answer 204 declare it, and keep
 * their keys. Register it after the API docs' recorder, which keeps the schema as written.
 */
export function successSchemaUnder2xx(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    const response = route.schema?.response as Record<string, unknown> | undefined;
    if (!response || !('200' in response)) return;
    if (Object.keys(response).some((code) => code !== '200' && code.startsWith('2'))) return;
    const { 200: success, ...others } = response;
    route.schema = { ...route.schema, response: { '2xx': success, ...others } };
  });
}

/**
 * A response body encoded ahead of sending, as the route's response schema would encode it
 * (the same compiled serializer), for answers kept encoded (secrets-manager/sm-answers.ts). A
 * route sends it with `sendEncoded`.
 */
export function encodeJson<S extends object>(schema: S, value: unknown): Buffer {
  return Buffer.from(serializerOf(schema)(value));
}

/** Sends a body `encodeJson` made: Fastify sends a Buffer as it is, without serialising it again. */
export function sendEncoded(reply: FastifyReply, body: Buffer): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(body);
}
