import { BadRequest } from './errors.js';

/** The ids lower-cased, in their order; one listed twice is a 400 naming the field. */
export function distinctIds(ids: readonly string[], field: string): string[] {
  const seen = new Set<string>();
  return ids.map((raw) => {
    const id = raw.toLowerCase();
    if (seen.has(id)) throw BadRequest.field(field, `The ${field} field lists ${id} more than once.`);
    seen.add(id);
    return id;
  });
}
