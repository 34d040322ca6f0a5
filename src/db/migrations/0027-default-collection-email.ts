import type { Kysely } from 'kysely';

/**
 * A member's "My Items" collection outlives the member: when they leave the organization or
 * delete their account it becomes a shared collection that keeps their email, which the admin
 * views show (`defaultUserCollectionEmail`), as on the official server.
 */
export function defaultCollectionEmail() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('collections').addColumn('default_user_collection_email', 'text').execute();
    },
  };
}
