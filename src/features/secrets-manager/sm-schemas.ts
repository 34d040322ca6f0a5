import { Type, type Static } from 'typebox';
import { Guid } from '../../http/schemas.js';

/** Path parameters of the Secrets Manager routes; a bare `{id}` is `IdParams` (src/http/schemas.ts). */
export const OrganizationIdParams = Type.Object({ organizationId: Guid });
export const ProjectIdParams = Type.Object({ projectId: Guid });
export const SecretIdParams = Type.Object({ secretId: Guid });
export const ServiceAccountIdParams = Type.Object({ serviceAccountId: Guid });

/** The most ids one bulk Secrets Manager call takes. */
const MAX_BULK_IDS = 1000;

/** A bare JSON array of ids, as the official clients send bulk deletes (`["<id>", …]`). */
export const IdArrayBody = Type.Array(Guid, { minItems: 1, maxItems: MAX_BULK_IDS, description: `1 to ${MAX_BULK_IDS} ids` });

/** `{ ids: [...] }`, as the get-by-ids and revoke calls send them. */
export const IdsObjectBody = Type.Object({ ids: IdArrayBody });

/** The per-id answer of bulk calls; `error` is null on success. */
export const BulkDeleteResult = Type.Object({
  object: Type.Literal('BulkDeleteResponseModel'),
  id: Guid,
  error: Type.Union([Type.String(), Type.Null()]),
});

/** The official server's text for an id the caller may not act on. */
export const ACCESS_DENIED = 'access denied';

/** One answer per requested id, as a bulk call answers it: done, or "access denied" alike for every other reason. */
export function resultsPerId(requested: readonly string[], done: readonly { id: string }[]): Static<typeof BulkDeleteResult>[] {
  const ids = new Set(done.map((row) => row.id));
  return requested.map((id) => ({ object: 'BulkDeleteResponseModel', id, error: ids.has(id) ? null : ACCESS_DENIED }));
}
