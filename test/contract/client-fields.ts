/**
 * Reads test/contract/official-client-fields.json (written by scripts/official-client-fields.ts)
 * and checks a JSON schema or a live answer against the fields a client model reads, the way the
 * client looks each one up.
 */
import { readFileSync } from 'node:fs';
import type { JsonSchema } from '../support/openapi.js';

export interface ClientField {
  /** The first is the name in the client source; the rest are serde aliases. */
  names: string[];
  model?: string;
  array: boolean;
  /** The JSON type an SDK field must have: string, integer, number, boolean, array, object or any. */
  type?: string;
  /** Looked up by these names only; otherwise as `getResponseProperty` does (Name, name, name lower-cased, upper-cased). */
  exact: boolean;
  /** The client fails without it (an SDK field that is not Option, a `require!`, a key model that throws). */
  required: boolean;
}

export interface FieldList {
  about: string;
  read: { from: string; commit: string; date: string }[];
  routes: Record<string, string[]>;
  models: Record<string, { source: string; fields: string[] }>;
}

export const FIELD_LIST = JSON.parse(readFileSync(new URL('official-client-fields.json', import.meta.url), 'utf8')) as FieldList;

const LINE = /^([^:\s(]+)(?:: (\S+?)(\[\])?)?((?: \((?:exact|required)\))*)$/;
const JSON_TYPES = new Set(['string', 'integer', 'number', 'boolean', 'array', 'object', 'any']);

export function parseField(line: string): ClientField {
  const m = LINE.exec(line);
  if (!m) throw new Error(`unreadable field line: ${line}`);
  const [, names, shape, array, flags] = m;
  const isType = shape !== undefined && JSON_TYPES.has(shape);
  return {
    names: names!.split('|'),
    ...(shape && !isType ? { model: shape } : {}),
    ...(isType ? { type: shape } : {}),
    array: array !== undefined,
    exact: flags!.includes('(exact)'),
    required: flags!.includes('(required)'),
  };
}

export function fieldsOf(model: string): ClientField[] {
  const entry = FIELD_LIST.models[model];
  if (!entry) throw new Error(`model ${model} is not in the list`);
  return entry.fields.map(parseField);
}

/** The key a client finds for a field among an object's keys, or undefined when it finds none. */
export function keyFor(field: ClientField, keys: ReadonlySet<string>): string | undefined {
  if (field.exact) return field.names.find((n) => keys.has(n));
  // BaseResponse.getResponseProperty: the name, then its first letter in the other case, then that lower-cased, then upper-cased.
  const name = field.names[0]!;
  if (keys.has(name)) return name;
  const first = name.charAt(0);
  const other = (first === first.toUpperCase() ? first.toLowerCase() : first.toUpperCase()) + name.slice(1);
  return [other, other.toLowerCase(), other.toUpperCase()].find((n) => keys.has(n));
}

export interface Miss {
  /** `Model.Field`: the key of the allowlist. */
  key: string;
  /** Where in the answer: `profile.organizations[].useSso`. */
  at: string;
  problem: 'absent' | 'null' | `type ${string}` | `undescribed${string}`;
}

// ---------------------------------------------------------------------------------------------
// Schemas

/** The properties and types a schema allows, its variants (anyOf/oneOf/allOf, nullable) merged. */
function flatten(schema: JsonSchema | undefined): { properties: Record<string, JsonSchema>; types: Set<string>; items?: JsonSchema; open: boolean } {
  const out = { properties: {} as Record<string, JsonSchema>, types: new Set<string>(), items: undefined as JsonSchema | undefined, open: false };
  if (!schema || Object.keys(schema).length === 0) {
    out.open = true;
    return out;
  }
  for (const t of Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : []) out.types.add(t);
  if (schema.nullable) out.types.add('null');
  if (schema.properties) Object.assign(out.properties, schema.properties);
  if (schema.additionalProperties === true) out.open = true;
  if (schema.items) out.items = schema.items;
  if (schema.enum) for (const v of schema.enum) out.types.add(v === null ? 'null' : Number.isInteger(v) ? 'integer' : typeof v);
  if (schema.const !== undefined) out.types.add(schema.const === null ? 'null' : typeof schema.const);
  const parts = [...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? [])];
  // An object schema that names no property says nothing of its fields.
  if (!schema.properties && !schema.items && parts.length === 0 && (out.types.has('object') || out.types.size === 0)) out.open = true;
  for (const part of parts) {
    const f = flatten(part);
    Object.assign(out.properties, f.properties);
    for (const t of f.types) out.types.add(t);
    out.items ??= f.items;
    out.open ||= f.open;
  }
  return out;
}

