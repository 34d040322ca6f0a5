import type { Executor } from '../../db/database.js';
import type { OrganizationRow } from '../../platform/access/memberships.js';
import { boundByDataOwnership, giveDefaultCollections } from '../collections/default-user-collections.js';
import { findPolicy } from '../policies/policies.repository.js';
import { PolicyType } from '../policies/policy-type.js';
import type { MemberRow } from './members.repository.js';


/**
 * Gives each member whom the Enforce organization data ownership policy binds (on in an
 * organization that uses policies; owners and admins exempt) their own "My Items" collection,
 * named with the encrypted `name` the web vault sends, which they manage. A member who has one
 * already keeps it and gets no second; no name creates none, as in the official server (the
 * routes refuse a name that is not an encrypted string).
 */
export async function createDefaultCollections(tx: Executor, org: OrganizationRow, members: readonly MemberRow[], name: string | null | undefined, now: string): Promise<void> {
  if (!name?.trim() || !org.use_policies) return;
  const policy = await findPolicy(tx, org.id, PolicyType.OrganizationDataOwnership);
  if (!policy?.enabled) return;
  const bound = members.filter(boundByDataOwnership);
  if (bound.length === 0) return;
  await giveDefaultCollections(tx, org.id, bound.map((m) => m.id), name, now);
}
