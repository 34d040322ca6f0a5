import type { Clock } from '../../shared/clock.js';
import type { Db } from '../../db/database.js';
import { BadRequest, NotFound } from '../../http/errors.js';
import type { AuditLog } from '../../platform/audit/audit-log.js';
import { EventType } from '../../platform/audit/event-type.js';
import { actingOf, type MemberCaller } from '../../platform/access/org-access.js';
import { updateOrganization } from '../organizations/organizations.repository.js';
import type { OrganizationService } from '../organizations/organizations.service.js';
import { planFeatures } from '../organizations/plans.js';
import { renamingField } from './field-names.js';
import { secretsManagerUsage } from './public-api.repository.js';
import type { SubscriptionBody, SubscriptionResponse } from './public-api.schemas.js';
import { type OrganizationRow, findOrganization, countOccupiedSeats } from '../../platform/access/memberships.js';

const NO_SECRETS_MANAGER = 'Organization has no access to Secrets Manager.';
const UPDATED = 'Subscription updated successfully.';

function details(org: OrganizationRow): SubscriptionResponse {
  return {
    object: 'organizationSubscription',
    // This server does not scale seats by itself, so there is no automatic-scaling ceiling.
    passwordManager: { seats: org.seats, maxAutoScaleSeats: null, storage: org.max_storage_gb },
    secretsManager: { seats: org.sm_seats, maxAutoScaleSeats: null, serviceAccounts: org.sm_service_accounts, maxAutoScaleServiceAccounts: null },
  };
}

/**
 * The cloud organization's subscription through the public API: absolute seat, storage and
 * Secrets Manager figures (no payment is taken here). Storage goes through the organization
 * service's own adjustment, so its limits are the web route's.
 */
export function createSubscriptions(deps: { db: Db; clock: Clock; audit: AuditLog; organizations: OrganizationService }) {
  const { db, clock, audit } = deps;

  async function organizationOrThrow(id: string): Promise<OrganizationRow> {
    const org = await findOrganization(db, id);
    if (!org) throw new NotFound();
    return org;
  }

  return {
    async read(organizationId: string): Promise<SubscriptionResponse> {
      return details(await organizationOrThrow(organizationId));
    },

    async update(caller: MemberCaller, body: SubscriptionBody): Promise<SubscriptionResponse> {
      const { membership: actor, client } = caller;
      const pm = body.passwordManager;
      const sm = body.secretsManager;
      if (!pm && !sm) throw new BadRequest('At least one of PasswordManager or SecretsManager must be provided.', { '': ['At least one of PasswordManager or SecretsManager must be provided.'] });
      const org = await organizationOrThrow(actor.organizationId);
      const plan = planFeatures(org.plan_type);

      // Every check first, so that a refused part writes nothing.
      const changes: { seats?: number; sm_seats?: number; sm_service_accounts?: number } = {};
      if (pm?.seats && pm.seats !== org.seats) {
        if (plan?.seats !== null) throw BadRequest.field('passwordManager.seats', 'Plan does not allow additional users.');
        const used = await countOccupiedSeats(db, org.id);
        if (pm.seats < used) throw BadRequest.field('passwordManager.seats', `The organization has ${used} members occupying seats; seats cannot be fewer.`);
        changes.seats = pm.seats;
      }
      let message = UPDATED;
      if (sm && (sm.seats || sm.serviceAccounts)) {
        if (!org.use_secrets_manager) {
          message = NO_SECRETS_MANAGER;
        } else {
          const usage = await secretsManagerUsage(db, org.id);
          if (sm.seats && sm.seats < usage.seats) throw BadRequest.field('secretsManager.seats', `${usage.seats} members use Secrets Manager; seats cannot be fewer.`);
          if (sm.serviceAccounts && sm.serviceAccounts < usage.serviceAccounts) {
            throw BadRequest.field('secretsManager.serviceAccounts', `The organization has ${usage.serviceAccounts} machine accounts; the limit cannot be lower.`);
          }
          if (sm.seats) changes.sm_seats = sm.seats;
          if (sm.serviceAccounts) changes.sm_service_accounts = sm.serviceAccounts;
        }
      }
      if (pm?.storage) {
        const current = org.max_storage_gb ?? plan?.maxStorageGb ?? 0;
        const adjustment = pm.storage - current;
        // The organization service checks the plan's storage rules and records the event.
        if (adjustment !== 0) await renamingField('storageGbAdjustment', 'passwordManager.storage', () => deps.organizations.adjustStorage(caller, adjustment));
      }
      if (Object.keys(changes).length > 0) {
        await db.transaction().execute(async (tx) => {
          await updateOrganization(tx, org.id, { ...changes, revision_date: clock.now().toISOString() });
          await audit.record(tx, client, { type: EventType.Organization_Updated, organizationId: org.id, ...actingOf(actor) });
        });
      }
      return { ...details(await organizationOrThrow(org.id)), message };
    },
  };
}
