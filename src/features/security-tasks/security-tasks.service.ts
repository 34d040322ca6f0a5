import { randomUUID } from 'node:crypto';
import type { Selectable } from 'kysely';
import type { Clock } from '../../shared/clock.js';
import { chunks } from '../../db/chunks.js';
import type { Db } from '../../db/database.js';
import type { SecurityTasksTable } from '../../db/schema.js';
import { BadRequest, NotFound } from '../../http/errors.js';
import type { Executor } from '../../db/database.js';
import { noPushes, PushType, type Push, type Pushes } from '../../platform/push/pushes.js';
import { OrganizationUserStatusType } from '../../platform/access/roles.js';
import { can, visibleCiphers } from '../vault/cipher-access.js';
import { confirmedMemberUserIds } from '../../platform/access/memberships.js';
import type { MemberCaller } from '../../platform/access/org-access.js';
import type { UserCaller } from '../../http/request-context.js';

/** The official SecurityTaskType. */
export enum SecurityTaskType {
  UpdateAtRiskCredential = 0,
}

/** The official SecurityTaskStatus. */
export enum SecurityTaskStatus {
  Pending = 0,
  Completed = 1,
}

export type SecurityTask = Selectable<SecurityTasksTable>;

/** The official SecurityTasksResponseModel. */
export function toSecurityTaskResponse(task: SecurityTask) {
  return {
    object: 'securityTask' as const,
    id: task.id,
    organizationId: task.organization_id,
    cipherId: task.cipher_id,
    type: task.type,
    status: task.status,
    creationDate: task.creation_date,
    revisionDate: task.revision_date,
  };
}

/** Most tasks one bulk-create may ask for. */
export const MAX_TASKS_PER_REQUEST = 5000;

/** The organization items among `ids` that `userId` may edit: the members a task is for. */
async function editable(db: Executor, userId: string, ids: readonly string[]): Promise<Set<string>> {
  return new Set((await visibleCiphers(db, userId, ids)).filter((row) => row.organization_id && can(row, 'edit')).map((row) => row.id));
}

/**
 * Security tasks (the official SecurityTask): an administrator asks the members who can edit an
 * organization item to update its at-risk password; those members see the task and mark it done.
 */
