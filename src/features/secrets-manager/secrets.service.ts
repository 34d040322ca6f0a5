import { randomUUID } from 'node:crypto';
import type { Clock } from '../../shared/clock.js';
import type { Config } from '../../config/config.js';
import type { Db } from '../../db/database.js';
import type { Principal } from '../../http/access.js';
import { BadRequest, NotFound, Unauthorized } from '../../http/errors.js';
import { distinctIds, mergedIds } from '../../http/ids.js';
import type { ClientContext } from '../../http/request-context.js';
import { list } from '../../http/schemas.js';
import type { AuditLog } from '../../platform/audit/audit-log.js';
import { EventType } from '../../platform/audit/event-type.js';
import { createStoredReadSets, readSetOf, type ReadSet } from '../../platform/audit/read-sets.js';
import { encodeJson } from '../../http/serialization.js';
import { saveSecretAccessPolicies } from './access-policies.service.js';
import {
  deleteSecrets,
  findSecret,
  findSecrets,
  insertSecret,
  listSecrets,
  listSecretSummaries,
  organizationOfSecret,
  serviceAccountRevision,
  setDeletedDate,
  trashedSecretIds,
  updateSecret,
  type SecretRow,
} from './secrets.repository.js';
import { findProject } from './projects.repository.js';
import { keepEarlierValue, secretEvents } from './secret-changes.js';
import {
  BaseSecretList,
  SecretListResponse,
  SecretsSyncResponse,
  toBaseSecret,
  toSecretList,
  toSecretResponse,
  type CreateSecretBody,
  type UpdateSecretBody,
} from './secrets.schemas.js';
import {
  accessTo,
  actorOf,
  ALL_RIGHTS,
  bulkAccess,
  projectRights,
  requireSmStanding,
  secretAccessKey,
  secretRights,
  type SmAccess,
  smAccessIn,
  smAccessOf,
  type SmCaller,
  type SmStanding,
} from './sm-access.js';
import { digestOf, type SmAnswers } from './sm-answers.js';
import { secretsManagerRevision, touchSecretsManager, touchServiceAccountsReaching } from './sm-revisions.js';
import { resultsPerId } from './sm-schemas.js';

export interface SecretServiceDeps {
  db: Db;
  clock: Clock;
  audit: AuditLog;
  config: Pick<Config, 'secretVersionsKept'>;
  answers: SmAnswers;
}

/** The answer to a machine sync that finds nothing new. */
const NO_CHANGES = { object: 'secretsSync' as const, hasChanges: false, secrets: null };

function parseSyncDate(text: string | undefined, now: Date): Date | null {
  if (text === undefined || text === '') return null;
  const time = Date.parse(text);
  if (Number.isNaN(time)) throw BadRequest.field('lastSyncedDate', 'The lastSyncedDate field must be a date.');
  if (time > now.getTime()) throw new BadRequest('Last synced date must be in the past.');
  return new Date(time);
}

