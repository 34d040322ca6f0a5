import { Ajv, type Options } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import { ENC_STRING_FORMAT, isEncString } from './enc-string.js';

/**
 * Two validators: query strings, params and headers arrive as text and are coerced to the
 * schema's types (`includeGroups=true`); JSON bodies are not coerced, so a wrong type is a
 * 400 naming the field rather than a silent conversion. Unknown body properties are
 * dropped: clients send fields this server does not keep, and that is not an error.
 */
function makeAjv(options: Options): Ajv {
  const ajv = new Ajv({ allErrors: true, removeAdditional: true, useDefaults: true, strict: false, ...options });
  addFormats.default(ajv);
  ajv.addFormat(ENC_STRING_FORMAT, { type: 'string', validate: isEncString });
  return ajv;
}

const bodyAjv = makeAjv({ coerceTypes: false });
const textAjv = makeAjv({ coerceTypes: 'array' });

type Validator = ((data: unknown) => boolean) & { errors?: unknown };

/**
 * Each route's validator is compiled on the route's first request, not at start: compiling
 * the few hundred route schemas up front took most of the start time and about 20 MB that an
 * idle server holds for routes it may never serve. Fastify reads `errors` off the function
 * after a failed check, so the wrapper hands on the compiled validator's.
 */
export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? bodyAjv : textAjv;
  let compiled: Validator | undefined;
  const validate: Validator = (data) => {
    compiled ??= ajv.compile(schema) as Validator;
    const valid = compiled(data);
    validate.errors = compiled.errors;
    return valid;
  };
  return validate as ReturnType<FastifySchemaCompiler<object>>;
};
