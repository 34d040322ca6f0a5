/**
 * A route's OpenAPI documentation, spread into its schema beside `tags`: a short imperative
 * summary, and a description of what it does, who may call it and any compatibility note.
 */
export interface RouteDoc {
  summary: string;
  description: string;
  deprecated?: boolean;
}

/** An older form of a route that clients still send: marked deprecated, naming the current form. */
export function olderForm(doc: RouteDoc, current: string): RouteDoc {
  return { ...doc, description: `Older clients' form of \`${current}\`. ${doc.description}`, deprecated: true };
}
