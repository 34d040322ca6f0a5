import type { FastifyInstance } from 'fastify';
import { BadRequest } from './errors.js';

/**
 * Where the first string in `value` holding U+0000 is (`email`, `items.0.name`; the empty path
 * for `value` itself), or null. Objects and arrays are walked without recursion; a path is
 * spelled out only for an object or array walked into and for the string found, so that a long
 * list of ids (get-by-ids takes 1,000) costs one check an id.
 */
function nulAt(value: unknown): string | null {
  if (typeof value === 'string') return value.includes('\u0000') ? '' : null;
  const pathOf = (parent: string, key: string | number) => (parent ? `${parent}.${key}` : String(key));
  const pending: [unknown, string][] = [[value, '']];
  /** A string's path when it holds a NUL; an object or array is queued to be walked. */
  const check = (parent: string, key: string | number, item: unknown): string | null => {
    if (typeof item === 'string') return item.includes('\u0000') ? pathOf(parent, key) : null;
    if (item && typeof item === 'object') pending.push([item, pathOf(parent, key)]);
    return null;
  };
  while (pending.length > 0) {
    const [next, path] = pending.pop() as [unknown, string];
    if (Array.isArray(next)) {
      for (let index = 0; index < next.length; index++) {
        const at = check(path, index, next[index]);
        if (at !== null) return at;
      }
    } else if (next && typeof next === 'object') {
      for (const [key, item] of Object.entries(next)) {
        const at = key.includes('\u0000') ? pathOf(path, key) : check(path, key, item);
        if (at !== null) return at;
      }
    }
  }
  return null;
}

function refuse(field: string): BadRequest {
  return BadRequest.field(field || 'body', `The ${field || 'body'} field holds a NUL character (\\u0000), which no field accepts.`);
}

/**
 * Refuses a NUL character anywhere in a request's path parameters, query or body with a 400
 * naming the field: no field of this API may hold one, and PostgreSQL cannot store or compare
 * it (a query with one is an error, which would otherwise surface as a 500). Parameters and
 * query are checked before the access rules (which read them), bodies once parsed.
 */
export function refuseNulCharacters(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    const at = nulAt(request.params) ?? nulAt(request.query);
    if (at !== null) throw refuse(at);
  });
  app.addHook('preValidation', async (request) => {
    const at = nulAt(request.body);
    if (at !== null) throw refuse(at);
  });
}
