import { randomUUID } from 'node:crypto';
import type { Insertable } from 'kysely';
import type { Clock } from '../../shared/clock.js';
import type { Config } from '../../config/config.js';
import type { PushRegistrations } from '../../platform/push/push-registrations.js';
import type { Db } from '../../db/database.js';
import type { OrganizationUsersTable } from '../../db/schema.js';
import { BadRequest, NotFound } from '../../http/errors.js';
import type { ValidationErrors } from '../../http/errors.js';
import { normalizeEmail } from '../../platform/auth/kdf.js';
import type { AuditEvent, AuditLog } from '../../platform/audit/audit-log.js';
import { EventType } from '../../platform/audit/event-type.js';
import { addGroupMembers, deleteGroups, insertGroup, listGroups, removeGroupMembers, updateGroup, type GroupRow } from '../groups/groups.repository.js';
import { lockOrganization, seatError } from '../members/member-rules.js';
import { insertMembers, listMembersWithUsers, updateMember, type MemberRow } from '../members/members.repository.js';
import type { MemberService } from '../members/members.service.js';
import { actingOf, type MemberCaller } from '../../platform/access/org-access.js';
import { OrganizationUserStatusType, OrganizationUserType } from '../../platform/access/roles.js';
import { deleteMemberships, groupMembersOfOrganization } from './public-api.repository.js';
import type { ImportBody } from './public-api.schemas.js';
import { findOrganization, touchOrganizationMembers } from '../../platform/access/memberships.js';
import { touchAccountRevisions } from '../../platform/auth/users.repository.js';

/** The official limit of one import on the cloud variant, unless the caller says `largeImport`. */
export const IMPORT_LIMIT = 2000;
const TOO_MUCH = 'You cannot import this much data at once.';
/** 14 columns a row: 500 rows stay far below SQLite's and PostgreSQL's bound-parameter limits. */
const ROWS_PER_INSERT = 500;

interface ImportedMember {
  email: string | null;
  externalId: string;
  deleted: boolean;
}

interface ImportedGroup {
  name: string;
  externalId: string;
  memberExternalIds: string[];
}

const externalIdText = (value: string | number) => String(value);

/** What the request calls its member list: `members` (public API) or `users` (the older private route). */
export type MemberListName = 'members' | 'users';

/**
 * The body's lists with external ids as text; a missing email on an enabled member, or an external
 * id listed twice, is a 400 naming the field, under the caller's name for the member list.
 */
function normalize(body: ImportBody, memberList: MemberListName): { members: ImportedMember[]; groups: ImportedGroup[] } {
  const errors: ValidationErrors = {};
  const members = (body.members ?? []).map((m, i) => {
    const email = m.email ? normalizeEmail(m.email) : null;
    if (!m.deleted && !email) (errors[`${memberList}[${i}].email`] ??= []).push(`Email is required for enabled ${memberList}.`);
    return { email, externalId: externalIdText(m.externalId), deleted: m.deleted ?? false };
  });
  const groups = (body.groups ?? []).map((g) => ({ name: g.name, externalId: externalIdText(g.externalId), memberExternalIds: [...new Set((g.memberExternalIds ?? []).map(externalIdText))] }));
  const twice = (ids: string[], field: string) => {
    const seen = new Set<string>();
    ids.forEach((id, i) => {
      if (seen.has(id)) (errors[`${field}[${i}].externalId`] ??= []).push(`The external id ${id} is listed more than once.`);
      seen.add(id);
    });
  };
  twice(members.map((m) => m.externalId), memberList);
  twice(groups.map((g) => g.externalId), 'groups');
  const emails = new Set<string>();
  members.forEach((m, i) => {
    if (!m.email || m.deleted) return;
    if (emails.has(m.email)) (errors[`${memberList}[${i}].email`] ??= []).push(`The email ${m.email} is listed more than once.`);
    emails.add(m.email);
  });
  if (Object.keys(errors).length > 0) throw new BadRequest("The request's model state is invalid.", errors);
  return { members, groups };
}

