/**
 * Who may do what in an organization: one pure table from role (and custom permission flags)
 * to rights. Only a Confirmed membership grants anything; callers check status first.
 */
export enum OrganizationUserType {
  Owner = 0,
  Admin = 1,
  User = 2,
  Manager = 3,
  Custom = 4,
}

export enum OrganizationUserStatusType {
  Revoked = -1,
  Invited = 0,
  Accepted = 1,
  Confirmed = 2,
}

/** The custom role's flags (Bitwarden's Permissions object). */
export const PERMISSION_FLAGS = [
  'accessEventLogs',
  'accessImportExport',
  'accessReports',
  'createNewCollections',
  'editAnyCollection',
  'deleteAnyCollection',
  'editAssignedCollections',
  'deleteAssignedCollections',
  'manageGroups',
  'managePolicies',
  'manageSso',
  'manageUsers',
  'manageResetPassword',
  'manageScim',
  // Read by the 2026.9 clients; stored and answered as set, but it grants nothing yet: the
  // official server has no such right (docs/client-compatibility.md).
  'manageCiphers',
] as const;
export type PermissionFlag = (typeof PERMISSION_FLAGS)[number];
export type Permissions = Record<PermissionFlag, boolean>;

export function noPermissions(): Permissions {
  return Object.fromEntries(PERMISSION_FLAGS.map((flag) => [flag, false])) as Permissions;
}

/** Rights an operation asks for. The permission flags are rights of the same name. */
export type Right =
  | PermissionFlag
  /** Billing email, plan, storage, license: the official EditSubscription. */
  | 'editSubscription'
  /** Name, business name and settings of the organization. */
  | 'manageOrganization'
  | 'deleteOrganization'
  /** View and rotate the organization API key. */
  | 'manageApiKey'
  /** Read every item of the organization (admin views). */
  | 'viewAllItems';

const OWNER_ONLY: readonly Right[] = ['editSubscription', 'deleteOrganization', 'manageApiKey'];
const ADMIN: readonly Right[] = ['manageOrganization', 'viewAllItems', ...PERMISSION_FLAGS];
const MANAGER: readonly Right[] = ['editAssignedCollections', 'deleteAssignedCollections'];

export function rightsOf(type: OrganizationUserType, permissions: Permissions | null): ReadonlySet<Right> {
  switch (type) {
    case OrganizationUserType.Owner:
      return new Set([...OWNER_ONLY, ...ADMIN]);
    case OrganizationUserType.Admin:
      return new Set(ADMIN);
    case OrganizationUserType.Manager:
      return new Set(MANAGER);
    case OrganizationUserType.Custom: {
      const granted = new Set<Right>(PERMISSION_FLAGS.filter((flag) => permissions?.[flag]));
      // Editing any collection means seeing every item in it.
      if (granted.has('editAnyCollection')) granted.add('viewAllItems');
      return granted;
    }
    default:
      return new Set();
  }
}

/**
 * Whether an actor of one role may manage (invite, edit, revoke, remove) a member of another:
 * only owners touch owners, and a custom user manager cannot touch admins.
 */
export function canManageMemberOfType(actor: OrganizationUserType, target: OrganizationUserType): boolean {
  if (target === OrganizationUserType.Owner) return actor === OrganizationUserType.Owner;
  if (target === OrganizationUserType.Admin) return actor === OrganizationUserType.Owner || actor === OrganizationUserType.Admin;
  return true;
}

export function parsePermissions(json: string | null): Permissions | null {
  if (!json) return null;
  const parsed = JSON.parse(json) as Partial<Record<string, unknown>>;
  const permissions = noPermissions();
  for (const flag of PERMISSION_FLAGS) permissions[flag] = parsed[flag] === true;
  return permissions;
}
