import { BadRequest } from '../../http/errors.js';
import { distinctIds } from '../../http/ids.js';
import type { AccessInput } from './collections.repository.js';

export const MANAGE_EXCLUSIVE = 'The Manage property is mutually exclusive and cannot be true while the ReadOnly or HidePasswords properties are also true.';

interface AccessSent {
  id: string;
  readOnly?: boolean | null | undefined;
  hidePasswords?: boolean | null | undefined;
  manage?: boolean | null | undefined;
}

/**
 * An access list as clients send it (a collection's members or groups, a group's or a member's
 * collections): ids lower-cased and each named once, missing flags false, and manage never
 * together with read-only or hidden passwords (as the official server refuses). Any fault is a
 * 400 naming `field`.
 */
export function accessInputs(list: readonly AccessSent[], field: string): AccessInput[] {
  const ids = distinctIds(list.map((item) => item.id), field);
  return list.map((item, i) => {
    const access = { id: ids[i] as string, readOnly: item.readOnly ?? false, hidePasswords: item.hidePasswords ?? false, manage: item.manage ?? false };
    if (access.manage && (access.readOnly || access.hidePasswords)) throw BadRequest.field(field, MANAGE_EXCLUSIVE);
    return access;
  });
}
