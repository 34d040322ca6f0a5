import fastJsonStringify from 'fast-json-stringify';
import type { FastifyReply, FastifySerializerCompiler } from 'fastify';

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
