import { Type, type Static } from 'typebox';
import { Nullable } from '../../http/schemas.js';
import type { UserRow } from '../../platform/auth/users.repository.js';
import { DomainsResponse } from '../vault/sync.schemas.js';

export { DomainsResponse };

const Domain = Type.String({ minLength: 1, maxLength: 256 });

export const DomainsQuery = Type.Object({ excluded: Type.Boolean({ default: true }) });

/** PUT/POST /settings/domains (the official UpdateDomainsRequestModel). */
export const UpdateDomainsBody = Type.Object({
  equivalentDomains: Type.Optional(Nullable(Type.Array(Type.Array(Domain, { maxItems: 100 }), { maxItems: 1000 }))),
  excludedGlobalEquivalentDomains: Type.Optional(Nullable(Type.Array(Type.Integer({ minimum: 0 }), { maxItems: 1000 }))),
});
export type UpdateDomainsBody = Static<typeof UpdateDomainsBody>;

export function toDomainsResponse(user: UserRow): Static<typeof DomainsResponse> {
  const equivalent = user.equivalent_domains ? (JSON.parse(user.equivalent_domains) as string[][]) : null;
  // Bitwarden's global equivalent-domain groups are its own list; none are served yet, as in sync.
  return { object: 'domains', equivalentDomains: equivalent, globalEquivalentDomains: [] };
}
