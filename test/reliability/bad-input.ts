/**
 * fast-check arbitraries of bad requests for one operation of the OpenAPI document: path
 * parameters (real, unknown, foreign and invalid ids, odd strings), a query, a body (malformed
 * JSON, values from the schema with a field dropped, added, retyped, made huge or deeply nested,
 * unicode edge cases, `__proto__` and `constructor` keys), a content type and a caller.
 */
import fc from 'fast-check';
import type { JsonSchema, Operation } from '../support/openapi.js';

export const ENC = '2.AAAAAAAAAAAAAAAAAAAAAA==|AAAAAAAAAAAAAAAAAAAAAA==|AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=';

/** Ids a request may name: the seeded ones of the caller's organization and of another one. */
export interface IdPool {
  own: () => string[];
  foreign: () => string[];
}

export type Caller = 'anonymous' | 'user' | 'organization' | 'machine' | 'forged';

export interface BadRequest {
  caller: Caller;
  path: string;
  /** Raw body text, and the content type it is sent with. */
  body?: string;
  contentType?: string;
  /** What was done to the body, for the failure message. */
  shape: string;
}

const UNICODE = [
  '\u0000',
  '\ud800',
  '\udfff',
  '\u202e',
  '\u200b\u200d',
  '\ufeff',
  '𝕏😀👩‍👩‍👧',
  'é'.normalize('NFD'),
  '\r\n\t',
  "'; drop table users; --",
  '../../etc/passwd',
  '%00%2e%2e',
  '<script>alert(1)</script>',
];

const WEIRD_STRINGS = ['', ' ', '__proto__', 'constructor', 'prototype', 'null', 'undefined', 'NaN', '-1', '0', '1e309', 'true', '[]', '{}', ...UNICODE];

const INVALID_IDS = ['not-a-guid', '00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-ffff-ffff-ffffffffffff', '0', '-1', '12345678-1234-1234-1234-1234567890ab ', '{12345678-1234-1234-1234-1234567890ab}', 'ZZZZZZZZ-ZZZZ-ZZZZ-ZZZZ-ZZZZZZZZZZZZ'];

const text = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }) },
  { weight: 2, arbitrary: fc.constantFrom(...WEIRD_STRINGS) },
  { weight: 1, arbitrary: fc.constant(ENC) },
);

function idArb(pool: IdPool): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.nat().map((n) => pick(pool.own(), n) ?? '00000000-0000-0000-0000-000000000001') },
    { weight: 2, arbitrary: fc.nat().map((n) => pick(pool.foreign(), n) ?? '00000000-0000-0000-0000-000000000002') },
    { weight: 2, arbitrary: fc.uuid() },
    { weight: 1, arbitrary: fc.constantFrom(...INVALID_IDS) },
    { weight: 1, arbitrary: text },
  );
}

function pick<T>(list: readonly T[], n: number): T | undefined {
  return list.length === 0 ? undefined : list[n % list.length];
}

const GUID_PATTERN = /\[0-9a-fA-F\]\{8\}/;

function typesOf(schema: JsonSchema): string[] {
  if (Array.isArray(schema.type)) return schema.type;
  return schema.type ? [schema.type] : [];
}

/** Values roughly of the schema's shape (the starting point the mutations spoil). */
export function valueOf(schema: JsonSchema, pool: IdPool, depth = 0): fc.Arbitrary<unknown> {
  if (depth > 4) return fc.constant(null);
  const branches = schema.anyOf ?? schema.oneOf;
  if (branches && branches.length > 0) return fc.oneof(...branches.map((b) => valueOf(b, pool, depth + 1)));
  if (schema.allOf && schema.allOf.length > 0) return valueOf(Object.assign({}, ...schema.allOf) as JsonSchema, pool, depth + 1);
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum && schema.enum.length > 0) return fc.constantFrom(...schema.enum);
  const types = typesOf(schema);
  const nullable = schema.nullable === true || types.includes('null');
  const base = valueOfType(types.find((t) => t !== 'null') ?? (schema.properties ? 'object' : undefined), schema, pool, depth);
  return nullable ? fc.option(base, { freq: 5 }) : base;
}