function typeFits(expected: string, types: Set<string>, open: boolean): boolean {
  if (expected === 'any' || open || types.size === 0) return true;
  if (types.has(expected)) return true;
  return expected === 'number' && types.has('integer');
}

/** What a client model reads that a response schema does not declare. */
export function schemaMisses(model: string, schema: JsonSchema | undefined, at = '', seen: string[] = []): Miss[] {
  // A value the schema says is always null (`enum: [null]`) has no fields to read.
  if (seen.includes(model) || (schema?.enum?.length && schema.enum.every((v) => v === null))) return [];
  const { properties, open } = flatten(schema);
  const keys = new Set(Object.keys(properties));
  const misses: Miss[] = [];
  let undescribed = false;
  for (const field of fieldsOf(model)) {
    const key = keyFor(field, keys);
    const where = `${at}${at ? '.' : ''}${key ?? field.names[0]!}`;
    const id = `${model}.${field.names[0]!}`;
    if (key === undefined) {
      // An open object (`additionalProperties: true`, or no properties named) may well send it:
      // one miss for the model says its schema is not written out; the live check reads the rest.
      if (open) undescribed = true;
      else misses.push({ key: id, at: where, problem: 'absent' });
      continue;
    }
    const f = flatten(properties[key]);
    const expected = field.model ? (field.array ? 'array' : 'object') : field.type;
    if (expected && !typeFits(expected, f.types, f.open)) misses.push({ key: id, at: where, problem: `type ${expected}, schema ${[...f.types].join('|')}` });
    if (field.model) misses.push(...schemaMisses(field.model, field.array ? f.items : properties[key], `${where}${field.array ? '[]' : ''}`, [...seen, model]));
  }
  if (undescribed) misses.push({ key: `${model}.*`, at: at || '(answer)', problem: 'undescribed: the schema is an open object' });
  return misses;
}

// ---------------------------------------------------------------------------------------------
// Live answers

const jsonType = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : Number.isInteger(v) ? 'integer' : typeof v);

/** What a client model reads that a live answer lacks, or has in a shape the client cannot read. */
export function liveMisses(model: string, value: unknown, at = ''): Miss[] {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [];
  const keys = new Set(Object.keys(value));
  const misses: Miss[] = [];
  for (const field of fieldsOf(model)) {
    const key = keyFor(field, keys);
    const where = `${at}${at ? '.' : ''}${key ?? field.names[0]!}`;
    const id = `${model}.${field.names[0]!}`;
    if (key === undefined) {
      misses.push({ key: id, at: where, problem: 'absent' });
      continue;
    }
    const v = (value as Record<string, unknown>)[key];
    if (v === null || v === undefined) {
      if (field.required) misses.push({ key: id, at: where, problem: 'null' });
      continue;
    }
    const expected = field.model ? (field.array ? 'array' : 'object') : field.type;
    if (expected && !typeFits(expected, new Set([jsonType(v)]), false)) misses.push({ key: id, at: where, problem: `type ${expected}, sent ${jsonType(v)}` });
    else if (field.model && field.array) (v as unknown[]).forEach((item) => misses.push(...liveMisses(field.model!, item, `${where}[]`)));
    else if (field.model) misses.push(...liveMisses(field.model, v, where));
  }
  return misses;
}
