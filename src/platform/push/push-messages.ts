import type { Executor } from '../../db/database.js';
import { usersReachingCollections } from '../access/grants.js';
import { PushType, type Push, type Pushes } from './pushes.js';

/**
 * What pushes what: every push a change sends, built here and nowhere else (the facts are in
 * ../shared/reference/notifications.md §3–4, checked against the official server). Features
 * call `pushes.send(...)` with these once their transaction has committed. `contextId` is the
 * acting device's identifier (`clientContext(request).deviceIdentifier`) where the official
 * server excludes the current context, so that device skips its own change; null elsewhere.
 *
 * | change (where)                                                         | push                        | ContextId | to                               |
 * |------------------------------------------------------------------------|-----------------------------|-----------|----------------------------------|
 * | create an item (ciphers.service, org-ciphers.service)                  | SyncCipherCreate            | device    | owner; org item: each user who sees it |
 * | edit an item; share it; change its collections; trash or restore one   | SyncCipherUpdate            | device    | same                             |
 * | delete one item for good (cipher-lifecycle)                            | SyncLoginDelete             | device    | same                             |
 * | bulk trash / restore / delete / move (cipher-lifecycle)                | SyncCiphers                 | null      | acting user                      |
 * | archive / unarchive, one or many (cipher-lifecycle)                    | SyncCiphers                 | device    | acting user                      |
 * | import (cipher-import)                                                 | SyncVault                   | null      | importing user                   |
 * | folder create / rename / delete (folders.service)                      | SyncFolderCreate/Update/Delete | device | owner                            |
 * | avatar colour, equivalent domains (profile.service, domains.service)   | SyncSettings                | null      | user                             |
 * | change master password (profile.service)                               | LogOut                      | device    | user (the device that changed it stays) |
 * | log out everywhere (security stamp), delete the account                | LogOut                      | null      | user                             |
 * | confirm, revoke, restore, remove a member; leave; create an org        | SyncOrgKeys                 | null      | the member's user                |
 * | save a policy (policies.service)                                       | PolicyChanged               | null      | organization                     |
 * | log-in request created (auth-requests.service)                         | AuthRequest                 | requesting device | user                     |
 * | log-in request approved (auth-requests.service; not when denied)       | AuthRequestResponse         | approving device  | the request's anonymous group |
 *
 * Bulk collection assignment sends nothing, as the official server sends nothing for it.
 */

/** The fields of an item a push needs. */
export interface PushedCipher {
  id: string;
  user_id: string | null;
  organization_id: string | null;
  revision_date: string;
}

export type CipherPushType = PushType.SyncCipherCreate | PushType.SyncCipherUpdate | PushType.SyncLoginDelete;

/**
 * The pushes for one item: to its owner for a personal item; for an organization item one push
 * per user who sees it through `collectionIds` (the item's collections; read when not given or
 * empty),
 * each naming that user, as the official fan-out does. An organization item in no collection
 * pushes nothing, as officially.
 */
export async function cipherPushes(
  executor: Executor,
  type: CipherPushType,
  cipher: PushedCipher,
  contextId: string | null,
  collectionIds?: readonly string[],
): Promise<Push[]> {
  const base = { Id: cipher.id, OrganizationId: cipher.organization_id, RevisionDate: new Date(cipher.revision_date) };
  if (!cipher.organization_id) {
    if (!cipher.user_id) return [];
    return [{ type, payload: { ...base, UserId: cipher.user_id, CollectionIds: [...(collectionIds ?? [])] }, contextId, target: { user: cipher.user_id } }];
  }
  const collections = collectionIds && collectionIds.length > 0 ? [...new Set(collectionIds)] : await collectionIdsOf(executor, cipher.id);
  if (collections.length === 0) return [];
  const users = await usersReachingCollections(executor, cipher.organization_id, collections);
  return users.map((userId) => ({ type, payload: { ...base, UserId: userId, CollectionIds: collections }, contextId, target: { user: userId } }));
}

/** The collections holding an item; read before a delete, whose cascade removes them. */
export async function collectionIdsOf(executor: Executor, cipherId: string): Promise<string[]> {
  const rows = await executor.selectFrom('collection_ciphers').select('collection_id').where('cipher_id', '=', cipherId).orderBy('collection_id').execute();
  return rows.map((r) => r.collection_id);
}

/**
 * Sends pushes whose audience needs a read after the commit (organization items). A failed
 * read drops the pushes, as an undeliverable push is dropped: the change is committed and
 * the apps catch up at their next sync, so the caller still gets its answer.
 */
export async function sendBuilt(pushes: Pushes, build: () => Promise<Push[]>): Promise<void> {
  let built: Push[];
  try {
    built = await build();
  } catch {
    return;
  }
  pushes.send(built);
}

export type FolderPushType = PushType.SyncFolderCreate | PushType.SyncFolderUpdate | PushType.SyncFolderDelete;

export function folderPush(type: FolderPushType, folder: { id: string; user_id: string; revision_date: string }, contextId: string | null): Push {
  return {
    type,
    payload: { Id: folder.id, UserId: folder.user_id, RevisionDate: new Date(folder.revision_date) },
    contextId,
    target: { user: folder.user_id },
  };
}

export type UserPushType = PushType.SyncCiphers | PushType.SyncVault | PushType.SyncOrgKeys | PushType.SyncSettings;

/** "Sync again" pushes that name only the user and when: SyncCiphers, SyncVault, SyncOrgKeys, SyncSettings. */
export function userPush(type: UserPushType, userId: string, date: Date, contextId: string | null = null): Push {
  return { type, payload: { UserId: userId, Date: date }, contextId, target: { user: userId } };
}

/** The official LogOut reasons (clients with NoLogoutOnKdfChange skip KdfChange). */
export enum LogOutReason {
  KdfChange = 0,
  KeyRotation = 1,
}

export function logOutPush(userId: string, contextId: string | null = null, reason: LogOutReason | null = null): Push {
  return { type: PushType.LogOut, payload: { UserId: userId, Reason: reason }, contextId, target: { user: userId } };
}

/** A saved policy, as the official Policy entity, to every member connection of its organization. */
export function policyPush(policy: {
  id: string;
  organization_id: string;
  type: number;
  data: string | null;
  enabled: boolean | number;
  creation_date: string;
  revision_date: string;
}): Push {
  return {
    type: PushType.PolicyChanged,
    payload: {
      OrganizationId: policy.organization_id,
      Policy: {
        Id: policy.id,
        OrganizationId: policy.organization_id,
        Type: policy.type,
        Data: policy.data,
        Enabled: Boolean(policy.enabled),
        CreationDate: new Date(policy.creation_date),
        RevisionDate: new Date(policy.revision_date),
      },
    },
    contextId: null,
    target: { organization: policy.organization_id },
  };
}

/** A new log-in request, to the user's devices (the one that asked skips it by its ContextId). */
export function authRequestPush(request: { id: string; user_id: string }, contextId: string | null): Push {
  return { type: PushType.AuthRequest, payload: { Id: request.id, UserId: request.user_id }, contextId, target: { user: request.user_id } };
}

/** An approved log-in request, to the anonymous hub connection waiting for it. */
export function authRequestResponsePush(request: { id: string; user_id: string }, contextId: string | null): Push {
  return { type: PushType.AuthRequestResponse, payload: { Id: request.id, UserId: request.user_id }, contextId, target: { authRequest: request.id } };
}
