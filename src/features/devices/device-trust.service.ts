import type { Db } from '../../db/database.js';
import { BadRequest, NotFound } from '../../http/errors.js';
import type { UserCaller } from '../../http/request-context.js';
import type { PasswordHasher } from '../../platform/auth/password-hasher.js';
import { verifySecret } from '../../platform/auth/secret-verification.js';
import { findDevice, type DeviceRow } from '../../platform/auth/users.repository.js';
import type { Clock } from '../../shared/clock.js';
import { deleteRefreshTokensOfDevice, findDeviceById, lockDevicesOfUser, updateDeviceOfUser } from './device-trust.repository.js';
import { isTrusted, NO_DEVICE_KEYS, toProtectedDeviceResponse, type DeviceKeysBody, type OtherDeviceKeysUpdate, type UpdateDevicesTrustBody } from './device-trust.schemas.js';
import { toDeviceResponse } from './devices.schemas.js';
import { noPushRegistrations, type PushRegistrations } from '../../platform/push/push-registrations.js';
import { forgetWebPushSubscription } from '../web-push/web-push.service.js';

/**
 * Checks a list of re-wrapped device keys: each id once. The re-wrap of the device asking is its
 * own field, so naming it among the others is refused as the official server does.
 */
export function checkOtherDevices(others: readonly OtherDeviceKeysUpdate[], field: string, currentId?: string): Map<string, OtherDeviceKeysUpdate> {
  const byId = new Map<string, OtherDeviceKeysUpdate>();
  others.forEach((other, i) => {
    const id = other.deviceId.toLowerCase();
    if (byId.has(id)) throw BadRequest.field(`${field}[${i}].deviceId`, 'This device is sent more than once.');
    if (id === currentId) throw BadRequest.field(`${field}[${i}].deviceId`, 'Current device can not be an optional rotation.');
    byId.set(id, other);
  });
  return byId;
}

/**
 * Trusted device encryption (docs/trusted-devices.md): a device that holds the user key keeps it
 * wrapped with a key pair of its own, whose private key is wrapped with a device key that never
 * leaves it. The server stores the three wrapped keys and hands two of them back at login; it can
 * open none of them.
 */
