import fastJsonStringify from 'fast-json-stringify';
import type { FastifySerializerCompiler } from 'fastify';

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
  let serializer = compiled.get(schema);
  if (!serializer) {
    serializer = fastJsonStringify(schema) as Serializer;
    compiled.set(schema, serializer);
  }
  return serializer;
};
