import { randomUUID } from 'node:crypto';
import type { AuditEvent } from '../../platform/audit/audit-log.js';
import type { Executor } from '../../db/database.js';
import type { EventType } from '../../platform/audit/event-type.js';
import { insertVersion, pruneVersions } from './secrets.repository.js';
import { actorOf, editorOf, type SmStanding } from './sm-access.js';

/**
 * What writes of secrets record, shared by the secret, secret-version and event services so that
 * none imports another service: one audit event per secret, and the value a change replaces.
 */

/** One event of `type` per secret, naming the acting user or machine account. */
export function secretEvents(standing: SmStanding, type: EventType, secrets: readonly { id: string }[]): AuditEvent[] {
  const actor = actorOf(standing);
  return secrets.map((s) => ({ type, secretId: s.id, organizationId: standing.organizationId, ...actor }));
}

/**
 * Keeps a value the secret is leaving as one of its versions, stamped with who replaced it and
 * when, and drops the versions beyond the newest `keep`. A version is an EARLIER value, as the
 * official server keeps them: the secret's own value is the current one, and its versions
 * (newest first) are the values it had before, so the history is the secret plus its versions,
 * and restoring one of them puts it back as the current value.
 */
export async function keepEarlierValue(executor: Executor, standing: SmStanding, secretId: string, value: string, now: string, keep: number): Promise<void> {
  await insertVersion(executor, { id: randomUUID(), secret_id: secretId, value, version_date: now, ...editorOf(standing) });
  await pruneVersions(executor, secretId, keep);
}
