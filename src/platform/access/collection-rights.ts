import type { CollectionGrant, Membership } from './org-access.js';
import { OrganizationUserType } from './roles.js';

/** The organization settings that decide who manages collections. */
export interface CollectionSettings {
  limitCollectionCreation: boolean;
  limitCollectionDeletion: boolean;
  allowAdminAccessToAllCollectionItems: boolean;
}

/** Who is acting on collections: their membership, the organization's settings and their grants. */
export interface CollectionActor {
  membership: Membership;
  settings: CollectionSettings;
  grants: ReadonlyMap<string, CollectionGrant>;
}

const isOwnerOrAdmin = (m: Membership) => m.type === OrganizationUserType.Owner || m.type === OrganizationUserType.Admin;

/**
 * A right that reaches every collection. Owners and admins hold it only while the organization
 * lets admins at all collection items; a custom member's flag holds regardless.
 */
function anyCollection(actor: CollectionActor, right: 'editAnyCollection' | 'deleteAnyCollection'): boolean {
  return reachesEveryCollection(actor.membership, right, actor.settings.allowAdminAccessToAllCollectionItems);
}

/** `anyCollection` for a caller that has only the membership and the organization's setting (item routes). */
export function reachesEveryCollection(m: Membership, right: 'editAnyCollection' | 'deleteAnyCollection', adminsReachAllItems: boolean): boolean {
  if (!m.rights.has(right)) return false;
  return !isOwnerOrAdmin(m) || adminsReachAllItems;
}

/** Owners, admins and custom members who may edit any collection also take over collections nobody manages. */
function mayAdoptUnmanaged(actor: CollectionActor): boolean {
  return isOwnerOrAdmin(actor.membership) || actor.membership.rights.has('editAnyCollection');
}

/** Sees every collection of the organization (the official ReadAll). */
export function canReadAll(actor: CollectionActor): boolean {
  const r = actor.membership.rights;
  return r.has('editAnyCollection') || r.has('deleteAnyCollection') || r.has('accessImportExport') || r.has('manageGroups');
}

/** Sees every collection with its member and group access (the official ReadAllWithAccess). */
export function canReadAllWithAccess(actor: CollectionActor): boolean {
  const r = actor.membership.rights;
  return r.has('editAnyCollection') || r.has('deleteAnyCollection') || r.has('manageUsers') || r.has('manageGroups');
}

/**
 * Assigned with manage (the legacy Manager role's assignments carry it, see collectionGrants).
 * The custom flags editAssignedCollections and deleteAssignedCollections give nothing beyond the
 * grant: the official server turned them into manage on the assignments and dropped them, and
 * honouring them would let a read-only assignee rewrite its own access.
 */
export function manages(actor: CollectionActor, collectionId: string): boolean {
  return actor.grants.get(collectionId)?.manage === true;
}

/**
 * Whether the collection exists for this caller at all: anything else answers 404. Member
 * managers list every collection with its access, so each one exists for them too.
 */
export function canSee(actor: CollectionActor, collectionId: string): boolean {
  return canReadAll(actor) || canReadAllWithAccess(actor) || actor.grants.has(collectionId);
}

export function canRead(actor: CollectionActor, collectionId: string): boolean {
  const r = actor.membership.rights;
  return r.has('editAnyCollection') || r.has('deleteAnyCollection') || manages(actor, collectionId);
}

export function canReadWithAccess(actor: CollectionActor, collectionId: string): boolean {
  return canRead(actor, collectionId) || actor.membership.rights.has('manageUsers') || actor.membership.rights.has('manageGroups');
}

export function canCreate(actor: CollectionActor): boolean {
  return actor.membership.rights.has('createNewCollections') || !actor.settings.limitCollectionCreation;
}

/** Whether the caller may edit every collection without being assigned. */
export function canEditAny(actor: CollectionActor): boolean {
  return anyCollection(actor, 'editAnyCollection');
}

export function canEdit(actor: CollectionActor, collectionId: string, unmanaged: boolean): boolean {
  return canEditAny(actor) || manages(actor, collectionId) || (unmanaged && mayAdoptUnmanaged(actor));
}

export function canDelete(actor: CollectionActor, collectionId: string, unmanaged: boolean): boolean {
  if (anyCollection(actor, 'deleteAnyCollection')) return true;
  const m = actor.membership;
  // With deletion limited, only owners and admins delete even the collections they manage.
  if (actor.settings.limitCollectionDeletion && !isOwnerOrAdmin(m)) return false;
  return manages(actor, collectionId) || (unmanaged && mayAdoptUnmanaged(actor));
}