function valueOfType(type: string | undefined, schema: JsonSchema, pool: IdPool, depth: number): fc.Arbitrary<unknown> {
  switch (type) {
    case 'string':
      if (schema.format === 'uuid' || (schema.pattern && GUID_PATTERN.test(schema.pattern))) return idArb(pool);
      if (schema.format === 'date-time') return fc.oneof(fc.date({ noInvalidDate: true }).map((d) => d.toISOString()), text);
      return fc.oneof({ weight: 3, arbitrary: fc.string({ minLength: Math.min(schema.minLength ?? 0, 8), maxLength: Math.min(schema.maxLength ?? 30, 30) }) }, { weight: 2, arbitrary: text });
    case 'integer':
      return fc.oneof(fc.integer({ min: schema.minimum ?? -5, max: Math.min(schema.maximum ?? 1000, 2 ** 31) }), fc.constantFrom(-1, 0, 2 ** 31, Number.MAX_SAFE_INTEGER));
    case 'number':
      return fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer());
    case 'boolean':
      return fc.boolean();
    case 'array': {
      const item = schema.items ? valueOf(schema.items, pool, depth + 1) : fc.jsonValue({ maxDepth: 1 });
      return fc.array(item, { maxLength: Math.min(schema.maxItems ?? 4, 4) });
    }
    case 'object': {
      const props = schema.properties ?? {};
      const required = schema.required ?? [];
      const model = Object.fromEntries(Object.entries(props).map(([key, s]) => [key, valueOf(s, pool, depth + 1)]));
      return fc.record(model, { requiredKeys: required.filter((k) => k in props) });
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** A value of the wrong kind for any field. */
const wrongValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(null, true, false, 0, -1, 1.5, 2 ** 53, '', 'x', [], {}, [null], { '': '' }, ['__proto__']),
  text,
  fc.jsonValue({ maxDepth: 2 }),
);

const MUTATIONS = ['asIs', 'dropRequired', 'extraField', 'retype', 'huge', 'deep', 'proto', 'unicode', 'emptyObject', 'array', 'scalar'] as const;
type Mutation = (typeof MUTATIONS)[number];

interface MutationChoice {
  kind: Mutation;
  n: number;
  wrong: unknown;
  extraKey: string;
}

/** The leaf and container paths of a JSON value. */
function pathsOf(value: unknown, prefix: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  if (value && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) {
      const path = [...prefix, Array.isArray(value) ? Number(key) : key];
      out.push(path);
      pathsOf(child, path, out);
    }
  }
  return out;
}

function setAt(value: unknown, path: (string | number)[], replace: (old: unknown) => unknown, remove = false): unknown {
  if (path.length === 0) return replace(value);
  const copy: unknown = structuredClone(value);
  let node = copy as Record<string | number, unknown>;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  const last = path[path.length - 1] as string | number;
  if (remove) {
    if (Array.isArray(node)) node.splice(Number(last), 1);
    else delete node[last];
  } else node[last] = replace(node[last]);
  return copy;
}

const PROTO_KEYS = '"__proto__":{"polluted":"yes","isAdmin":true},"constructor":{"prototype":{"polluted":"yes"}},';

/** The body text a mutation makes of a value. */
function mutate(value: unknown, schema: JsonSchema, m: MutationChoice): { text: string; shape: string } {
  const paths = pathsOf(value);
  const at = paths[m.n % Math.max(paths.length, 1)] ?? [];
  switch (m.kind) {
    case 'asIs':
      return { text: JSON.stringify(value), shape: 'from the schema' };
    case 'dropRequired': {
      const required = schema.required ?? [];
      const key = required[m.n % Math.max(required.length, 1)];
      if (!key || !value || typeof value !== 'object') return { text: JSON.stringify(value), shape: 'from the schema' };
      return { text: JSON.stringify(setAt(value, [key], () => undefined, true)), shape: `required ${key} dropped` };
    }
    case 'extraField':
      return { text: JSON.stringify(setAt(value, [...at.slice(0, -1), m.extraKey], () => m.wrong)), shape: `extra field ${m.extraKey}` };
    case 'retype':
      return { text: JSON.stringify(setAt(value, at, () => m.wrong)), shape: `${at.join('.') || 'body'} retyped` };
    case 'huge': {
      const huge = m.n % 3 === 0 ? 'A'.repeat(300_000) : m.n % 3 === 1 ? Array.from({ length: 20_000 }, (_, i) => i) : Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`k${i}`, ENC]));
      return { text: JSON.stringify(setAt(value, at, () => huge)), shape: `${at.join('.') || 'body'} huge` };
    }
    case 'deep': {
      const depth = 200 + (m.n % 5000);
      const open = m.n % 2 === 0 ? '['.repeat(depth) : '{"a":'.repeat(depth);
      const close = m.n % 2 === 0 ? ']'.repeat(depth) : '}'.repeat(depth);
      const nested = `${open}1${close}`;
      const base = JSON.stringify(setAt(value, at, () => '__DEEP__'));
      return { text: base.includes('"__DEEP__"') ? base.replace('"__DEEP__"', nested) : nested, shape: `nested ${depth} deep` };
    }
    case 'proto': {
      const base = JSON.stringify(value);
      // Into the first object of the body (and of every object, on odd draws).
      const text = base.startsWith('{') ? (m.n % 2 ? base.replaceAll('{', `{${PROTO_KEYS}`) : `{${PROTO_KEYS}${base.slice(1)}`).replaceAll(',}', '}') : `{${PROTO_KEYS.slice(0, -1)}}`;
      return { text, shape: '__proto__ and constructor keys' };
    }
    case 'unicode':
      return { text: JSON.stringify(setAt(value, at, () => UNICODE[m.n % UNICODE.length])), shape: `${at.join('.') || 'body'} unicode` };
    case 'emptyObject':
      return { text: '{}', shape: 'empty object' };
    case 'array':
      return { text: JSON.stringify([value]), shape: 'wrapped in an array' };
    case 'scalar':
      return { text: JSON.stringify(m.wrong), shape: 'another JSON value' };
  }
}