export function createSecretService(deps: SecretServiceDeps) {
  const { db, clock, audit, config, answers } = deps;
  const storedSets = createStoredReadSets(() => clock.now().getTime());

  /**
   * The one project `projectIds` names (null for none), where the caller may put a secret: 400
   * for more than one; 404 for a project missing, of another organization or that the caller
   * cannot write, and for no project unless the caller is an admin (a secret outside any
   * project is admins' alone, as the official SecretAuthorizationHandler decides).
   */
  async function placeIn(access: SmAccess, projectIds: readonly string[]) {
    if (projectIds.length > 1) throw BadRequest.field('projectIds', 'Only one project assignment is supported.');
    const id = projectIds[0]?.toLowerCase();
    const project = id ? await findProject(db, id) : undefined;
    if (id && project?.organization_id !== access.standing.organizationId) throw new NotFound();
    if (project ? !projectRights(access, project.id).write : access.standing.kind !== 'admin') throw new NotFound();
    return project ?? null;
  }

  /**
   * Records Secret_Retrieved for each secret read (one row for several, see read-sets.ts): one
   * secret, or a set stored lately, is one row in one statement; otherwise the set is stored with
   * the row, in one transaction.
   */
  async function recordReads(standing: SmStanding, reads: ReadSet, client: ClientContext): Promise<void> {
    if (reads.secretIds.length === 0) return;
    const event = { type: EventType.Secret_Retrieved, organizationId: standing.organizationId, ...actorOf(standing) };
    // One secret is one row naming it: a single statement.
    if (reads.secretIds.length === 1) return audit.recordReads(db, client, event, reads);
    if (storedSets.has(reads.id)) return audit.record(db, client, { ...event, readSetId: reads.id });
    await db.transaction().execute((tx) => audit.recordReads(tx, client, event, reads));
    storedSets.add(reads.id);
  }

  /** The caller's standing and grants, and the organization's revision for the cached answers, read at once. */
  async function accessAndRevision(principal: Principal, organizationId: string): Promise<[SmAccess, number]> {
    return Promise.all([smAccessIn(db, principal, organizationId), secretsManagerRevision(db, organizationId)]);
  }

  /** The secrets in use the caller can read, without values, encoded (see sm-answers.ts). */
  async function summaries(access: SmAccess, revision: number, organizationId: string, projectId?: string): Promise<Buffer> {
    const key = `list|${projectId ?? ''}|${digestOf(secretAccessKey(access))}`;
    const { body } = await answers.answer(organizationId, revision, key, async () => {
      const rows = await listSecretSummaries(db, organizationId, projectId ? { projectId } : {});
      const readable = rows.map((row) => ({ ...row, rights: secretRights(access, row) })).filter((row) => row.rights.read);
      return { body: encodeJson(SecretListResponse, toSecretList(readable)) };
    });
    return body;
  }

  return {
    /** The organization's secrets in use the caller can read, without values (encoded). */
    async list({ principal }: SmCaller, organizationId: string): Promise<Buffer> {
      return summaries(...(await accessAndRevision(principal, organizationId)), organizationId);
    },

    /** A project's secrets the caller can read (encoded); 404 unless the caller can read the project. */
    async listOfProject({ principal }: SmCaller, projectId: string): Promise<Buffer> {
      const { row: project, access } = await accessTo(db, principal, await findProject(db, projectId), (a, p) => projectRights(a, p.id), 'read');
      return summaries(access, await secretsManagerRevision(db, project.organization_id), project.organization_id, project.id);
    },

    async get({ principal, client }: SmCaller, id: string) {
      const { row: secret, access, rights } = await accessTo(db, principal, await findSecret(db, id), secretRights, 'read');
      await recordReads(access.standing, readSetOf([secret.id]), client);
      return toSecretResponse(secret, rights);
    },

    /**
     * Admins create anywhere in the organization; members and machine accounts only into a
     * project they can write (a secret outside any project is admins' alone), as the official
     * SecretAuthorizationHandler decides.
     */
    async create({ principal, client }: SmCaller, organizationId: string, body: CreateSecretBody) {
      const access = await smAccessIn(db, principal, organizationId);
      const project = await placeIn(access, body.projectIds ?? []);
      const now = clock.now().toISOString();
      const secret: SecretRow = {
        id: randomUUID(),
        organization_id: organizationId,
        project_id: project?.id ?? null,
        key: body.key,
        value: body.value,
        note: body.note,
        creation_date: now,
        revision_date: now,
        deleted_date: null,
        project_name: project?.name ?? null,
      };
      await db.transaction().execute(async (tx) => {
        const { project_name: _name, ...row } = secret;
        await insertSecret(tx, row);
        await touchSecretsManager(tx, organizationId);
        if (body.accessPoliciesRequests) await saveSecretAccessPolicies(tx, access, { id: secret.id, organizationId }, body.accessPoliciesRequests, now);
        await touchServiceAccountsReaching(tx, { secretIds: [secret.id] }, now);
        await audit.record(tx, client, secretEvents(access.standing, EventType.Secret_Created, [secret]));
      });
      return toSecretResponse(secret, ALL_RIGHTS);
    },

    /**
     * Changes a secret the caller can write. `projectIds` absent, null or naming the current
     * project leaves the project as it is; `[]` takes the secret out of its project and another
     * id moves it, which non-admins may do only into a project they can write and never out of
     * every project. A value change keeps the replaced value as a version (see keepEarlierValue):
     * `valueChanged` decides when the client sends it, otherwise a different ciphertext does.
     */
    async update({ principal, client }: SmCaller, id: string, body: UpdateSecretBody) {
      // Access first: what the body asks must not tell a caller who cannot write it that it exists.
      const { row: secret, access } = await accessTo(db, principal, await findSecret(db, id), secretRights, 'write');
      const requested = body.projectIds;
      const moves = requested != null && (requested.length > 1 || (requested[0]?.toLowerCase() ?? null) !== secret.project_id);
      const target = moves ? await placeIn(access, requested) : null;
      const valueChanged = body.valueChanged ?? body.value !== secret.value;
      const now = clock.now().toISOString();
      const projectId = moves ? (target?.id ?? null) : secret.project_id;
      await db.transaction().execute(async (tx) => {
        if (valueChanged) await keepEarlierValue(tx, access.standing, secret.id, secret.value, now, config.secretVersionsKept);
        await updateSecret(tx, secret.id, { key: body.key, value: body.value, note: body.note, project_id: projectId, revision_date: now });
        await touchSecretsManager(tx, secret.organization_id);
        if (body.accessPoliciesRequests) {
          await saveSecretAccessPolicies(tx, access, { id: secret.id, organizationId: secret.organization_id }, body.accessPoliciesRequests, now);
        }
        // The secret's new project is found from the secret; the project it leaves is named.
        await touchServiceAccountsReaching(tx, { secretIds: [secret.id], projectIds: moves && secret.project_id ? [secret.project_id] : [] }, now);
        await audit.record(tx, client, secretEvents(access.standing, EventType.Secret_Edited, [secret]));
      });
      const updated: SecretRow = {
        ...secret,
        key: body.key,
        value: body.value,
        note: body.note,
        project_id: projectId,
        project_name: moves ? (target?.name ?? null) : secret.project_name,
        revision_date: now,
      };
      return toSecretResponse(updated, ALL_RIGHTS);
    },

    /**
     * Moves secrets to the trash, answering per id. One call acts in one organization (see
     * `bulkAccess`: a machine account's own, else that of the first requested id). An id the
     * caller cannot write, cannot see, that does not exist, is already in the trash or is of
     * another organization answers "access denied" alike, so the answer never tells which ids
     * exist; the other ids are still moved (spec Errors rule 3).
     */
    async delete({ principal, client }: SmCaller, rawIds: readonly string[]) {
      const ids = mergedIds(rawIds);
      const found = await findSecrets(db, ids);
      const bulk = await bulkAccess(db, principal, ids, found, secretRights);
      const doomed = bulk?.writable ?? [];
      if (bulk && doomed.length > 0) {
        const now = clock.now().toISOString();
        await db.transaction().execute(async (tx) => {
          await touchServiceAccountsReaching(tx, { secretIds: doomed.map((s) => s.id) }, now);
          await setDeletedDate(tx, doomed.map((s) => s.id), now, now);
          await touchSecretsManager(tx, bulk.access.standing.organizationId);
          await audit.record(tx, client, secretEvents(bulk.access.standing, EventType.Secret_Deleted, doomed));
        });
      }
      return resultsPerId(ids, doomed);
    },

    /**
     * Secrets with values, in the order asked, encoded; 404 when any id is missing, in the trash,
     * unreadable or of another organization (a machine account's own organization is the one
     * asked, a user's that of the first id).
     */
    async getByIds({ principal, client }: SmCaller, rawIds: readonly string[]): Promise<Buffer> {
      const organizationId = principal.kind === 'serviceAccount' ? principal.organizationId : await organizationOfSecret(db, rawIds[0]?.toLowerCase() ?? '');
      if (!organizationId) throw new NotFound();
      const [access, revision] = await accessAndRevision(principal, organizationId);
      // Keyed by the list as sent, letter case aside: an answer is stored only for a list that
      // passed, so only a list not cached pays for lower-casing each id and finding repeats.
      const key = `ids|${digestOf(secretAccessKey(access))}|${digestOf(JSON.stringify(rawIds).toLowerCase())}`;
      const answer = await answers.answer(organizationId, revision, key, async () => {
        const ids = distinctIds(rawIds, 'ids');
        const secrets = await findSecrets(db, ids);
        if (secrets.length !== ids.length || secrets.some((s) => s.organization_id !== organizationId || !secretRights(access, s).read)) throw new NotFound();
        const byId = new Map(secrets.map((s) => [s.id, s]));
        const ordered = ids.map((id) => byId.get(id)).filter((s) => s !== undefined);
        return { body: encodeJson(BaseSecretList, list(ordered.map(toBaseSecret))), reads: readSetOf(ids) };
      });
      if (answer.reads) await recordReads(access.standing, answer.reads, client);
      return answer.body;
    },

    /**
     * The machine-account sync: every secret the account can read when nothing was synced yet or
     * something it reaches changed since (its revision date moved past `lastSyncedDate`).
     */
    async sync({ principal, client }: SmCaller, organizationId: string, lastSyncedDate: string | undefined) {
      const since = parseSyncDate(lastSyncedDate, clock.now());
      const standing = await requireSmStanding(db, principal, organizationId);
      if (standing.kind !== 'serviceAccount') throw new BadRequest('Only service accounts can sync secrets.');
      // The usual poll finds nothing new: it costs this one query, not the account's grants.
      if (since) {
        const revision = await serviceAccountRevision(db, standing.serviceAccountId);
        if (!revision || Date.parse(revision) < since.getTime()) return encodeJson(SecretsSyncResponse, NO_CHANGES);
      }
      const [access, revision] = await Promise.all([smAccessOf(db, standing), secretsManagerRevision(db, organizationId)]);
      const answer = await answers.answer(organizationId, revision, `sync|${digestOf(secretAccessKey(access))}`, async () => {
        const secrets = (await listSecrets(db, organizationId)).filter((s) => secretRights(access, s).read);
        const body = encodeJson(SecretsSyncResponse, { object: 'secretsSync', hasChanges: true, secrets: list(secrets.map(toBaseSecret)) });
        return { body, reads: readSetOf(secrets.map((s) => s.id)) };
      });
      if (answer.reads) await recordReads(standing, answer.reads, client);
      return answer.body;
    },

    /** The organization's trash: admins only (401 for other callers, as the official server). */
    async listTrash({ principal }: SmCaller, organizationId: string) {
      await requireAdmin(principal, organizationId);
      const rows = await listSecretSummaries(db, organizationId, { place: 'trash' });
      return toSecretList(rows.map((row) => ({ ...row, rights: ALL_RIGHTS })));
    },

    /** Deletes trashed secrets for good; 404 (nothing deleted) when an id is not in the trash. */
    async emptyTrash({ principal, client }: SmCaller, organizationId: string, rawIds: readonly string[]) {
      const standing = await requireAdmin(principal, organizationId);
      const trashed = await trashedOrThrow(organizationId, rawIds);
      const now = clock.now().toISOString();
      await db.transaction().execute(async (tx) => {
        // Before the delete: the policies naming these secrets go with them.
        await touchServiceAccountsReaching(tx, { secretIds: trashed.map((s) => s.id) }, now);
        await deleteSecrets(tx, trashed.map((s) => s.id));
        await touchSecretsManager(tx, organizationId);
        await audit.record(tx, client, secretEvents(standing, EventType.Secret_Permanently_Deleted, trashed));
      });
    },

    /** Puts trashed secrets back in use; 404 (nothing restored) when an id is not in the trash. */
    async restoreTrash({ principal, client }: SmCaller, organizationId: string, rawIds: readonly string[]) {
      const standing = await requireAdmin(principal, organizationId);
      const trashed = await trashedOrThrow(organizationId, rawIds);
      const now = clock.now().toISOString();
      await db.transaction().execute(async (tx) => {
        await setDeletedDate(tx, trashed.map((s) => s.id), null, now);
        await touchSecretsManager(tx, organizationId);
        await touchServiceAccountsReaching(tx, { secretIds: trashed.map((s) => s.id) }, now);
        await audit.record(tx, client, secretEvents(standing, EventType.Secret_Restored, trashed));
      });
    },
  };

  async function requireAdmin(principal: Principal, organizationId: string): Promise<SmStanding> {
    const standing = await requireSmStanding(db, principal, organizationId);
    if (standing.kind !== 'admin') throw new Unauthorized();
    return standing;
  }

  async function trashedOrThrow(organizationId: string, rawIds: readonly string[]) {
    const ids = mergedIds(rawIds);
    const trashed = await trashedSecretIds(db, organizationId, ids);
    if (trashed.length !== ids.length) throw new NotFound();
    return trashed;
  }
}

export type SecretService = ReturnType<typeof createSecretService>;
