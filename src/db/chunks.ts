/** Items per multi-row statement or `in` list: keeps bound parameters well under both engines' limits. */
const CHUNK = 500;

/** `items` in consecutive slices of at most `size`, for statements that must stay small. */
export function chunks<T>(items: readonly T[], size = CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
