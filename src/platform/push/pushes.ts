/**
 * The seam between features that change things and the notifications hub that tells connected
 * apps (see ../shared/reference/notifications.md §3–4). Features build a `Push` and hand it to
 * `Pushes.send` once their transaction has committed; the hub delivers it to the connections
 * of its target, on this instance and, with Redis, on every other.
 */

/** The official PushType numbers (notifications.md §3). */
export enum PushType {
  SyncCipherUpdate = 0,
  SyncCipherCreate = 1,
  SyncLoginDelete = 2,
  SyncFolderDelete = 3,
  SyncCiphers = 4,
  SyncVault = 5,
  SyncOrgKeys = 6,
  SyncFolderCreate = 7,
  SyncFolderUpdate = 8,
  SyncCipherDelete = 9,
  SyncSettings = 10,
  LogOut = 11,
  SyncSendCreate = 12,
  SyncSendUpdate = 13,
  SyncSendDelete = 14,
  AuthRequest = 15,
  AuthRequestResponse = 16,
  SyncOrganizations = 17,
  SyncOrganizationStatusChanged = 18,
  SyncOrganizationCollectionSettingChanged = 19,
  Notification = 20,
  NotificationStatus = 21,
  RefreshSecurityTasks = 22,
  OrganizationBankAccountVerified = 23,
  ProviderBankAccountVerified = 24,
  PolicyChanged = 25,
  AutoConfirmMember = 26,
  PremiumStatusChanged = 27,
}

/** Who receives a push: every connection of a user, of an organization's members, or the anonymous hub's group of one auth request. */
export type PushTarget = { user: string } | { organization: string } | { authRequest: string };

export interface Push {
  type: PushType;
  /**
   * The official payload, with the official PascalCase property names (`Id`, `UserId`,
   * `RevisionDate` …); dates as `Date`. The hub encodes it for each protocol.
   */
  payload: Record<string, unknown>;
  /** The acting device's identifier where the official server excludes the current context, else null. */
  contextId: string | null;
  target: PushTarget;
}

export interface Pushes {
  /**
   * Queues pushes for delivery. Call only after the change committed (never inside a
   * transaction that may still roll back). Never throws and never waits for delivery: a push
   * that cannot be delivered is dropped and logged, as a lost push only delays the apps until
   * their next sync.
   */
  send(pushes: Push | readonly Push[]): void;
}

/** For services built without a hub (tests of a single feature). */
export const noPushes: Pushes = { send() {} };
