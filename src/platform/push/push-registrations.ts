/**
 * The seam between the writers of devices and memberships and the mobile push relay's device
 * registrations (features/push-relay). Writers call it after their transaction committed; an
 * implementation only queues the work (the outbox), so it never waits and never throws.
 */
export interface PushRegistrations {
  /** A device of this user got or changed its push token: register it (with its user's organizations). */
  deviceTokenSet(deviceId: string, userId: string): void;
  /** A device lost its push token (cleared, deactivated): the relay forgets it. */
  deviceTokenCleared(deviceId: string): void;
  /** These users became confirmed (active) members of the organization: their devices join its pushes. */
  joinedOrganization(organizationId: string, userIds: readonly string[]): void;
  /** These users' membership stopped granting anything (revoked, removed, left, organization deleted). */
  leftOrganization(organizationId: string, userIds: readonly string[]): void;
}

/** For servers without the relay, and services built without it (tests of a single feature). */
export const noPushRegistrations: PushRegistrations = {
  deviceTokenSet() {},
  deviceTokenCleared() {},
  joinedOrganization() {},
  leftOrganization() {},
};

/** After revocations committed: each user's phones leave the pushes of the organization that revoked them. */
export function leaveRevokedOrganizations(registrations: PushRegistrations, revoked: readonly { organizationId: string; userId: string | null }[]): void {
  const byOrganization = new Map<string, string[]>();
  for (const { organizationId, userId } of revoked) {
    if (!userId) continue;
    const users = byOrganization.get(organizationId) ?? [];
    if (!users.includes(userId)) users.push(userId);
    byOrganization.set(organizationId, users);
  }
  for (const [organizationId, userIds] of byOrganization) registrations.leftOrganization(organizationId, userIds);
}
