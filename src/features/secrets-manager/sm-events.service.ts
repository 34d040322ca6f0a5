import type { Clock } from '../../clock.js';
import type { Db } from '../../db/database.js';
import type { Principal } from '../../http/access.js';
import { NotFound } from '../../http/errors.js';
import { normalizeGuid } from '../../http/schemas.js';
import type { EventIdColumn } from '../events/events.repository.js';
import { createEventQueryService, type EventPage, type EventQueryInput } from '../events/events.service.js';
import { confirmedMembership } from '../organizations/org-access.js';
import { requireSmCaller, secretRights, serviceAccountRights, smAccessIn, smAccessOf } from './sm-access.js';

type PageQuery = Omit<EventQueryInput, 'actingUserId' | 'itemId'>;

/** Events of a machine account: those it performed and those about it. */
const SERVICE_ACCOUNT_COLUMNS: readonly EventIdColumn[] = ['service_account_id', 'granted_service_account_id'];

/**
 * The per-secret, per-project and per-machine-account event routes. The three under
 * `/organization/{orgId}/…` are the event log's (a member who may read it), as the official
 * server decides them; the secret's also needs read access to the secret.
 */
export function createSmEventService({ db, clock }: { db: Db; clock: Clock }) {
  const events = createEventQueryService({ db, clock });

  /** A member of `organizationId` who may read its event log, or 404. */
  async function requireEventReader(principal: Principal, organizationId: string): Promise<void> {
    if (principal.kind !== 'user') throw new NotFound();
    const membership = await confirmedMembership(db, organizationId, principal.userId);
    if (!membership?.rights.has('accessEventLogs')) throw new NotFound();
  }

  /** 404 when `id` is a row of another organization; a missing row may have been deleted, its events remain. */
  async function requireNotElsewhere(table: 'projects' | 'service_accounts', id: string, organizationId: string): Promise<void> {
    const row = await db.selectFrom(table).select('organization_id').where('id', '=', id).executeTakeFirst();
    if (row && row.organization_id !== organizationId) throw new NotFound();
  }

  return {
    async secretEvents(principal: Principal, rawOrgId: string, rawId: string, query: PageQuery): Promise<EventPage> {
      const organizationId = normalizeGuid(rawOrgId);
      const id = normalizeGuid(rawId);
      await requireEventReader(principal, organizationId);
      const caller = await requireSmCaller(db, principal, organizationId);
      const secret = await db.selectFrom('secrets').select(['id', 'organization_id', 'project_id']).where('id', '=', id).executeTakeFirst();
      if (secret) {
        if (secret.organization_id !== organizationId) throw new NotFound();
        if (!secretRights(await smAccessOf(db, caller), secret).read) throw new NotFound();
      } else if (caller.kind !== 'admin') {
        // A permanently deleted secret's events: only those who saw every secret may read them.
        throw new NotFound();
      }
      return events.eventsAbout(organizationId, { columns: ['secret_id'], id }, query);
    },

    async projectEvents(principal: Principal, rawOrgId: string, rawId: string, query: PageQuery): Promise<EventPage> {
      const organizationId = normalizeGuid(rawOrgId);
      const id = normalizeGuid(rawId);
      await requireEventReader(principal, organizationId);
      await requireNotElsewhere('projects', id, organizationId);
      return events.eventsAbout(organizationId, { columns: ['project_id'], id }, query);
    },

    async serviceAccountEvents(principal: Principal, rawOrgId: string, rawId: string, query: PageQuery): Promise<EventPage> {
      const organizationId = normalizeGuid(rawOrgId);
      const id = normalizeGuid(rawId);
      await requireEventReader(principal, organizationId);
      await requireNotElsewhere('service_accounts', id, organizationId);
      return events.eventsAbout(organizationId, { columns: SERVICE_ACCOUNT_COLUMNS, id }, query);
    },

    /** The machine-account page's own event route: whoever can read the machine account. */
    async machineAccountEvents(principal: Principal, rawId: string, query: PageQuery): Promise<EventPage> {
      const id = normalizeGuid(rawId);
      const account = await db.selectFrom('service_accounts').select(['id', 'organization_id']).where('id', '=', id).executeTakeFirst();
      if (!account) throw new NotFound();
      const access = await smAccessIn(db, principal, account.organization_id);
      if (!serviceAccountRights(access, account.id).read) throw new NotFound();
      return events.eventsAbout(account.organization_id, { columns: SERVICE_ACCOUNT_COLUMNS, id }, query);
    },
  };
}

export type SmEventService = ReturnType<typeof createSmEventService>;
