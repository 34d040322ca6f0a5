import type { Db } from '../../db/database.js';
import { BadRequest } from '../../http/errors.js';
import { collectionReaches, type CollectionReach } from '../../platform/access/grants.js';
import type { MemberCaller } from '../../platform/access/org-access.js';
import { groupBy } from '../../shared/group-by.js';
import { collectionsOf, groupsOf, itemIdsByCollection, reportedMembers } from './member-access.repository.js';
import { requireReportsPlan } from './reports.service.js';
import { toMemberAccessRow, type MemberAccessRow } from './member-access.schemas.js';

/**
 * How large a member access report may grow: its rows (one per member and way they reach a
 * collection, and one per member who reaches none) and the item ids listed in all (a collection's
 * items once in each of its rows). At these the answer stays under about 65 MB of JSON
 * (docs/web-vault.md, "Reports > Member access").
 */
export const MEMBER_ACCESS_LIMITS = { rows: 50_000, itemIds: 1_000_000 };
export type MemberAccessLimits = typeof MEMBER_ACCESS_LIMITS;

/**
 * The organization member access report (the official ReportsController `member-access`): who
 * reaches which collection, directly or through which group, with what access, and the items in
 * it. Read from the access chain (collectionReaches), so it shows what the server enforces.
 */
export function createMemberAccessReport({ db, limits = MEMBER_ACCESS_LIMITS }: { db: Db; limits?: MemberAccessLimits }) {
  const tooLarge = () =>
    new BadRequest(
      `This organization is too large for the member access report: it would list more than ${limits.rows} accesses or ${limits.itemIds} item ids.`,
    );

  return {
    /**
     * Every member but the revoked, one row per way they reach each collection (directly, or
     * through each group), and one row without a collection for a member who reaches none.
     */
    async report({ membership }: MemberCaller): Promise<MemberAccessRow[]> {
      const organizationId = membership.organizationId;
      // The plan check of the sibling report routes: the member access report is an Enterprise one.
      const org = await requireReportsPlan(db, organizationId);

      const members = await reportedMembers(db, organizationId);
      const collections = await collectionsOf(db, organizationId);
      const reaches = await collectionReaches(db, organizationId, members, collections.map((c) => c.id));
      // Counted before anything proportional to members × collections is built: a row per reach,
      // and one for each member who reaches nothing.
      if (reaches.count + members.filter((m) => !reaches.reached.has(m.id)).length > limits.rows) throw tooLarge();
      const all = reaches.list();
      const items = await itemIdsByCollection(db, organizationId);
      if (all.reduce((n, r) => n + (items.get(r.collectionId)?.length ?? 0), 0) > limits.itemIds) throw tooLarge();

      const groups = await groupsOf(db, organizationId);
      // One id array per collection, shared by every row of it.
      const collectionById = new Map(collections.map((c, rank) => [c.id, { id: c.id, name: c.name, cipherIds: items.get(c.id) ?? [], rank }]));
      const groupById = new Map(groups.map((g, rank) => [g.id, { id: g.id, name: g.name, rank }]));
      // Direct access first, then group by group (by name); collections in creation order.
      const order = (r: CollectionReach) => [r.groupId === null ? -1 : (groupById.get(r.groupId)?.rank ?? 0), collectionById.get(r.collectionId)?.rank ?? 0] as const;
      const byMember = groupBy(all, (r) => r.memberId);
      const useResetPassword = Boolean(org.use_reset_password);

      return members.flatMap((member) => {
        const accountRecoveryEnabled = useResetPassword && (member.resetPasswordKey?.trim() ?? '') !== '';
        const rows = (byMember.get(member.id) ?? [])
          .map((reach) => ({ reach, key: order(reach) }))
          .sort((a, b) => a.key[0] - b.key[0] || a.key[1] - b.key[1])
          .flatMap(({ reach }) => {
            // A collection or group removed while the report was read is left out.
            const collection = collectionById.get(reach.collectionId);
            const group = reach.groupId === null ? null : groupById.get(reach.groupId);
            if (!collection || group === undefined) return [];
            return [toMemberAccessRow(member, accountRecoveryEnabled, { collection, group, grant: reach.grant })];
          });
        return rows.length > 0 ? rows : [toMemberAccessRow(member, accountRecoveryEnabled, { collection: null, group: null, grant: null })];
      });
    },
  };
}

export type MemberAccessReport = ReturnType<typeof createMemberAccessReport>;
