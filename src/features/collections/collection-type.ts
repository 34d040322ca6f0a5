/**
 * The official CollectionType: a shared collection, or a member's own "My Items" collection,
 * which the Enforce organization data ownership policy gives each member it binds.
 */
export const CollectionType = { SharedCollection: 0, DefaultUserCollection: 1 } as const;
