import type { Db } from '../../db/database.js';
import type { Principal } from '../../http/access.js';
import { NotFound } from '../../http/errors.js';
import { normalizeGuid } from '../../http/schemas.js';
import type { EventsAbout } from '../events/events.repository.js';
import { toEventList, type EventQueryInput, type EventQueryService } from '../events/events.service.js';
import { confirmedMembership, type Membership } from '../../platform/access/org-access.js';
import { findProject } from './projects.repository.js';
import { findSecret, trashedSecretIds } from './secrets.repository.js';
import { findServiceAccount } from './service-accounts.repository.js';
import { memberStanding, secretRights, serviceAccountRights, smAccessIn, smAccessOf, type SmCaller } from './sm-access.js';

type PageQuery = Omit<EventQueryInput, 'actingUserId' | 'itemId'>;

/** The resources of the event-log routes: how to find one, and the event columns naming it. */
const ITEMS = {
  project: { find: findProject, columns: ['project_id'] },
  // A machine account's events: those it performed and those about it.
  serviceAccount: { find: findServiceAccount, columns: ['service_account_id', 'granted_service_account_id'] },
} as const satisfies Record<string, { find: (db: Db, id: string) => Promise<{ organization_id: string } | undefined>; columns: EventsAbout['columns'] }>;

type EventItem = keyof typeof ITEMS;

/**
 * The per-secret, per-project and per-machine-account event routes. The three under
 * `/organization/{orgId}/…` are the event log's (a member who may read it), as the official
 * server decides them; the secret's also needs read access to the secret.
 */
export function createSmEventService({ db, events }: { db: Db; events: EventQueryService }) {
  /** The membership of a member of `organizationId` who may read its event log, or 404. */
  async function requireEventReader(principal: Principal, organizationId: string): Promise<Membership> {
    if (principal.kind !== 'user') throw new NotFound();
    const membership = await confirmedMembership(db, organizationId, principal.userId);
    if (!membership?.rights.has('accessEventLogs')) throw new NotFound();
    return membership;
  }

  /** The secret, in use or in the trash, or undefined when it is gone for good. */
  async function secretOf(organizationId: string, id: string): Promise<{ id: string; organization_id: string; project_id: string | null } | undefined> {
    const secret = await findSecret(db, id);
    if (secret) return secret;
    const [trashed] = await trashedSecretIds(db, organizationId, [id]);
    return trashed && { ...trashed, organization_id: organizationId };
  }

  return {
    async secretEvents({ principal }: SmCaller, rawOrgId: string, rawId: string, query: PageQuery): Promise<ReturnType<typeof toEventList>> {
      const organizationId = normalizeGuid(rawOrgId);
      const id = normalizeGuid(rawId);
      const standing = await memberStanding(db, await requireEventReader(principal, organizationId));
      if (!standing) throw new NotFound();
      const secret = await secretOf(organizationId, id);
      if (secret) {
        if (secret.organization_id !== organizationId) throw new NotFound();
        if (!secretRights(await smAccessOf(db, standing), secret).read) throw new NotFound();
      } else if (standing.kind !== 'admin') {
        // A permanently deleted secret's events: only those who saw every secret may read them.
        throw new NotFound();
      }
      return toEventList(await events.organizationEvents(organizationId, query, { columns: ['secret_id'], id }));
    },

    /** The events about a project or a machine account, for the event log's readers. */
    async itemEvents({ principal }: SmCaller, item: EventItem, rawOrgId: string, rawId: string, query: PageQuery): Promise<ReturnType<typeof toEventList>> {
      const organizationId = normalizeGuid(rawOrgId);
      const id = normalizeGuid(rawId);
      await requireEventReader(principal, organizationId);
      // 404 for a row of another organization; a missing row may have been deleted, its events remain.
      const row = await ITEMS[item].find(db, id);
      if (row && row.organization_id !== organizationId) throw new NotFound();
      return toEventList(await events.organizationEvents(organizationId, query, { columns: ITEMS[item].columns, id }));
    },

    /** The machine-account page's own event route: whoever can read the machine account. */
    async machineAccountEvents({ principal }: SmCaller, rawId: string, query: PageQuery): Promise<ReturnType<typeof toEventList>> {
      const id = normalizeGuid(rawId);
      const account = await findServiceAccount(db, id);
      if (!account) throw new NotFound();
      const access = await smAccessIn(db, principal, account.organization_id);
      if (!serviceAccountRights(access, account.id).read) throw new NotFound();
      return toEventList(await events.organizationEvents(account.organization_id, query, { columns: ITEMS.serviceAccount.columns, id }));
    },
  };
}

export type SmEventService = ReturnType<typeof createSmEventService>;
