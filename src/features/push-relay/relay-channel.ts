import type { Db } from '../../db/database.js';
import type { Clock } from '../../shared/clock.js';
import { systemClock } from '../../shared/clock.js';
import type { PushRegistrations } from '../../platform/push/push-registrations.js';
import { noPushRegistrations } from '../../platform/push/push-registrations.js';
import { PermanentDeliveryError, type Outbox, type OutboxMessage, type PushChannel } from '../push-delivery/channel.js';
import { createAudience, type Audience } from '../push-delivery/audience.js';
import type { OutboxLog } from '../push-delivery/outbox.js';
import { createRelayClient, type RelayClient, type RelayStatus } from './relay-client.js';
import { asRelayMessage, relayMessageFor, relayUserOf, sendBody, type RelayMessage } from './relay-messages.js';
import { confirmedMembersAmong, confirmedOrganizationIds, deviceForRegistration, deviceIdByIdentifier, pushDeviceIdsOf, usersWithPushTokens } from './push-relay.repository.js';

export const RELAY_CHANNEL = 'relay';

export interface RelaySettings {
  /** INSTALLATION_ID */
  installationId?: string | undefined;
  /** INSTALLATION_KEY */
  installationKey?: string | undefined;
  pushRelayUri: string;
  pushIdentityUri: string;
}

export interface RelayChannelDeps {
  config: RelaySettings;
  db: Db;
  clock?: Clock;
  /** Per relay request (default 10 s). */
  timeoutMs?: number;
  /** Tests only: another fetch. */
  fetch?: typeof fetch;
  log?: OutboxLog;
  /** How often the audience is read again (PUSH_AUDIENCE_REFRESH_SECONDS). */
  audienceRefreshMs?: number;
}

export interface RelayChannel extends PushChannel {
  /** For the health check and metrics: the last success and the last error (no secrets). */
  status(): RelayStatus;
  /** The users with a phone registered: a push to anyone else is not sent. */
  readonly audience: Audience;
}

/** Whether the operator switched the relay on: both the installation id and its key set. */
export function relayConfigured(config: RelaySettings): config is RelaySettings & { installationId: string; installationKey: string } {
  return Boolean(config.installationId && config.installationKey);
}

/**
 * The mobile push relay as an outbox channel, or null when INSTALLATION_ID or INSTALLATION_KEY
 * is not set. Pushes and device registrations go to Bitwarden's relay as a self-hosted Bitwarden
 * server sends them (bitwarden/server src/Core/Platform/Push/Engines/RelayPushEngine.cs,
 * src/Core/Platform/PushRegistration/RelayPushRegistrationService.cs).
 */
export function createRelayChannel(deps: RelayChannelDeps): RelayChannel | null {
  const { config, db } = deps;
  if (!relayConfigured(config)) return null;
  const client = createRelayClient(
    {
      installationId: config.installationId,
      installationKey: config.installationKey,
      relayUri: config.pushRelayUri,
      identityUri: config.pushIdentityUri,
      ...(deps.timeoutMs !== undefined ? { timeoutMs: deps.timeoutMs } : {}),
    },
    { clock: deps.clock ?? systemClock, ...(deps.fetch ? { fetch: deps.fetch } : {}) },
  );
  const installationId = config.installationId;
  const audience = createAudience({ load: () => usersWithPushTokens(db), log: deps.log ?? { warn() {} }, ...(deps.audienceRefreshMs ? { refreshMs: deps.audienceRefreshMs } : {}) });
  return {
    name: RELAY_CHANNEL,
    audience,
    messageFor(push) {
      // The relay reaches only the phones this server registered: a user without one is skipped
      // before anything is built (this runs for every push of every save).
      const user = relayUserOf(push);
      if (user !== null && !audience.reaches(user)) return null;
      return relayMessageFor(push);
    },
    start: () => audience.start(),
    stop: () => audience.stop(),
    async deliver(message: OutboxMessage) {
      const relayMessage = asRelayMessage(message);
      if (!relayMessage) throw new PermanentDeliveryError(`not a relay message: ${String((message as { kind?: unknown }).kind)}`);
      await deliverRelayMessage(db, client, installationId, relayMessage);
    },
    status: () => client.status(),
  };
}

