/**
 * How a policy request becomes rows: the official checks on the request, the difference
 * between what is stored and what is asked, and writing that difference.
 */

import { randomUUID } from 'node:crypto';
import { BadRequest, NotFound } from '../../http/errors.js';
import { normalizeGuid } from '../../http/schemas.js';
import type { Executor } from '../events/audit-log.js';
import { countInOrganization, deletePolicies, insertPolicies, setPolicyRights, type GrantedColumn, type GranteeColumn, type PolicyRow } from './access-policies.repository.js';
import type { AccessPolicyRequest } from './access-policies.schemas.js';
import type { SmAccess } from './sm-access.js';

/** One policy as a request wants it: who is granted what. */
export interface WantedPolicy {
  grantee: GranteeColumn;
  granteeId: string;
  granted: GrantedColumn;
  grantedId: string;
  read: boolean;
  write: boolean;
}

export interface PolicyChanges {
  added: WantedPolicy[];
  removed: PolicyRow[];
  /** Policies kept whose rights change. */
  changed: PolicyRow[];
}

export const GRANTEES: readonly GranteeColumn[] = ['organization_user_id', 'group_id', 'service_account_id'];
const GRANTEDS: readonly GrantedColumn[] = ['granted_project_id', 'granted_service_account_id', 'granted_secret_id'];

function keyOfRow(row: PolicyRow): string {
  const grantee = GRANTEES.find((c) => row[c] !== null) ?? 'organization_user_id';
  const granted = GRANTEDS.find((c) => row[c] !== null) ?? 'granted_project_id';
  return `${grantee}:${row[grantee]}>${granted}:${row[granted]}`;
}

function keyOf(policy: WantedPolicy): string {
  return `${policy.grantee}:${policy.granteeId}>${policy.granted}:${policy.grantedId}`;
}

/** The policy rows a request should leave behind, against what is there. */
export function diff(current: readonly PolicyRow[], wanted: readonly WantedPolicy[]): PolicyChanges & { wantedByKey: Map<string, WantedPolicy> } {
  const wantedByKey = new Map(wanted.map((w) => [keyOf(w), w]));
  const currentByKey = new Map(current.map((row) => [keyOfRow(row), row]));
  const removed = current.filter((row) => !wantedByKey.has(keyOfRow(row)));
  const added = wanted.filter((w) => !currentByKey.has(keyOf(w)));
  const changed = current.filter((row) => {
    const w = wantedByKey.get(keyOfRow(row));
    return w !== undefined && (w.read !== Boolean(row.read) || w.write !== Boolean(row.write));
  });
  return { added, removed, changed, wantedByKey };
}

/**
 * Makes the stored policies `current` into `wanted`: policies kept keep their ids (the events
 * of machine-account people are about added and removed grantees), in a constant number of
 * statements whatever the counts.
 */
export async function applyChanges(tx: Executor, changes: ReturnType<typeof diff>, now: string): Promise<void> {
  await deletePolicies(
    tx,
    changes.removed.map((r) => r.id),
  );
  const byRights = new Map<string, { rights: { read: boolean; write: boolean }; ids: string[] }>();
  for (const row of changes.changed) {
    const w = changes.wantedByKey.get(keyOfRow(row));
    if (!w) continue;
    const k = `${w.read}/${w.write}`;
    const entry = byRights.get(k) ?? { rights: { read: w.read, write: w.write }, ids: [] };
    entry.ids.push(row.id);
    byRights.set(k, entry);
  }
  for (const { rights, ids } of byRights.values()) await setPolicyRights(tx, ids, rights, now);
  await insertPolicies(
    tx,
    changes.added.map((w) => ({
      id: randomUUID(),
      organization_user_id: null,
      group_id: null,
      service_account_id: null,
      granted_project_id: null,
      granted_service_account_id: null,
      granted_secret_id: null,
      [w.grantee]: w.granteeId,
      [w.granted]: w.grantedId,
      read: w.read,
      write: w.write,
      creation_date: now,
      revision_date: now,
    })),
  );
}

export function serviceAccountsIn(changes: PolicyChanges): string[] {
  return [
    ...changes.added.filter((w) => w.grantee === 'service_account_id').map((w) => w.granteeId),
    ...[...changes.removed, ...changes.changed].map((r) => r.service_account_id).filter((id): id is string => id !== null),
  ];
}

type Rule = 'read' | 'readWrite';

/**
 * The official checks on a policy request, before anything is written: no grantee twice in a
 * list, and every entry grants read (machine-account people: read and write).
 */
export function checkRequests(field: string, requests: readonly { id: string; read: boolean; write: boolean }[], rule: Rule): void {
  const seen = new Set<string>();
  for (const request of requests) {
    if (seen.has(request.id)) throw BadRequest.field(field, 'Resources must be unique');
    seen.add(request.id);
  }
  if (rule === 'readWrite') {
    if (!requests.every((r) => r.read && r.write)) throw BadRequest.field(field, 'Machine account access must be Can read, write');
  } else if (!requests.every((r) => r.read)) {
    throw BadRequest.field(field, 'Resources must be Read = true');
  }
}

export function granteeRequests(requests: readonly AccessPolicyRequest[] | null | undefined) {
  return (requests ?? []).map((r) => ({ id: normalizeGuid(r.granteeId), read: r.read, write: r.write }));
}

/** 404 unless every id is a row of `table` in the organization, as the official handlers refuse. */
export async function requireInOrganization(db: Executor, table: Parameters<typeof countInOrganization>[1], organizationId: string, ids: readonly string[]): Promise<void> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return;
  if ((await countInOrganization(db, table, organizationId, unique)) !== unique.length) throw new NotFound();
}

/** Only people (owners, admins, members) manage access policies; machine accounts never do. */
export function requireUser(access: SmAccess): { userId: string } {
  if (access.caller.kind === 'serviceAccount') throw new NotFound();
  return { userId: access.caller.userId };
}

export function wantedPeople(
  users: readonly { id: string; read: boolean; write: boolean }[],
  groups: readonly { id: string; read: boolean; write: boolean }[],
  granted: GrantedColumn,
  grantedId: string,
): WantedPolicy[] {
  return [
    ...users.map((u) => ({ grantee: 'organization_user_id' as const, granteeId: u.id, granted, grantedId, read: u.read, write: u.write })),
    ...groups.map((g) => ({ grantee: 'group_id' as const, granteeId: g.id, granted, grantedId, read: g.read, write: g.write })),
  ];
}
