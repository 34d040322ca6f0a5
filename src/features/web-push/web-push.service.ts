import type { Db, Executor } from '../../db/database.js';
import { NotFound } from '../../http/errors.js';
import type { UserCaller } from '../../http/request-context.js';
import { findDevice } from '../../platform/auth/users.repository.js';
import type { Clock } from '../../shared/clock.js';
import { checkSubscription, type WebPushAuthBody } from './web-push.schemas.js';
import { deleteSubscriptionOfDevice, keepNewestSubscriptions, saveSubscription } from './web-push.repository.js';

/** Browsers subscribed per account: the newest ones keep their subscription (keepNewestSubscriptions). */
export const SUBSCRIPTIONS_PER_USER = 10;

export interface WebPushSubscriptionDeps {
  db: Db;
  clock: Clock;
  /** Accept http and private-address endpoints (a push service on the operator's network; tests). */
  allowPrivateAddresses: boolean;
  /** Told of the user whose device just subscribed (the channel's audience), after the write. */
  subscribed?: (userId: string) => void;
}

/** The extension's Web Push subscriptions, one per device (docs/notifications.md). */
export function createWebPushSubscriptions({ db, clock, allowPrivateAddresses, subscribed }: WebPushSubscriptionDeps) {
  return {
    /**
     * `PUT` (and the older `POST`) `/devices/identifier/{identifier}/web-push-auth`: the caller's
     * own device, by its identifier, gets this subscription in place of the one it had. As
     * officially (DevicesController.PutWebPushAuth), a device the account has not logged in from
     * is 404; a removed one is too, as it receives nothing.
     */
    async register({ userId }: UserCaller, identifier: string, body: WebPushAuthBody): Promise<void> {
      const subscription = checkSubscription(body, allowPrivateAddresses);
      const device = await findDevice(db, userId, identifier);
      if (!device || !device.active) throw new NotFound();
      await db.transaction().execute(async (tx) => {
        await saveSubscription(tx, device.id, subscription, clock.now().toISOString());
        await keepNewestSubscriptions(tx, userId, SUBSCRIPTIONS_PER_USER);
      });
      subscribed?.(userId);
    },
  };
}

export type WebPushSubscriptions = ReturnType<typeof createWebPushSubscriptions>;

/**
 * Forgets a device's subscription: called where the official server deletes the device's push
 * registration (DeviceService.DeactivateAsync and ClearTokenAsync), in the caller's transaction.
 */
export async function forgetWebPushSubscription(tx: Executor, deviceId: string): Promise<void> {
  await deleteSubscriptionOfDevice(tx, deviceId);
}