/**
 * Directory import (`POST /public/organization/import`, what Directory Connector sends): in one
 * transaction holding the organization's lock, members are matched by external id (or, when they
 * have none yet, by email, which links them); new ones are invited and mailed after commit;
 * members marked deleted are removed; groups are created or renamed by external id and their
 * members set from the directory; with `overwriteExisting`, members and groups that carry an
 * external id the directory no longer lists are removed. Owners are never removed, so the last
 * owner never is.
 */
export function createDirectoryImport(deps: { db: Db; clock: Clock; audit: AuditLog; members: MemberService; registrations?: PushRegistrations | undefined }) {
  const { db, clock, audit } = deps;

  return {
    async run(actor: MemberCaller, body: ImportBody, config: Pick<Config, 'selfHosted'>, memberList: MemberListName = 'members'): Promise<void> {
      const organizationId = actor.membership.organizationId;
      const groupsSent = body.groups?.length ?? 0;
      const activeSent = (body.members ?? []).filter((m) => !m.deleted).length;
      if (!config.selfHosted && !body.largeImport && (groupsSent > IMPORT_LIMIT || activeSent > IMPORT_LIMIT)) throw new BadRequest(TOO_MUCH);
      const { members: imported, groups: importedGroups } = normalize(body, memberList);
      const org = await findOrganization(db, organizationId);
      if (!org) throw new NotFound();
      if (importedGroups.length > 0 && !org.use_groups) throw BadRequest.field('groups', 'This organization cannot use groups.');
      const acting = actingOf(actor.membership);
      const now = clock.now().toISOString();

      const { invited, removedUsers } = await db.transaction().execute(async (tx) => {
        await lockOrganization(tx, organizationId);
        const existing = await listMembersWithUsers(tx, organizationId);
        const byExternalId = new Map(existing.filter((m) => m.external_id).map((m) => [m.external_id as string, m]));
        const byEmail = new Map(existing.map((m) => [m.user_email ?? m.email ?? '', m]));
        const events: AuditEvent[] = [];
        const removedUsers: string[] = [];
        const removed = new Set<string>();

        const remove = (member: MemberRow) => {
          if (member.type === OrganizationUserType.Owner || removed.has(member.id)) return;
          removed.add(member.id);
          if (member.user_id) removedUsers.push(member.user_id);
          events.push({ type: EventType.OrganizationUser_Removed, organizationId, organizationUserId: member.id, ...acting });
        };

        // Members the directory marks deleted, then (overwriting) those it no longer lists.
        for (const m of imported.filter((i) => i.deleted)) {
          const member = byExternalId.get(m.externalId);
          if (member) remove(member);
        }
        const listed = new Set(imported.filter((m) => !m.deleted).map((m) => m.externalId));
        if (body.overwriteExisting) {
          for (const member of existing) if (member.external_id && !listed.has(member.external_id)) remove(member);
        }
        await deleteMemberships(tx, [...removed], now);

        // Enabled members: known by external id, linked by email, or invited. Groups name members by
        // external id, whether or not this import lists them (an owner the directory drops stays).
        const memberIdOf = new Map([...byExternalId].filter(([, m]) => !removed.has(m.id)).map(([ext, m]) => [ext, m.id]));
        const fresh: Insertable<OrganizationUsersTable>[] = [];
        for (const m of imported.filter((i) => !i.deleted)) {
          const known = byExternalId.get(m.externalId);
          if (known && !removed.has(known.id)) {
            memberIdOf.set(m.externalId, known.id);
            continue;
          }
          const linked = m.email ? byEmail.get(m.email) : undefined;
          if (linked && !removed.has(linked.id) && !linked.external_id) {
            await updateMember(tx, linked.id, { external_id: m.externalId, revision_date: now });
            linked.external_id = m.externalId;
            memberIdOf.set(m.externalId, linked.id);
            continue;
          }
          // An address already in the organization under another external id stays as it is.
          if (linked && !removed.has(linked.id)) continue;
          const row: Insertable<OrganizationUsersTable> = {
            id: randomUUID(),
            organization_id: organizationId,
            user_id: null,
            email: m.email,
            key: null,
            reset_password_key: null,
            status: OrganizationUserStatusType.Invited,
            type: OrganizationUserType.User,
            access_all: false,
            external_id: m.externalId,
            permissions: null,
            access_secrets_manager: false,
            creation_date: now,
            revision_date: now,
          };
          fresh.push(row);
          memberIdOf.set(m.externalId, row.id);
        }
        const seats = await seatError(tx, org, fresh.length);
        if (seats) throw new BadRequest(seats);
        for (let i = 0; i < fresh.length; i += ROWS_PER_INSERT) await insertMembers(tx, fresh.slice(i, i + ROWS_PER_INSERT));
        events.push(...fresh.map((row) => ({ type: EventType.OrganizationUser_Invited, organizationId, organizationUserId: row.id, ...acting })));

        // Groups by external id, with their members from the directory.
        const groups = await listGroups(tx, organizationId);
        const groupByExternalId = new Map(groups.filter((g) => g.external_id).map((g) => [g.external_id as string, g]));
        const membersOf = new Map<string, Set<string>>();
        for (const row of await groupMembersOfOrganization(tx, organizationId)) {
          if (removed.has(row.organization_user_id)) continue;
          const set = membersOf.get(row.group_id) ?? new Set<string>();
          set.add(row.organization_user_id);
          membersOf.set(row.group_id, set);
        }
        const membershipChanged = new Set<string>();
        for (const g of importedGroups) {
          let group = groupByExternalId.get(g.externalId);
          if (!group) {
            const row: GroupRow = { id: randomUUID(), organization_id: organizationId, name: g.name, access_all: false, external_id: g.externalId, creation_date: now, revision_date: now };
            await insertGroup(tx, row);
            events.push({ type: EventType.Group_Created, organizationId, groupId: row.id, ...acting });
            group = row;
          } else if (group.name !== g.name) {
            await updateGroup(tx, group.id, { name: g.name, access_all: group.access_all, external_id: group.external_id, revision_date: now });
            events.push({ type: EventType.Group_Updated, organizationId, groupId: group.id, ...acting });
          }
          const want = new Set(g.memberExternalIds.flatMap((id) => memberIdOf.get(id) ?? []));
          const have = membersOf.get(group.id) ?? new Set<string>();
          const added = [...want].filter((id) => !have.has(id));
          const dropped = [...have].filter((id) => !want.has(id));
          await addGroupMembers(tx, group.id, added);
          await removeGroupMembers(tx, group.id, dropped);
          for (const id of [...added, ...dropped]) membershipChanged.add(id);
        }
        if (body.overwriteExisting) {
          const keep = new Set(importedGroups.map((g) => g.externalId));
          const stale = groups.filter((g) => g.external_id && !keep.has(g.external_id));
          await deleteGroups(tx, stale.map((g) => g.id));
          events.push(...stale.map((g) => ({ type: EventType.Group_Deleted, organizationId, groupId: g.id, ...acting })));
        }
        events.push(...[...membershipChanged].map((id) => ({ type: EventType.OrganizationUser_UpdatedGroups, organizationId, organizationUserId: id, ...acting })));

        await audit.record(tx, actor.client, events);
        await touchOrganizationMembers(tx, [organizationId], now);
        await touchAccountRevisions(tx, removedUsers, now);
        return { invited: fresh as MemberRow[], removedUsers };
      });
      // The removed members' phones leave the organization's pushes at the relay.
      deps.registrations?.leftOrganization(organizationId, removedUsers);
      // The same invitation mail as the web route's, after commit.
      await deps.members.sendInvitations(org, invited, actor.log);
    },
  };
}
