import type { Clock } from '../../shared/clock.js';
import type { Db } from '../../db/database.js';
import { BadRequest, NotFound } from '../../http/errors.js';
import { findOrganization } from '../../platform/access/memberships.js';
import { touchAccountRevisions } from '../../platform/auth/users.repository.js';
import { lockOrganization, smSeatError } from './member-rules.js';
import { findMembers, grantSecretsManager } from './members.repository.js';

/**
 * The member list's bulk "Activate Secrets Manager": gives the listed members of this organization
 * who lack it access to Secrets Manager, within the organization's Secrets Manager seats.
 * `selfHosted` words the refusal past the seats as the official server does on each variant.
 */
export function createSecretsManagerAccess({ db, clock, selfHosted }: { db: Db; clock: Clock; selfHosted: boolean }) {
  return {
    /**
     * Ids of other organizations and members who already have access are skipped, as the official
     * server does; nothing left is a 400. The seat check and the write share one transaction under
     * the organization's lock, so two activations cannot both take the last seat.
     */
    async enable(organizationId: string, ids: readonly string[]): Promise<void> {
      await db.transaction().execute(async (tx) => {
        await lockOrganization(tx, organizationId);
        const members = (await findMembers(tx, organizationId, [...new Set(ids.map((id) => id.toLowerCase()))])).filter((m) => !m.access_secrets_manager);
        if (members.length === 0) throw new BadRequest('Users invalid.');
        const org = await findOrganization(tx, organizationId);
        if (!org) throw new NotFound();
        if (!org.use_secrets_manager) throw new BadRequest('Organization does not use Secrets Manager');
        const seats = await smSeatError(tx, org, members.length, selfHosted);
        if (seats) throw new BadRequest(seats);
        const now = clock.now().toISOString();
        await grantSecretsManager(tx, members.map((m) => m.id), now);
        await touchAccountRevisions(tx, members.flatMap((m) => (m.user_id ? [m.user_id] : [])), now);
      });
    },
  };
}
