import type { Kysely, KyselyPlugin } from 'kysely';

/** A view of `db` that counts the statements sent through it. */
export function counting<DB>(db: Kysely<DB>): { db: Kysely<DB>; count: () => number } {
  let count = 0;
  const plugin: KyselyPlugin = {
    transformQuery: (args) => {
      count++;
      return args.node;
    },
    transformResult: async (args) => args.result,
  };
  return { db: db.withPlugin(plugin), count: () => count };
}
