/**
 * How a policy request becomes rows: the official checks on the request, the difference
 * between what is stored and what is asked, and writing that difference.
 */

import { randomUUID } from 'node:crypto';
import { BadRequest, NotFound } from '../../http/errors.js';
import { normalizeGuid } from '../../http/schemas.js';
import type { Executor } from '../../db/database.js';
import { countInOrganization, deletePolicies, insertPolicies, policiesOn, setPolicyRights, type GrantedColumn, type GranteeColumn, type PolicyRow } from './access-policies.repository.js';
import type { AccessPolicyRequest } from './access-policies.schemas.js';
import type { SmAccess } from './sm-access.js';

/** One policy as a request wants it: who is granted what. */
interface WantedPolicy {
  grantee: GranteeColumn;
  granteeId: string;
  granted: GrantedColumn;
  grantedId: string;
  read: boolean;
  write: boolean;
}

interface PolicyChanges {
  added: WantedPolicy[];
  removed: PolicyRow[];
  /** Policies kept whose rights change, with what the request wants of them. */
  changed: { row: PolicyRow; want: WantedPolicy }[];
}

const GRANTEES: readonly GranteeColumn[] = ['organization_user_id', 'group_id', 'service_account_id'];
const GRANTEDS: readonly GrantedColumn[] = ['granted_project_id', 'granted_service_account_id', 'granted_secret_id'];

/** The one column of `columns` a policy row fills; a row filling none is malformed. */
function columnOf<C extends GranteeColumn | GrantedColumn>(row: PolicyRow, columns: readonly C[]): C {
  const column = columns.find((c) => row[c] !== null);
  if (column === undefined) throw new Error(`Access policy ${row.id} names no ${columns.join(', ')}`);
  return column;
}

function keyOfRow(row: PolicyRow): string {
  const grantee = columnOf(row, GRANTEES);
  const granted = columnOf(row, GRANTEDS);
  return `${grantee}:${row[grantee]}>${granted}:${row[granted]}`;
}

function keyOf(policy: WantedPolicy): string {
  return `${policy.grantee}:${policy.granteeId}>${policy.granted}:${policy.grantedId}`;
}

/** The policy rows a request should leave behind, against what is there. */
export function diff(current: readonly PolicyRow[], wanted: readonly WantedPolicy[]): PolicyChanges {
  const wantedByKey = new Map(wanted.map((w) => [keyOf(w), w]));
  const currentKeys = new Set(current.map(keyOfRow));
  const removed: PolicyRow[] = [];
  const changed: PolicyChanges['changed'] = [];
  for (const row of current) {
    const want = wantedByKey.get(keyOfRow(row));
    if (!want) removed.push(row);
    else if (want.read !== Boolean(row.read) || want.write !== Boolean(row.write)) changed.push({ row, want });
  }
  return { added: wanted.filter((w) => !currentKeys.has(keyOf(w))), removed, changed };
}

/**
 * Makes the stored policies into the wanted ones: policies kept keep their ids (the events
 * of machine-account people are about added and removed grantees), in a constant number of
 * statements whatever the counts.
 */
export async function applyChanges(tx: Executor, changes: PolicyChanges, now: string): Promise<void> {
  await deletePolicies(
    tx,
    changes.removed.map((r) => r.id),
  );
  const byRights = new Map<string, { rights: { read: boolean; write: boolean }; ids: string[] }>();
  for (const { row, want } of changes.changed) {
    const k = `${want.read}/${want.write}`;
    const entry = byRights.get(k) ?? { rights: { read: want.read, write: want.write }, ids: [] };
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

/** The machine accounts whose grants the changes add, change or remove. */
export function serviceAccountsIn(changes: PolicyChanges): string[] {
  return [
    ...changes.added.filter((w) => w.grantee === 'service_account_id').map((w) => w.granteeId),
    ...[...changes.removed, ...changes.changed.map((c) => c.row)].map((r) => r.service_account_id).filter((id): id is string => id !== null),
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

/** Policy requests with their grantee ids in canonical form. */
function granteeRequests(requests: readonly AccessPolicyRequest[] | null | undefined) {
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
  if (access.standing.kind === 'serviceAccount') throw new NotFound();
  return { userId: access.standing.userId };
}

const TABLE_OF = { organization_user_id: 'organization_users', group_id: 'groups', service_account_id: 'service_accounts' } as const;

/** One list of a policy request: the body field it came from and the kind of grantee it names. */
export interface GranteeList {
  field: string;
  grantee: GranteeColumn;
  requests: readonly AccessPolicyRequest[] | null | undefined;
}

/**
 * Replaces the grants of one resource to the kinds of grantee `lists` name with what they ask:
 * the official checks on each list (400 naming it), grantees of the organization (else 404),
 * `mayGrant` for every grant added (else 404), then the writes. Returns what changed.
 */
export async function replaceGrants(
  tx: Executor,
  target: { organizationId: string; granted: GrantedColumn; grantedId: string },
  lists: readonly GranteeList[],
  opts: { rule: Rule; now: string; mayGrant?: (added: WantedPolicy) => boolean },
): Promise<PolicyChanges> {
  const parsed = lists.map((list) => ({ ...list, requests: granteeRequests(list.requests) }));
  for (const list of parsed) checkRequests(list.field, list.requests, opts.rule);
  for (const list of parsed) {
    await requireInOrganization(
      tx,
      TABLE_OF[list.grantee],
      target.organizationId,
      list.requests.map((r) => r.id),
    );
  }
  const wanted = parsed.flatMap((list) => list.requests.map((r) => ({ grantee: list.grantee, granteeId: r.id, granted: target.granted, grantedId: target.grantedId, read: r.read, write: r.write })));
  const current = await policiesOn(
    tx,
    target.granted,
    target.grantedId,
    parsed.map((list) => list.grantee),
  );
  const changes = diff(current, wanted);
  if (opts.mayGrant && !changes.added.every(opts.mayGrant)) throw new NotFound();
  await applyChanges(tx, changes, opts.now);
  return changes;
}
