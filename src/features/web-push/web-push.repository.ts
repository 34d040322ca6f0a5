import type { Executor } from '../../db/database.js';

/** A subscription as delivery uses it: whose device, and where and how to send. */
export interface SubscriptionRow {
  device_id: string;
  endpoint: string;
  p256dh: string;
  auth: string;
}

/** Stores the device's subscription, replacing the one it had (a browser has one per extension). */
export async function saveSubscription(db: Executor, deviceId: string, subscription: { endpoint: string; p256dh: string; auth: string }, now: string): Promise<void> {
  await db
    .insertInto('web_push_subscriptions')
    .values({ device_id: deviceId, ...subscription, creation_date: now, revision_date: now })
    .onConflict((oc) => oc.column('device_id').doUpdateSet({ ...subscription, revision_date: now }))
    .execute();
}

/** The users with an active device holding a subscription: whom Web Push can reach. */
export async function subscribedUsers(db: Executor): Promise<string[]> {
  const rows = await db.selectFrom('web_push_subscriptions as s').innerJoin('devices as d', 'd.id', 's.device_id').select('d.user_id').distinct().where('d.active', '=', true).execute();
  return rows.map((r) => r.user_id);
}

/**
 * Keeps the user's `keep` most recently registered subscriptions and deletes the others: each
 * login from a new browser is a device, and every subscription is a send for each of the user's
 * changes, so one account cannot make a push cost without bound.
 */
export async function keepNewestSubscriptions(db: Executor, userId: string, keep: number): Promise<void> {
  const rows = await db
    .selectFrom('web_push_subscriptions as s')
    .innerJoin('devices as d', 'd.id', 's.device_id')
    .select('s.device_id')
    .where('d.user_id', '=', userId)
    .orderBy('s.revision_date', 'desc')
    .orderBy('s.device_id')
    .execute();
  const extra = rows.slice(keep).map((r) => r.device_id);
  if (extra.length > 0) await db.deleteFrom('web_push_subscriptions').where('device_id', 'in', extra).execute();
}

/** Removes a device's subscription (deactivation, clear-token). */
export async function deleteSubscriptionOfDevice(db: Executor, deviceId: string): Promise<void> {
  await db.deleteFrom('web_push_subscriptions').where('device_id', '=', deviceId).execute();
}

/**
 * Removes a subscription the push service said is gone (404, 410) — only while it is still the
 * one that was sent to: the extension may have registered a new one in the meantime.
 */
export async function deleteExpiredSubscription(db: Executor, deviceId: string, endpoint: string): Promise<void> {
  await db.deleteFrom('web_push_subscriptions').where('device_id', '=', deviceId).where('endpoint', '=', endpoint).execute();
}

/**
 * The subscriptions of the users' active devices, but the device with identifier `exceptIdentifier`
 * (the push's ContextId: the device that made the change).
 */
export async function subscriptionsOfUsers(db: Executor, userIds: readonly string[], exceptIdentifier: string | null): Promise<SubscriptionRow[]> {
  const found: SubscriptionRow[] = [];
  // An organization's members may be more than a statement takes parameters.
  for (let i = 0; i < userIds.length; i += USERS_PER_QUERY) {
    let query = db
      .selectFrom('web_push_subscriptions as s')
      .innerJoin('devices as d', 'd.id', 's.device_id')
      .select(['s.device_id', 's.endpoint', 's.p256dh', 's.auth'])
      .where('d.user_id', 'in', userIds.slice(i, i + USERS_PER_QUERY))
      .where('d.active', '=', true);
    if (exceptIdentifier !== null) query = query.where('d.identifier', '!=', exceptIdentifier);
    found.push(...(await query.execute()));
  }
  return found;
}

const USERS_PER_QUERY = 1000;

/** The subscriptions of these devices, if they still have them and are active. */
export async function subscriptionsOfDevices(db: Executor, deviceIds: readonly string[]): Promise<SubscriptionRow[]> {
  if (deviceIds.length === 0) return [];
  return db
    .selectFrom('web_push_subscriptions as s')
    .innerJoin('devices as d', 'd.id', 's.device_id')
    .select(['s.device_id', 's.endpoint', 's.p256dh', 's.auth'])
    .where('s.device_id', 'in', deviceIds)
    .where('d.active', '=', true)
    .orderBy('s.device_id')
    .execute();
}
