import type { Db } from '../../db/database.js';
import { NotFound } from '../../http/errors.js';
import type { UserCaller } from '../../http/request-context.js';
import { findDevice } from '../../platform/auth/users.repository.js';
import type { PushRegistrations } from '../../platform/push/push-registrations.js';
import { usablePushToken } from '../../platform/push/push-token.js';
import type { Clock } from '../../shared/clock.js';
import { forgetWebPushSubscription } from '../web-push/web-push.service.js';

/**
 * A mobile device's push token, as the official DevicesController keeps it
 * (bitwarden/server src/Api/Controllers/DevicesController.cs, src/Core/Services/Implementations/DeviceService.cs):
 * stored on the device row, then the relay registration queued after commit. The token is a
 * secret of the device: never logged, never answered back, never in the outbox.
 */
export function createDeviceTokens(deps: { db: Db; clock: Clock; registrations: PushRegistrations }) {
  const { db, clock, registrations } = deps;
  return {
    /**
     * `PUT|POST /devices/identifier/{identifier}/token`: one of the caller's devices (404 otherwise,
     * also for a removed one). An empty token clears it, which the relay then forgets.
     */
    async setToken({ userId }: UserCaller, identifier: string, pushToken: string | null | undefined): Promise<void> {
      const token = usablePushToken(pushToken);
      const device = await findDevice(db, userId, identifier);
      if (!device?.active) throw new NotFound();
      await db.updateTable('devices').set({ push_token: token, revision_date: clock.now().toISOString() }).where('id', '=', device.id).execute();
      // The official server registers again on every call, which also mends a registration the relay lost.
      if (token) registrations.deviceTokenSet(device.id, userId);
      else if (device.push_token) registrations.deviceTokenCleared(device.id);
    },

    /**
     * `PUT|POST /devices/identifier/{identifier}/clear-token`: anonymous, as officially, since an app
     * logging out may no longer hold a session. Every account's device with that identifier loses
     * the token (and a browser its Web Push subscription), as the token belongs to the app on the
     * device; 404 when no device has it.
     */
    async clearToken(identifier: string): Promise<void> {
      const devices = await db.selectFrom('devices').select(['id', 'push_token']).where('identifier', '=', identifier).execute();
      if (devices.length === 0) throw new NotFound();
      const holding = devices.filter((d) => d.push_token !== null).map((d) => d.id);
      // As the official ClearTokenAsync, which deletes the device's registration whatever its
      // kind: a browser's Web Push subscription goes too.
      await db.transaction().execute(async (tx) => {
        if (holding.length > 0) await tx.updateTable('devices').set({ push_token: null }).where('id', 'in', holding).execute();
        for (const device of devices) await forgetWebPushSubscription(tx, device.id);
      });
      for (const id of holding) registrations.deviceTokenCleared(id);
    },
  };
}

export type DeviceTokens = ReturnType<typeof createDeviceTokens>;
