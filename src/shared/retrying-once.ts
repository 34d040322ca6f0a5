/**
 * `make` run on the first call and its promise kept for every later one, unless it failed: a
 * failure is not kept, so the next call tries again (a key not yet readable, a library to load).
 */
export function retryingOnce<T>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined;
  return () => {
    made ??= make().catch((error: unknown) => {
      made = undefined;
      throw error;
    });
    return made;
  };
}
