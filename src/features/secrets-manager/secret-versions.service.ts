import type { Principal } from '../../http/access.js';
import { BadRequest, NotFound } from '../../http/errors.js';
import { distinctIds, mergedIds } from '../../http/ids.js';
import { list } from '../../http/schemas.js';
import { EventType } from '../../platform/audit/event-type.js';
import { deleteVersions, findSecret, findVersionOf, findVersions, updateSecret, versionsOfSecret, type VersionWithSecretRow } from './secrets.repository.js';
import { toSecretResponse, toSecretVersion } from './secrets.schemas.js';
import { keepEarlierValue, secretEvents } from './secret-changes.js';
import type { SecretServiceDeps } from './secrets.service.js';
import { accessTo, ALL_RIGHTS, type Rights, secretRights, type SmAccess, smAccessIn, type SmCaller } from './sm-access.js';
import { touchSecretsManager, touchServiceAccountsReaching } from './sm-revisions.js';

const NO_IDS = 'No version IDs provided.';

/** A version is reached as the secret it belongs to is. */
function versionRights(access: SmAccess, version: VersionWithSecretRow): Rights {
  return secretRights(access, { id: version.secret_id, project_id: version.project_id });
}

/**
 * A secret's value history: its earlier values (see keepEarlierValue). Callers who can read the
 * secret see them; callers who can write it restore or delete them. Versions of a secret in the
 * trash are out of reach until it is restored, like the secret itself.
 */
export function createSecretVersionService(deps: Omit<SecretServiceDeps, 'answers'>) {
  const { db, clock, audit, config } = deps;

  /**
   * Versions among `ids` (lower-cased, each once), all of secrets of one organization the
   * caller reaches with `need`; 404 when any id is missing, unreachable or of another organization.
   */
  async function versionsWith(principal: Principal, ids: readonly string[], need: keyof Rights): Promise<VersionWithSecretRow[]> {
    if (ids.length === 0) throw new BadRequest(NO_IDS);
    const versions = await findVersions(db, ids);
    const organizationId = versions[0]?.organization_id;
    if (!organizationId || versions.length !== ids.length || versions.some((v) => v.organization_id !== organizationId)) throw new NotFound();
    const access = await smAccessIn(db, principal, organizationId);
    if (versions.some((v) => !versionRights(access, v)[need])) throw new NotFound();
    return versions;
  }

  return {
    /** The secret's earlier values, newest first. */
    async listOfSecret({ principal }: SmCaller, secretId: string) {
      await accessTo(db, principal, await findSecret(db, secretId), secretRights, 'read');
      return list((await versionsOfSecret(db, secretId)).map(toSecretVersion));
    },

    async get({ principal }: SmCaller, id: string) {
      const [found] = await findVersions(db, [id]);
      return toSecretVersion((await accessTo(db, principal, found, versionRights, 'read')).row);
    },

    async getByIds({ principal }: SmCaller, ids: readonly string[]) {
      return list((await versionsWith(principal, distinctIds(ids, 'ids'), 'read')).map(toSecretVersion));
    },

    /**
     * Makes an earlier value the current one. The value it replaces is kept as a version first
     * (unless it is the same value), so a restore can itself be undone.
     */
    async restore({ principal, client }: SmCaller, secretId: string, versionId: string) {
      const { row: secret, access } = await accessTo(db, principal, await findSecret(db, secretId), secretRights, 'write');
      const version = await findVersionOf(db, secret.id, versionId);
      if (!version) throw new NotFound();
      const now = clock.now().toISOString();
      await db.transaction().execute(async (tx) => {
        if (secret.value !== version.value) await keepEarlierValue(tx, access.standing, secret.id, secret.value, now, config.secretVersionsKept);
        await updateSecret(tx, secret.id, { value: version.value, revision_date: now });
        await touchSecretsManager(tx, secret.organization_id);
        await touchServiceAccountsReaching(tx, { secretIds: [secret.id] }, now);
        await audit.record(tx, client, secretEvents(access.standing, EventType.Secret_Edited, [secret]));
      });
      return toSecretResponse({ ...secret, value: version.value, revision_date: now }, ALL_RIGHTS);
    },

    /** Deletes versions, all or nothing: the caller must write every secret they belong to. */
    async delete({ principal }: SmCaller, ids: readonly string[]) {
      const versions = await versionsWith(principal, mergedIds(ids), 'write');
      await deleteVersions(db, versions.map((v) => v.id));
    },
  };
}

export type SecretVersionService = ReturnType<typeof createSecretVersionService>;