export function createSecurityTasks({ db, clock, pushes = noPushes }: { db: Db; clock: Clock; pushes?: Pushes }) {
  /** Confirmed members of the organization who may edit any of `cipherIds`, to tell them. */
  async function membersToTell(organizationId: string, cipherIds: readonly string[]): Promise<string[]> {
    if (cipherIds.length === 0) return [];
    const users: string[] = [];
    for (const userId of await confirmedMemberUserIds(db, organizationId)) {
      if ((await editable(db, userId, cipherIds)).size > 0) users.push(userId);
    }
    return users;
  }

  function refresh(userIds: readonly string[]): Push[] {
    const now = clock.now();
    return userIds.map((userId) => ({ type: PushType.RefreshSecurityTasks, payload: { UserId: userId, Date: now }, contextId: null, target: { user: userId } }));
  }

  return {
    /** The caller's tasks: those of organizations they are a confirmed member of, for items they may edit. */
    async forUser({ userId }: UserCaller, status?: SecurityTaskStatus) {
      let query = db
        .selectFrom('security_tasks as t')
        .innerJoin('organization_users as ou', (join) => join.onRef('ou.organization_id', '=', 't.organization_id').on('ou.user_id', '=', userId))
        .selectAll('t')
        .where('ou.status', '=', OrganizationUserStatusType.Confirmed);
      if (status !== undefined) query = query.where('t.status', '=', status);
      const tasks = await query.orderBy('t.creation_date', 'desc').execute();
      const ids = [...new Set(tasks.map((t) => t.cipher_id).filter((id): id is string => id !== null))];
      const mine = await editable(db, userId, ids);
      return tasks.filter((t) => t.cipher_id !== null && mine.has(t.cipher_id)).map(toSecurityTaskResponse);
    },

    /** Every task of the organization (administrators). */
    async forOrganization({ membership }: MemberCaller, status?: SecurityTaskStatus) {
      const { organizationId } = membership;
      let query = db.selectFrom('security_tasks').selectAll().where('organization_id', '=', organizationId);
      if (status !== undefined) query = query.where('status', '=', status);
      return (await query.orderBy('creation_date', 'desc').execute()).map(toSecurityTaskResponse);
    },

    async metrics({ membership }: MemberCaller): Promise<{ completedTasks: number; totalTasks: number }> {
      const { organizationId } = membership;
      const row = await db
        .selectFrom('security_tasks')
        .select((eb) => [eb.fn.countAll().as('total'), eb.fn.sum(eb.case().when('status', '=', SecurityTaskStatus.Completed).then(1).else(0).end()).as('completed')])
        .where('organization_id', '=', organizationId)
        .executeTakeFirstOrThrow();
      return { completedTasks: Number(row.completed ?? 0), totalTasks: Number(row.total) };
    },

    /**
     * Creates a pending task per item that has none yet, and answers the new tasks with the
     * pending ones already there (as the official bulk-create). Every item must be an item of the
     * organization, else 400 and nothing is created. The members who can edit an item are told
     * to refresh their tasks once the tasks are committed.
     */
    async bulkCreate({ membership }: MemberCaller, requests: readonly { type: SecurityTaskType; cipherId: string }[]) {
      const { organizationId } = membership;
      const cipherIds = [...new Set(requests.map((r) => r.cipherId.toLowerCase()))];
      const created = await db.transaction().execute(async (tx) => {
        const found = new Set<string>();
        for (const part of chunks(cipherIds)) {
          const rows = await tx.selectFrom('ciphers').select('id').where('organization_id', '=', organizationId).where('id', 'in', part).execute();
          for (const row of rows) found.add(row.id);
        }
        const missing = cipherIds.filter((id) => !found.has(id));
        if (missing.length > 0) throw BadRequest.field('tasks', `Not items of this organization: ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ' …' : ''}`);
        const pending: SecurityTask[] = [];
        for (const part of chunks(cipherIds)) {
          pending.push(
            ...(await tx
              .selectFrom('security_tasks')
              .selectAll()
              .where('organization_id', '=', organizationId)
              .where('status', '=', SecurityTaskStatus.Pending)
              .where('cipher_id', 'in', part)
              .execute()),
          );
        }
        const hasTask = new Set(pending.map((t) => t.cipher_id));
        const now = clock.now().toISOString();
        const fresh: SecurityTask[] = cipherIds
          .filter((id) => !hasTask.has(id))
          .map((cipherId) => ({
            id: randomUUID(),
            organization_id: organizationId,
            cipher_id: cipherId,
            type: SecurityTaskType.UpdateAtRiskCredential,
            status: SecurityTaskStatus.Pending,
            creation_date: now,
            revision_date: now,
          }));
        for (const part of chunks(fresh, 200)) await tx.insertInto('security_tasks').values(part).execute();
        return [...pending, ...fresh];
      });
      pushes.send(refresh(await membersToTell(organizationId, cipherIds)));
      return created.map(toSecurityTaskResponse);
    },

    /** Marks a task done: for a member who may edit its item; anyone else, 404 as for no task. */
    async complete({ userId }: UserCaller, taskId: string): Promise<void> {
      const task = await db.selectFrom('security_tasks').selectAll().where('id', '=', taskId.toLowerCase()).executeTakeFirst();
      if (!task?.cipher_id || !(await editable(db, userId, [task.cipher_id])).has(task.cipher_id)) throw new NotFound();
      await db.updateTable('security_tasks').set({ status: SecurityTaskStatus.Completed, revision_date: clock.now().toISOString() }).where('id', '=', task.id).execute();
      pushes.send(refresh([userId]));
    },
  };
}

export type SecurityTasks = ReturnType<typeof createSecurityTasks>;
