import { storedPush, type OutboxMessage, type StoredPush } from '../push-delivery/channel.js';
import { PushType, type Push } from '../../platform/push/pushes.js';

/**
 * The relay channel's outbox messages. Registrations carry ids only: the device's push token,
 * type and organizations are read when the message is delivered, so a message queued before a
 * later change never sends stale data, and the outbox never stores a push token.
 */
export type RelayMessage =
  | { kind: 'send'; push: StoredPush }
  | { kind: 'register'; deviceId: string }
  | { kind: 'delete'; deviceId: string }
  | { kind: 'add-organization'; organizationId: string; userIds: string[] }
  | { kind: 'delete-organization'; organizationId: string; userIds: string[] };

/**
 * What the relay sends for a push: every push to a user or an organization, as the official
 * server's relay engine does for all of them (bitwarden/server RelayPushEngine.cs). The anonymous
 * hub's AuthRequestResponse goes, as officially, to the request's user with the approving device
 * excluded (PushNotificationServiceAuthExtensions.cs), so the requesting phone hears of it.
 */
export function relayMessageFor(push: Push): RelayMessage | null {
  const target = push.target;
  if ('user' in target || 'organization' in target) return { kind: 'send', push: storedPush(push) };
  const user = relayUserOf(push);
  return user === null ? null : { kind: 'send', push: storedPush({ ...push, target: { user } }) };
}

/** The user a push goes to at the relay: its target's, or a login request's answer's asker; null for an organization's push or none. */
export function relayUserOf(push: Push): string | null {
  if ('user' in push.target) return push.target.user;
  if (push.type === PushType.AuthRequestResponse && typeof push.payload.UserId === 'string') return push.payload.UserId;
  return null;
}

/**
 * .NET's camelCase naming (JsonNamingPolicy.CamelCase): the official server posts to the relay
 * with JsonContent.Create, whose web defaults camelCase every property, the payload's included;
 * the relay forwards the payload to the phones as it got it (NotificationHubPushEngine.RelayAsync).
 */
export function camelName(name: string): string {
  const chars = [...name];
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i] ?? '';
    if (i === 1 && c === c.toLowerCase()) break;
    const next = chars[i + 1];
    if (i > 0 && next !== undefined && next === next.toLowerCase() && next !== next.toUpperCase()) break;
    chars[i] = c.toLowerCase();
  }
  return chars.join('');
}

export function camelKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(camelKeys);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [camelName(k), camelKeys(v)]));
  return value;
}

/** The body of `POST push/send` (PushSendRequestModel), camelCased as the official server sends it. */
export function sendBody(push: StoredPush, deviceId: string | null): Record<string, unknown> {
  const target = push.target;
  return {
    userId: 'user' in target ? target.user : null,
    organizationId: 'organization' in target ? target.organization : null,
    // The acting device: the relay counts the installation's devices by it; Strongroom knows it
    // only where the push excludes it (the official server sends it for every push from a request).
    deviceId,
    // The phones skip the device with this identifier (the official ExcludeCurrentContext).
    identifier: push.contextId,
    type: push.type,
    payload: camelKeys(push.payload),
    clientType: null,
    installationId: null,
  };
}

/** Reads a stored message back, refusing one this version cannot send. */
export function asRelayMessage(message: OutboxMessage): RelayMessage | null {
  const m = message as Partial<Record<string, unknown>>;
  const isId = (v: unknown): v is string => typeof v === 'string' && v.length > 0;
  const isIds = (v: unknown): v is string[] => Array.isArray(v) && v.every(isId);
  switch (m.kind) {
    case 'send':
      return m.push && typeof m.push === 'object' ? { kind: 'send', push: m.push as StoredPush } : null;
    case 'register':
    case 'delete':
      return isId(m.deviceId) ? { kind: m.kind, deviceId: m.deviceId } : null;
    case 'add-organization':
    case 'delete-organization':
      return isId(m.organizationId) && isIds(m.userIds) ? { kind: m.kind, organizationId: m.organizationId, userIds: m.userIds } : null;
    default:
      return null;
  }
}