async function deliverRelayMessage(db: Db, client: RelayClient, installationId: string, message: RelayMessage): Promise<void> {
  switch (message.kind) {
    case 'send': {
      const { push } = message;
      const userId = 'user' in push.target ? push.target.user : null;
      const deviceId = push.contextId ? await deviceIdByIdentifier(db, push.contextId, userId) : null;
      return client.call('POST', 'push/send', sendBody(push, deviceId));
    }
    // Registrations tell the relay what is true when they are sent, not what was when they were
    // queued: messages are sent several at once and retried, so a clear and a new token (or a
    // revoke and a restore) may be sent in either order; whichever goes last sends the state.
    case 'register':
    case 'delete': {
      const device = await deviceForRegistration(db, message.deviceId);
      if (!device?.push_token || !device.active) return client.call('POST', 'push/delete', { id: message.deviceId });
      return client.call('POST', 'push/register', {
        deviceId: device.id,
        pushToken: device.push_token,
        userId: device.user_id,
        type: device.type,
        identifier: device.identifier,
        organizationIds: await confirmedOrganizationIds(db, device.user_id),
        installationId,
      });
    }
    case 'add-organization':
    case 'delete-organization': {
      const members = new Set(await confirmedMembersAmong(db, message.organizationId, message.userIds));
      const joined = message.userIds.filter((id) => members.has(id));
      const left = message.userIds.filter((id) => !members.has(id));
      for (const [kind, users] of [['add-organization', joined], ['delete-organization', left]] as const) {
        const devices = await pushDeviceIdsOf(db, users);
        // As officially: no call for users without a registered device.
        if (devices.length > 0) await client.call('PUT', `push/${kind}`, { devices: devices.map((id) => ({ id })), organizationId: message.organizationId });
      }
      return;
    }
  }
}

/** A device's registrations queued at most once at the start and once at the end of this window. */
const DEVICE_WINDOW_MS = 5000;

/**
 * One registration message per device and window, however often its token is set: an app (or
 * anyone with a session) may PUT its token thousands of times a minute, and each message is a
 * call to Bitwarden's relay. A message sends the device as it stands when sent (`register` and
 * `delete` alike), so the first change goes at once and the changes after it in the window go
 * as one more message at its end.
 */
type DeviceKind = 'register' | 'delete';

function deviceWindow(windowMs: number, send: (deviceId: string, kind: DeviceKind) => void) {
  const open = new Map<string, { again: DeviceKind | null }>();
  return {
    changed(deviceId: string, kind: DeviceKind): void {
      if (windowMs <= 0) return send(deviceId, kind);
      const window = open.get(deviceId);
      if (window) {
        window.again = kind;
        return;
      }
      send(deviceId, kind);
      const state: { again: DeviceKind | null } = { again: null };
      open.set(deviceId, state);
      setTimeout(() => {
        open.delete(deviceId);
        if (state.again) send(deviceId, state.again);
      }, windowMs).unref();
    },
  };
}

/**
 * The writers' PushRegistrations over the outbox, for the relay channel; the no-op one when the
 * relay is off, so nothing is queued for a channel that does not exist.
 */
export function createRelayRegistrations(deps: { outbox: Outbox; enabled: boolean; audience?: Audience | undefined; windowMs?: number }): PushRegistrations {
  if (!deps.enabled) return noPushRegistrations;
  const enqueue = (message: RelayMessage) => deps.outbox.enqueue(RELAY_CHANNEL, message);
  const device = deviceWindow(deps.windowMs ?? DEVICE_WINDOW_MS, (deviceId, kind) => enqueue({ kind, deviceId }));
  return {
    deviceTokenSet(deviceId, userId) {
      deps.audience?.add(userId);
      device.changed(deviceId, 'register');
    },
    deviceTokenCleared: (deviceId) => device.changed(deviceId, 'delete'),
    joinedOrganization(organizationId, userIds) {
      if (userIds.length > 0) enqueue({ kind: 'add-organization', organizationId, userIds: [...userIds] });
    },
    leftOrganization(organizationId, userIds) {
      if (userIds.length > 0) enqueue({ kind: 'delete-organization', organizationId, userIds: [...userIds] });
    },
  };
}
