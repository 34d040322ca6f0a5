import { Ajv, type ErrorObject, type Options } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import { yieldToLoop } from '../shared/work-slices.js';
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

type Validator = ((data: unknown) => boolean | Promise<boolean>) & { errors?: unknown };
type Compiled = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };
type SchemaNode = { type?: unknown; maxItems?: number; anyOf?: SchemaNode[]; properties?: Record<string, SchemaNode> };

/** Array items a body validation checks between two turns of the event loop. */
const ITEMS_PER_SLICE = 500;

/** The array schema of `node`, through a Nullable's anyOf. */
function arraySchema(node: SchemaNode | undefined): SchemaNode | undefined {
  if (!node) return undefined;
  if (node.type === 'array') return node;
  return node.anyOf?.find((member) => member.type === 'array');
}

/**
 * The large arrays of a body (more than ITEMS_PER_SLICE items): the body itself when it is one,
 * or its own properties that are; imports and event uploads carry thousands of items there.
 */
function largeArrays(data: unknown): string[] | null {
  if (Array.isArray(data)) return data.length > ITEMS_PER_SLICE ? [''] : null;
  if (!data || typeof data !== 'object') return null;
  const large = Object.entries(data).filter(([, value]) => Array.isArray(value) && value.length > ITEMS_PER_SLICE);
  return large.length > 0 ? large.map(([key]) => key) : null;
}

const arrayAt = (body: unknown, key: string) => (key === '' ? body : (body as Record<string, unknown>)[key]) as unknown[];
const withArray = (body: unknown, key: string, items: unknown[]) => (key === '' ? items : { ...(body as object), [key]: items });

/** The index in `array`'s path of the item an error is about, and the rest of its path; null when it is about something else. */
function itemOf(error: ErrorObject, key: string): { index: number; rest: string } | null {
  const prefix = key === '' ? '/' : `/${key}/`;
  if (!error.instancePath.startsWith(prefix)) return null;
  const tail = error.instancePath.slice(prefix.length);
  const end = tail.indexOf('/');
  const index = Number(end === -1 ? tail : tail.slice(0, end));
  return Number.isInteger(index) ? { index, rest: end === -1 ? '' : tail.slice(end) } : null;
}

/**
 * Validates a body with large arrays a slice of items at a time, letting the event loop run
 * between slices: checking 7,000 import items at once held the server about 100 ms. Each pass is
 * the body with one array cut to a slice and the other large ones to their first (the items are
 * the same objects, so what the validator removes or defaults lands in the body). Errors name the
 * item's place in the whole array, and each array's length is checked against its schema's
 * maxItems once.
 */
async function validateInSlices(compiled: Compiled, schema: SchemaNode, body: unknown, arrays: string[]): Promise<ErrorObject[]> {
  const errors: ErrorObject[] = [];
  let base = body;
  for (const key of arrays) base = withArray(base, key, arrayAt(body, key).slice(0, ITEMS_PER_SLICE));
  let first = true;
  let view: unknown = base;
  for (const key of arrays) {
    const items = arrayAt(body, key);
    const limit = arraySchema(key === '' ? schema : schema.properties?.[key])?.maxItems;
    if (limit !== undefined && items.length > limit) {
      errors.push({ instancePath: key === '' ? '' : `/${key}`, schemaPath: '#/maxItems', keyword: 'maxItems', params: { limit }, message: `must NOT have more than ${limit} items` });
      continue;
    }
    for (let offset = 0; offset < items.length; offset += ITEMS_PER_SLICE) {
      view = withArray(base, key, items.slice(offset, offset + ITEMS_PER_SLICE));
      if (!compiled(view)) {
        for (const error of compiled.errors ?? []) {
          const item = itemOf(error, key);
          if (item) errors.push({ ...error, instancePath: `${key === '' ? '' : `/${key}`}/${item.index + offset}${item.rest}` });
          // What is outside every large array is reported once; the other arrays' items in their own passes.
          else if (first && !arrays.some((other) => itemOf(error, other))) errors.push(error);
        }
      }
      first = false;
      await yieldToLoop();
    }
  }
  // The body's own properties were checked on copies: what the validator dropped or defaulted there goes for the body too.
  if (!Array.isArray(body) && view && typeof view === 'object') {
    const own = body as Record<string, unknown>;
    for (const name of Object.keys(own)) if (!(name in view)) delete own[name];
    for (const [name, value] of Object.entries(view)) if (!(name in own)) own[name] = value;
  }
  return errors;
}

/**
 * Each route's validator is compiled on the route's first request, not at start: compiling
 * the few hundred route schemas up front took most of the start time and about 20 MB that an
 * idle server holds for routes it may never serve. Fastify reads `errors` off the function
 * after a failed check, so the wrapper hands on the compiled validator's. A body with large
 * arrays is checked in slices (validateInSlices); Fastify waits for the answer.
 */
export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? bodyAjv : textAjv;
  let compiled: Compiled | undefined;
  const validate: Validator = (data) => {
    compiled ??= ajv.compile(schema) as Compiled;
    const arrays = httpPart === 'body' ? largeArrays(data) : null;
    if (arrays) {
      return validateInSlices(compiled, schema as SchemaNode, data, arrays).then((errors) => {
        validate.errors = errors;
        return errors.length === 0;
      });
    }
    const valid = compiled(data);
    validate.errors = compiled.errors;
    return valid;
  };
  return validate as ReturnType<FastifySchemaCompiler<object>>;
};
