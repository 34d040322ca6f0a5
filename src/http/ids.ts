import { BadRequest } from './errors.js';
import { GUID_PATTERN } from './schemas.js';

const GUID = new RegExp(GUID_PATTERN);

/** Whether `text` is a GUID in any letter case: the `Guid` schema's rule, for ids read outside a route schema. */
export function isGuid(text: string): boolean {
  return GUID.test(text);
}

/** The ids lower-cased, in their order; one listed twice is a 400 naming the field. */
export function distinctIds(ids: readonly string[], field: string): string[] {
  const lowered = ids.map((id) => id.toLowerCase());
  if (new Set(lowered).size === lowered.length) return lowered;
  // Only a refused list pays for finding which id is repeated.
  const seen = new Set<string>();
  const repeated = lowered.find((id) => seen.has(id) || !seen.add(id));
  throw BadRequest.field(field, `The ${field} field lists ${repeated} more than once.`);
}

/**
 * The ids of a bulk delete or revoke, lower-cased, an id listed twice acted on (and answered)
 * once. Get-by-ids calls refuse a repeated id instead (`distinctIds`).
 */
export function mergedIds(ids: readonly string[]): string[] {
  return [...new Set(ids.map((id) => id.toLowerCase()))];
}