/** `registrations`: a removed device that held a push token is forgotten by the mobile relay. */
export function createDeviceTrust(deps: { db: Db; hasher: PasswordHasher; clock: Clock; registrations?: PushRegistrations }) {
  const { db, hasher, clock } = deps;
  const registrations = deps.registrations ?? noPushRegistrations;

  /**
   * The account's device, only while it is in the account's list: a removed device whose access
   * token still runs must not trust itself again, hidden from the list and from key rotation.
   */
  async function deviceByIdentifier(userId: string, identifier: string): Promise<DeviceRow> {
    const device = await findDevice(db, userId, identifier);
    if (!device?.active) throw new NotFound();
    return device;
  }

  return {
    /** `PUT /devices/{identifier}/keys`: the device becomes trusted. */
    async setKeys({ userId }: UserCaller, identifier: string, body: DeviceKeysBody) {
      const device = await deviceByIdentifier(userId, identifier);
      const changes = {
        encrypted_user_key: body.encryptedUserKey,
        encrypted_public_key: body.encryptedPublicKey,
        encrypted_private_key: body.encryptedPrivateKey,
        revision_date: clock.now().toISOString(),
      };
      await updateDeviceOfUser(db, userId, device.id, changes);
      return toDeviceResponse({ ...device, ...changes });
    },

    /** `POST /devices/{identifier}/retrieve-keys` (obsolete officially: the device answers carry the keys). */
    async retrieveKeys({ userId }: UserCaller, identifier: string) {
      return toProtectedDeviceResponse(await deviceByIdentifier(userId, identifier));
    },

    /**
     * `POST /devices/update-trust`: after a new user key, the asking device's keys re-wrapped, and
     * those of the other trusted devices the client could re-wrap; a trusted device left out is
     * untrusted, as officially. Ids that name no trusted device of the account are ignored.
     */
    async updateTrust({ userId, client }: UserCaller, body: UpdateDevicesTrustBody): Promise<void> {
      const identifier = client.deviceIdentifier;
      if (!identifier) throw new NotFound();
      const current = await deviceByIdentifier(userId, identifier);
      const others = checkOtherDevices(body.otherDevices ?? [], 'otherDevices', current.id);
      // Checked after the lookups and the list: the check spends a mailed code, which a request
      // refused for its device or its list would otherwise burn.
      await verifySecret(db, hasher, clock, userId, body, () => new BadRequest('User verification failed.'));
      const now = clock.now().toISOString();
      await db.transaction().execute(async (tx) => {
        const devices = await lockDevicesOfUser(tx, userId);
        await updateDeviceOfUser(tx, userId, current.id, {
          encrypted_public_key: body.currentDevice.encryptedPublicKey,
          encrypted_user_key: body.currentDevice.encryptedUserKey,
          revision_date: now,
        });
        for (const device of devices) {
          if (device.id === current.id || !isTrusted(device)) continue;
          // A removed device is never re-wrapped: its keys (from before removals cleared them) go.
          const update = device.active ? others.get(device.id) : undefined;
          await updateDeviceOfUser(
            tx,
            userId,
            device.id,
            update ? { encrypted_public_key: update.encryptedPublicKey, encrypted_user_key: update.encryptedUserKey, revision_date: now } : { ...NO_DEVICE_KEYS, revision_date: now },
          );
        }
      });
    },

    /** `POST /devices/untrust`: the devices lose their keys; every id must be one of the account's devices. */
    async untrust({ userId }: UserCaller, ids: readonly string[]): Promise<void> {
      const wanted = new Set(ids.map((id) => id.toLowerCase()));
      const now = clock.now().toISOString();
      await db.transaction().execute(async (tx) => {
        const mine = new Set((await lockDevicesOfUser(tx, userId)).map((d) => d.id));
        for (const id of wanted) if (!mine.has(id)) throw new NotFound();
        for (const id of wanted) await updateDeviceOfUser(tx, userId, id, { ...NO_DEVICE_KEYS, revision_date: now });
      });
    },

    /**
     * `POST /devices/lost-trust`: a client that holds a device key but got no keys at login says
     * so; as officially, it is only logged, for the operator to see.
     */
    lostTrust({ userId, client, log }: UserCaller): void {
      if (!client.deviceIdentifier) throw new BadRequest('Please provide a device identifier');
      if (client.deviceType === null) throw new BadRequest('Please provide a device type');
      log.warn({ userId, deviceIdentifier: client.deviceIdentifier, deviceType: client.deviceType }, 'a device with a device key received no decryption keys at login');
    },

    /**
     * `POST /devices/{id}/deactivate` and `DELETE /devices/{id}`: the device leaves the account's
     * list and loses its keys, push token and Web Push subscription, as officially (the relay
     * forgets it); its sessions also end (its refresh tokens are deleted), which the official
     * server leaves to expire.
     */
    async deactivate({ userId }: UserCaller, id: string): Promise<void> {
      const device = await findDeviceById(db, userId, id.toLowerCase());
      if (!device) throw new NotFound();
      if (!device.active) return;
      await db.transaction().execute(async (tx) => {
        await updateDeviceOfUser(tx, userId, device.id, { ...NO_DEVICE_KEYS, active: false, push_token: null, revision_date: clock.now().toISOString() });
        await deleteRefreshTokensOfDevice(tx, device.id);
        await forgetWebPushSubscription(tx, device.id);
      });
      // As the official DeviceService.DeactivateAsync: push/delete after the change.
      if (device.push_token) registrations.deviceTokenCleared(device.id);
    },
  };
}

export type DeviceTrust = ReturnType<typeof createDeviceTrust>;
