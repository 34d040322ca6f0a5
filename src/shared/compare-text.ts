/**
 * Orders strings by their UTF-16 code units, as `Array.prototype.sort` does without a
 * comparator: the same on every machine and locale, and without `localeCompare`, whose first
 * call maps ICU's data into the process (eslint.config.js).
 */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
