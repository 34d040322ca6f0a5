import { describe, expect, it } from 'vitest';
import { canManageMemberOfType, noPermissions, OrganizationUserType, PERMISSION_FLAGS, rightsOf, type Right } from './roles.js';

const { Owner, Admin, User, Manager, Custom } = OrganizationUserType;

/** The role table, spelled out: every right against every built-in role. */
const TABLE: [Right, Record<'Owner' | 'Admin' | 'User' | 'Manager', boolean>][] = [
  ['editSubscription', { Owner: true, Admin: false, User: false, Manager: false }],
  ['deleteOrganization', { Owner: true, Admin: false, User: false, Manager: false }],
  ['manageApiKey', { Owner: true, Admin: false, User: false, Manager: false }],
  ['manageOrganization', { Owner: true, Admin: true, User: false, Manager: false }],
  ['viewAllItems', { Owner: true, Admin: true, User: false, Manager: false }],
  ['manageUsers', { Owner: true, Admin: true, User: false, Manager: false }],
  ['manageGroups', { Owner: true, Admin: true, User: false, Manager: false }],
  ['managePolicies', { Owner: true, Admin: true, User: false, Manager: false }],
  ['manageResetPassword', { Owner: true, Admin: true, User: false, Manager: false }],
  ['accessEventLogs', { Owner: true, Admin: true, User: false, Manager: false }],
  ['createNewCollections', { Owner: true, Admin: true, User: false, Manager: false }],
  ['editAnyCollection', { Owner: true, Admin: true, User: false, Manager: false }],
  ['deleteAnyCollection', { Owner: true, Admin: true, User: false, Manager: false }],
  ['editAssignedCollections', { Owner: true, Admin: true, User: false, Manager: true }],
  ['deleteAssignedCollections', { Owner: true, Admin: true, User: false, Manager: true }],
];

describe('organization roles', () => {
  it.each(TABLE)('grants %s per role', (right, expected) => {
    expect({
      Owner: rightsOf(Owner, null).has(right),
      Admin: rightsOf(Admin, null).has(right),
      User: rightsOf(User, null).has(right),
      Manager: rightsOf(Manager, null).has(right),
    }).toEqual(expected);
  });

  it.each(PERMISSION_FLAGS)('gives a custom member exactly the %s right its flag names', (flag) => {
    const rights = rightsOf(Custom, { ...noPermissions(), [flag]: true });
    const expected = new Set<Right>([flag, ...(flag === 'editAnyCollection' ? (['viewAllItems'] as const) : [])]);
    expect(rights).toEqual(expected);
  });

  it('gives a custom member without flags nothing, and never owner-only rights', () => {
    expect(rightsOf(Custom, noPermissions()).size).toBe(0);
    const all = Object.fromEntries(PERMISSION_FLAGS.map((f) => [f, true])) as ReturnType<typeof noPermissions>;
    for (const right of ['editSubscription', 'deleteOrganization', 'manageApiKey'] as const) {
      expect(rightsOf(Custom, all).has(right)).toBe(false);
    }
  });

  it('lets only owners manage owners, and not custom user managers manage admins', () => {
    expect(canManageMemberOfType(Owner, Owner)).toBe(true);
    expect(canManageMemberOfType(Admin, Owner)).toBe(false);
    expect(canManageMemberOfType(Admin, Admin)).toBe(true);
    expect(canManageMemberOfType(Custom, Admin)).toBe(false);
    expect(canManageMemberOfType(Custom, User)).toBe(true);
  });
});