const MALFORMED_JSON = ['{', '{"a":', '[1,2', 'nul', '{"a":1}}', '{a:1}', "{'a':1}", '{"a":1,}', '\u0000', '{"a":"\\ud800"}', '{"a":"\\x"}', '[' + '1,'.repeat(10) + ']', '\ufeff{}', 'true false', '"unterminated', '{"__proto__":', '1'.repeat(400)];

const CONTENT_TYPES = ['text/plain', 'application/xml', 'multipart/form-data', 'application/json; charset=latin1', 'application/x-www-form-urlencoded', 'application/json'];

/** A bad (or, now and then, valid) request for one operation. */
export function badRequest(operation: Operation, pool: IdPool): fc.Arbitrary<BadRequest> {
  const params = fc.tuple(...operation.pathParams.map(() => idArb(pool)));
  const queryKeys = Object.keys(operation.query);
  const query = fc.record(Object.fromEntries(queryKeys.map((k) => [k, fc.oneof(valueOf(operation.query[k] as JsonSchema, pool), text)])), { requiredKeys: [] });
  const extraQuery = fc.option(fc.tuple(fc.constantFrom('__proto__[x]', 'constructor', 'a[b][c]', 'organizationId', 'x'), text), { freq: 3 });
  const caller = fc.constantFrom<Caller>('anonymous', 'user', 'user', 'user', 'user', 'user', 'organization', 'machine', 'forged');
  const choice: fc.Arbitrary<MutationChoice> = fc.record({ kind: fc.constantFrom(...MUTATIONS), n: fc.nat(), wrong: wrongValue, extraKey: fc.oneof(fc.constantFrom('__proto__', 'constructor', 'id', 'organizationId', 'userId', 'isAdmin'), fc.string({ maxLength: 10 })) });
  const schema = operation.body?.schema ?? { type: 'object' };
  const body = fc.oneof(
    { weight: 6, arbitrary: fc.tuple(valueOf(schema, pool), choice).map(([value, m]) => ({ ...mutate(value, schema, m), type: operation.body?.type === 'form' ? ('form-as-json' as const) : ('json' as const) })) },
    { weight: operation.body?.type === 'form' ? 6 : 0, arbitrary: fc.tuple(valueOf(schema, pool), choice).map(([value, m]) => ({ text: formOf(value, m), shape: `form ${m.kind}`, type: 'form' as const })) },
    { weight: 2, arbitrary: fc.constantFrom(...MALFORMED_JSON).map((text) => ({ text, shape: 'malformed JSON', type: 'json' as const })) },
    { weight: 1, arbitrary: fc.tuple(fc.string({ maxLength: 50 }), fc.constantFrom(...CONTENT_TYPES)).map(([text, type]) => ({ text, shape: `raw text as ${type}`, type })) },
    { weight: operation.body ? 1 : 3, arbitrary: fc.constant({ text: undefined as string | undefined, shape: 'no body', type: 'none' as const }) },
  );
  const anyBody = operation.method === 'GET' ? fc.constant({ text: undefined as string | undefined, shape: 'no body', type: 'none' as const }) : body;
  return fc.tuple(caller, params, query, extraQuery, anyBody).map(([who, values, q, extra, b]) => {
    let path = operation.path;
    operation.pathParams.forEach((name, i) => (path = path.replace(`{${name}}`, pathSegment(String(values[i])))));
    const search = new URLSearchParams();
    for (const [k, v] of Object.entries(q)) search.append(k, typeof v === 'string' ? v : JSON.stringify(v));
    if (extra) search.append(extra[0], extra[1]);
    const qs = search.toString();
    const contentType =
      b.type === 'none' ? undefined : b.type === 'json' || b.type === 'form-as-json' ? 'application/json' : b.type === 'form' ? 'application/x-www-form-urlencoded' : b.type;
    return {
      caller: who,
      path: qs ? `${path}?${qs}` : path,
      ...(b.text !== undefined ? { body: b.text } : {}),
      ...(contentType ? { contentType } : {}),
      shape: b.shape,
    };
  });
}

function formOf(value: unknown, m: MutationChoice): string {
  const fields = value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  const search = new URLSearchParams();
  for (const [k, v] of Object.entries(fields)) search.append(k, typeof v === 'string' ? v : JSON.stringify(v));
  if (m.kind === 'extraField' || m.kind === 'proto') search.append(m.kind === 'proto' ? '__proto__[polluted]' : m.extraKey, String(m.wrong));
  if (m.kind === 'huge') search.append('client_id', 'A'.repeat(200_000));
  if (m.kind === 'unicode') search.append('username', UNICODE[m.n % UNICODE.length] as string);
  if (m.kind === 'dropRequired') {
    const keys = [...search.keys()];
    if (keys.length > 0) search.delete(keys[m.n % keys.length] as string);
  }
  return search.toString();
}

/** A path segment for any string; a lone surrogate becomes its (invalid) UTF-8 bytes, percent-encoded. */
function pathSegment(value: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    return value.split('').map((ch) => (/[\ud800-\udfff]/.test(ch) ? '%ED%A0%80' : encodeURIComponent(ch))).join('');
  }
}
