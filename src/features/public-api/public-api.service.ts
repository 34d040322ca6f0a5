import type { PushRegistrations } from '../../platform/push/push-registrations.js';
import type { Clock } from '../../shared/clock.js';
import type { Config } from '../../config/config.js';
import type { Db } from '../../db/database.js';
import { BadRequest, NotFound } from '../../http/errors.js';
import type { Caller } from '../../http/request-context.js';
import type { AuditLog } from '../../platform/audit/audit-log.js';
import type { CollectionService } from '../collections/collections.service.js';
import { EventSystemUser } from '../../platform/audit/event-type.js';
import type { EventQueryInput, EventQueryService } from '../events/events.service.js';
import type { GroupService } from '../groups/groups.service.js';
import type { MemberService } from '../members/members.service.js';
import { toCollectionAccess, toMemberUserDetails } from '../members/members.schemas.js';
import { collectionsOfMembers, findMember, listMembersWithUsers } from '../members/members.repository.js';
import { organizationActor, type MemberCaller } from '../../platform/access/org-access.js';
import type { OrganizationService } from '../organizations/organizations.service.js';
import { OrganizationUserType, parsePermissions } from '../../platform/access/roles.js';
import type { PolicyService } from '../policies/policies.service.js';
import type { PolicyType } from '../policies/policy-type.js';
import { createDirectoryImport } from './directory-import.js';
import { findPublicCollection, organizationOf } from './public-api.repository.js';
import type { Static } from 'typebox';
import {
  type Association,
  toPublicCollection,
  toPublicEvent,
  toPublicGroup,
  toPublicMember,
  toPublicPolicy,
  type CollectionBody,
  type GroupBody,
  type MemberCreateBody,
  type MemberResponse,
  type MemberUpdateBody,
  type PolicyBody,
} from './public-api.schemas.js';
import { renamingField } from './field-names.js';
import { createSubscriptions } from './subscription.js';
import { CollectionType } from '../collections/collection-type.js';

export interface PublicApiDeps {
  db: Db;
  clock: Clock;
  audit: AuditLog;
  config: Pick<Config, 'selfHosted'>;
  members: MemberService;
  groups: GroupService;
  collections: CollectionService;
  policies: PolicyService;
  events: EventQueryService;
  organizations: OrganizationService;
  /** Members a directory import removes leave the organization's pushes at the mobile relay. */
  registrations?: PushRegistrations;
}

/** The calling organization (from its API key token) and the request it made. */
export type PublicCaller = Caller<{ organizationId: string }>;

const CUSTOM_ONLY = 'Only users with the Custom role may use custom permissions.';

/** Association lists as the feature services take them: flags left out are false. */
function associations(list: readonly Static<typeof Association>[] | null | undefined) {
  return (list ?? []).map((c) => ({ id: c.id, readOnly: c.readOnly, hidePasswords: c.hidePasswords ?? false, manage: c.manage ?? false }));
}

/**
 * The organization public API (`/public/...`): each operation acts as the organization itself
 * (`organizationActor`, system user PublicApi) through the member, group, collection, policy and
 * event services, so their rules, transactions and audit events are the web routes' own.
 */
