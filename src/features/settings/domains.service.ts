import type { Clock } from '../../shared/clock.js';
import type { Db } from '../../db/database.js';
import { updateUser, type UserRow } from '../../platform/auth/users.repository.js';
import { userPush } from '../../platform/push/push-messages.js';
import { PushType, type Pushes } from '../../platform/push/pushes.js';
import type { UserCaller } from '../../http/request-context.js';
import { toDomainsResponse, type UpdateDomainsBody } from './domains.schemas.js';

/** The user's equivalent domains (Settings > Domain rules), which autofill treats as one site. */
export function createDomainSettings(deps: { db: Db; clock: Clock; getUser: (userId: string) => Promise<UserRow>; pushes: Pushes }) {
  const { db, clock, getUser: userOrThrow } = deps;
  return {
    get: async ({ userId }: UserCaller) => toDomainsResponse(await userOrThrow(userId)),

    async update({ userId }: UserCaller, body: UpdateDomainsBody) {
      // Blank entries and groups of fewer than two domains match nothing; they are not kept.
      const groups = (body.equivalentDomains ?? [])
        .map((group) => [...new Set(group.map((d) => d.trim().toLowerCase()).filter(Boolean))])
        .filter((group) => group.length > 1);
      const excluded = [...new Set(body.excludedGlobalEquivalentDomains ?? [])];
      const now = clock.now().toISOString();
      await updateUser(db, userId, {
        equivalent_domains: groups.length > 0 ? JSON.stringify(groups) : null,
        excluded_global_equivalent_domains: excluded.length > 0 ? JSON.stringify(excluded) : null,
        revision_date: now,
        account_revision_date: now,
      });
      // The user's other apps sync their settings now.
      deps.pushes.send(userPush(PushType.SyncSettings, userId, new Date(now)));
      return toDomainsResponse(await userOrThrow(userId));
    },
  };
}

export type DomainSettings = ReturnType<typeof createDomainSettings>;