export function createPublicApiService(deps: PublicApiDeps) {
  const { db, members, groups, collections, policies, events } = deps;
  const importer = createDirectoryImport({ db, clock: deps.clock, audit: deps.audit, members, registrations: deps.registrations });
  const subscriptions = createSubscriptions({ db, clock: deps.clock, audit: deps.audit, organizations: deps.organizations });

  /**
   * The organization acting through its API key, as the caller of the member, group, collection
   * and policy use cases; the principal resolver already checked it is enabled and may use the API.
   */
  async function memberActor({ organizationId, client, log }: PublicCaller): Promise<MemberCaller> {
    const org = await organizationOf(db, organizationId);
    if (!org) throw new NotFound();
    return { membership: organizationActor(organizationId, EventSystemUser.PublicApi, Boolean(org.use_secrets_manager)), client, log };
  }

  async function readMember(organizationId: string, id: string): Promise<MemberResponse> {
    const [row] = await listMembersWithUsers(db, organizationId, [id]);
    if (!row) throw new NotFound();
    const collectionRows = await collectionsOfMembers(db, [id]);
    return toPublicMember(toMemberUserDetails(row, collectionRows.map(toCollectionAccess), []));
  }

  function assignment(body: MemberUpdateBody) {
    if (body.type !== (OrganizationUserType.Custom as number) && body.permissions) throw BadRequest.field('permissions', CUSTOM_ONLY);
    return {
      type: body.type,
      collections: associations(body.collections),
      permissions: body.permissions ?? null,
    };
  }

  async function visibleCollection(organizationId: string, id: string) {
    const row = await findPublicCollection(db, organizationId, id);
    if (!row) throw new NotFound();
    return row;
  }

  return {
    // -- members ------------------------------------------------------------------------
    async listMembers(caller: PublicCaller): Promise<MemberResponse[]> {
      return (await members.list(await memberActor(caller), caller.organizationId, { includeGroups: false, includeCollections: true })).map(toPublicMember);
    },

    getMember: (caller: PublicCaller, id: string) => readMember(caller.organizationId, id),

    /** Invites one address; 400 when it is already in the organization, as the official public API says. */
    async inviteMember(caller: PublicCaller, body: MemberCreateBody): Promise<MemberResponse> {
      const actor = await memberActor(caller);
      const input = assignment(body);
      const ids = await members.invite(actor, caller.organizationId, {
        emails: [body.email],
        ...input,
        ...(body.groups ? { groups: body.groups } : {}),
        externalId: body.externalId ?? null,
      });
      const [id] = ids;
      if (!id) throw new BadRequest('This user has already been invited.');
      return readMember(caller.organizationId, id);
    },

    /**
     * Replaces the member's role, custom permissions, external id and collection access: what the
     * body leaves out is reset, as on the official server; groups left out stay as they are (they
     * have their own route), and a Custom member sent without permissions keeps theirs.
     */
    async updateMember(caller: PublicCaller, id: string, body: MemberUpdateBody): Promise<MemberResponse> {
      const actor = await memberActor(caller);
      const existing = await findMember(db, caller.organizationId, id);
      if (!existing) throw new NotFound();
      const input = assignment(body);
      const keep = body.type === (OrganizationUserType.Custom as number) && !body.permissions ? parsePermissions(existing.permissions) : null;
      await members.update(actor, caller.organizationId, id, {
        ...input,
        permissions: keep ?? input.permissions,
        ...(body.groups ? { groups: body.groups } : {}),
        externalId: body.externalId ?? null,
      });
      return readMember(caller.organizationId, id);
    },

    async memberGroupIds(caller: PublicCaller, id: string): Promise<string[]> {
      return members.groupIds(await memberActor(caller), caller.organizationId, id);
    },

    async setMemberGroupIds(caller: PublicCaller, id: string, groupIds: readonly string[]): Promise<void> {
      await members.updateGroups(await memberActor(caller), caller.organizationId, id, groupIds);
    },

    async removeMember(caller: PublicCaller, id: string): Promise<void> {
      await members.remove(await memberActor(caller), caller.organizationId, id);
    },

    async reinviteMember(caller: PublicCaller, id: string): Promise<void> {
      await members.reinvite(await memberActor(caller), caller.organizationId, id);
    },

    async revokeMember(caller: PublicCaller, id: string): Promise<void> {
      await members.revoke(await memberActor(caller), caller.organizationId, id);
    },

    async restoreMember(caller: PublicCaller, id: string): Promise<void> {
      await members.restore(await memberActor(caller), caller.organizationId, id);
    },

    // -- groups -------------------------------------------------------------------------
    async listGroups(caller: PublicCaller) {
      return (await groups.listDetails(await memberActor(caller))).map(toPublicGroup);
    },

    async getGroup(caller: PublicCaller, id: string) {
      return toPublicGroup(await groups.getDetails(await memberActor(caller), id));
    },

    async createGroup(caller: PublicCaller, body: GroupBody) {
      const actor = await memberActor(caller);
      const created = await groups.create(actor, { name: body.name, externalId: body.externalId ?? null, collections: associations(body.collections), users: [] });
      return toPublicGroup(await groups.getDetails(actor, created.id));
    },

    /** Replaces name, external id and collection access (left out: cleared and emptied); members stay. */
    async updateGroup(caller: PublicCaller, id: string, body: GroupBody) {
      const actor = await memberActor(caller);
      await groups.update(actor, id, { name: body.name, externalId: body.externalId ?? null, collections: associations(body.collections), users: null });
      return toPublicGroup(await groups.getDetails(actor, id));
    },

    async deleteGroup(caller: PublicCaller, id: string): Promise<void> {
      await groups.delete(await memberActor(caller), [id]);
    },

    async groupMemberIds(caller: PublicCaller, id: string): Promise<string[]> {
      return groups.members(await memberActor(caller), id);
    },

    async setGroupMemberIds(caller: PublicCaller, id: string, memberIds: readonly string[]): Promise<void> {
      const actor = await memberActor(caller);
      await renamingField('users', 'memberIds', () => groups.replaceMembers(actor, id, memberIds));
    },

    // -- collections --------------------------------------------------------------------
    async listCollections(caller: PublicCaller) {
      const all = await collections.listForOrganization(await memberActor(caller), true);
      return all.filter((c) => c.type !== CollectionType.DefaultUserCollection).map(toPublicCollection);
    },

    async getCollection(caller: PublicCaller, id: string) {
      await visibleCollection(caller.organizationId, id);
      return toPublicCollection(await collections.getDetails(await memberActor(caller), id));
    },

    /** Sets the external id (left out: cleared) and, when given, the groups' access; names stay (they are encrypted). */
    async updateCollection(caller: PublicCaller, id: string, body: CollectionBody) {
      const row = await visibleCollection(caller.organizationId, id);
      const updated = await collections.update(await memberActor(caller), id, {
        name: row.name,
        externalId: body.externalId ?? null,
        ...(body.groups ? { groups: associations(body.groups) } : {}),
      });
      return toPublicCollection(updated);
    },

    async deleteCollection(caller: PublicCaller, id: string): Promise<void> {
      const row = await findPublicCollection(db, caller.organizationId, id, { includeDefault: true });
      if (!row) throw new NotFound();
      if (row.type === CollectionType.DefaultUserCollection) throw new BadRequest('You cannot delete a collection with the type as DefaultUserCollection.');
      await collections.delete(await memberActor(caller), [id]);
    },

    // -- policies -----------------------------------------------------------------------
    async listPolicies(caller: PublicCaller) {
      const saved = await policies.list(await memberActor(caller));
      return saved.flatMap((p) => (p.id ? [toPublicPolicy({ ...p, id: p.id })] : []));
    },

    /** A policy the organization never saved is a 404, as on the official public API. */
    async getPolicy(caller: PublicCaller, type: PolicyType) {
      const policy = await policies.get(await memberActor(caller), type);
      if (!policy.id) throw new NotFound();
      return toPublicPolicy({ ...policy, id: policy.id });
    },

    async savePolicy(caller: PublicCaller, type: PolicyType, body: PolicyBody) {
      const saved = await policies.save(await memberActor(caller), type, { enabled: body.enabled, data: body.data });
      if (!saved.id) throw new Error('a saved policy has an id');
      return toPublicPolicy({ ...saved, id: saved.id });
    },

    // -- events -------------------------------------------------------------------------
    async events(caller: PublicCaller, query: EventQueryInput) {
      const page = await events.organizationEvents(caller.organizationId, query);
      return { data: page.data.map(toPublicEvent), continuationToken: page.continuationToken };
    },

    // -- organization -------------------------------------------------------------------
    async importDirectory(caller: PublicCaller, body: Parameters<typeof importer.run>[1]): Promise<void> {
      await importer.run(await memberActor(caller), body, deps.config);
    },

    /** The same directory import for an owner or admin signed in (the older private route), who is the acting user of its events. */
    async importDirectoryAs(caller: MemberCaller, body: Parameters<typeof importer.run>[1]): Promise<void> {
      await importer.run(caller, body, deps.config, 'users');
    },

    async subscription(caller: PublicCaller) {
      requireCloud(deps.config);
      return subscriptions.read(caller.organizationId);
    },

    async updateSubscription(caller: PublicCaller, body: Parameters<typeof subscriptions.update>[1]) {
      requireCloud(deps.config);
      return subscriptions.update(await memberActor(caller), body);
    },
  };
}


const SELF_HOSTED_SUBSCRIPTION = 'Seats and storage of a self-hosted organization are set by its license; upload a new license to change them.';

function requireCloud(config: Pick<Config, 'selfHosted'>): void {
  if (config.selfHosted) throw new BadRequest(SELF_HOSTED_SUBSCRIPTION);
}

export type PublicApiService = ReturnType<typeof createPublicApiService>;
