import { randomBytes, randomUUID } from 'node:crypto';
import type { Clock } from '../../shared/clock.js';
import type { Db } from '../../db/database.js';
import type { Principal } from '../../http/access.js';
import { BadRequest, NotFound } from '../../http/errors.js';
import { mergedIds } from '../../http/ids.js';
import type { AuditEvent, AuditLog } from '../../platform/audit/audit-log.js';
import { EventType } from '../../platform/audit/event-type.js';
import { insertCreatorPolicy } from './projects.repository.js';
import {
  accessTokensOf,
  deleteServiceAccounts,
  findServiceAccount,
  insertAccessToken,
  insertServiceAccount,
  renameServiceAccount,
  revokeAccessTokens,
  secretsReachedBy,
  serviceAccountsByIds,
  serviceAccountsOfOrganization,
} from './service-accounts.repository.js';
import {
  toAccessTokenCreation,
  toAccessTokenResponse,
  toServiceAccountDetails,
  toServiceAccountResponse,
  type AccessTokenCreateBody,
  type AccessTokenRow,
  type ServiceAccountBody,
  type ServiceAccountRow,
} from './service-accounts.schemas.js';
import { accessTo, actorOf, bulkAccess, requireSmStanding, type Rights, serviceAccountRights, type SmAccess, smAccessIn, type SmCaller, type SmStanding } from './sm-access.js';
import { hashClientSecret, SECRETS_SCOPE } from './sm-identity.js';
import { resultsPerId } from './sm-schemas.js';

const SECRET_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const CLIENT_SECRET_LENGTH = 30;
/** The largest multiple of the alphabet's size a byte can hold; bytes above it are redrawn. */
const UNBIASED_LIMIT = 256 - (256 % SECRET_ALPHABET.length);

/** 30 letters and digits, each drawn uniformly from a cryptographic source (no modulo bias). */
export function generateClientSecret(): string {
  let secret = '';
  while (secret.length < CLIENT_SECRET_LENGTH) {
    for (const byte of randomBytes(CLIENT_SECRET_LENGTH)) {
      if (byte < UNBIASED_LIMIT && secret.length < CLIENT_SECRET_LENGTH) secret += SECRET_ALPHABET[byte % SECRET_ALPHABET.length];
    }
  }
  return secret;
}

const PAST_EXPIRATION = 'Please select an expiration date that is in the future.';

function accountEvent(standing: SmStanding, type: EventType, account: ServiceAccountRow): AuditEvent {
  return { type, organizationId: account.organization_id, grantedServiceAccountId: account.id, ...actorOf(standing) };
}

export function createServiceAccountService(deps: { db: Db; clock: Clock; audit: AuditLog }) {
  const { db, clock, audit } = deps;

  /** The machine account with the caller's access to it; 404 when missing or the caller lacks `need`. */
  async function accountWith(principal: Principal, id: string, need: keyof Rights): Promise<{ account: ServiceAccountRow; access: SmAccess }> {
    const { row: account, access } = await accessTo(db, principal, await findServiceAccount(db, id), (a, sa) => serviceAccountRights(a, sa.id), need);
    return { account, access };
  }

  const readable = (principal: Principal, id: string) => accountWith(principal, id, 'read');
  const writable = (principal: Principal, id: string) => accountWith(principal, id, 'write');

  return {
    readable,

    async list({ principal }: SmCaller, organizationId: string, includeAccessToSecrets: boolean) {
      const access = await smAccessIn(db, principal, organizationId);
      const accounts = (await serviceAccountsOfOrganization(db, organizationId)).filter((a) => serviceAccountRights(access, a.id).read);
      const reached = includeAccessToSecrets ? await secretsReachedBy(db, organizationId, accounts.map((a) => a.id)) : new Map<string, number>();
      return accounts.map((a) => toServiceAccountDetails(a, reached.get(a.id) ?? 0));
    },

    async get({ principal }: SmCaller, id: string) {
      return toServiceAccountResponse((await readable(principal, id)).account);
    },

    /**
     * Users create machine accounts, machine accounts do not. A member who is not an admin
     * receives the read+write people policy on it, or could not manage what they made.
     */
    async create({ principal, client }: SmCaller, organizationId: string, body: ServiceAccountBody) {
      const standing = await requireSmStanding(db, principal, organizationId);
      if (standing.kind === 'serviceAccount') throw new NotFound();
      const now = clock.now().toISOString();
      const row: ServiceAccountRow = { id: randomUUID(), organization_id: organizationId, name: body.name, creation_date: now, revision_date: now };
      await db.transaction().execute(async (tx) => {
        await insertServiceAccount(tx, row);
        const events = [accountEvent(standing, EventType.ServiceAccount_Created, row)];
        if (standing.kind === 'member') {
          await insertCreatorPolicy(tx, {
            id: randomUUID(),
            organization_user_id: standing.organizationUserId,
            service_account_id: null,
            group_id: null,
            granted_project_id: null,
            granted_service_account_id: row.id,
            granted_secret_id: null,
            read: true,
            write: true,
            creation_date: now,
            revision_date: now,
          });
          events.push({ ...accountEvent(standing, EventType.ServiceAccount_UserAdded, row), organizationUserId: standing.organizationUserId });
        }
        await audit.record(tx, client, events);
      });
      return toServiceAccountResponse(row);
    },

    /** Renames; the official server records no event for it. */
    async update({ principal }: SmCaller, id: string, body: ServiceAccountBody) {
      const { account } = await writable(principal, id);
      const now = clock.now().toISOString();
      await renameServiceAccount(db, account.id, body.name, now);
      return toServiceAccountResponse({ ...account, name: body.name, revision_date: now });
    },

    /**
     * Deletes the machine accounts the caller may write (with their tokens, which stop working
     * at once); one result per id, as `bulkAccess` describes. Machine accounts manage none.
     */
    async delete({ principal, client }: SmCaller, ids: readonly string[]) {
      const wanted = mergedIds(ids);
      const accounts = await serviceAccountsByIds(db, wanted);
      // A machine account writes none (serviceAccountRights), so it deletes nothing.
      const bulk = await bulkAccess(db, principal, wanted, accounts, (access, a) => serviceAccountRights(access, a.id));
      const doomed = bulk?.writable ?? [];
      if (bulk && doomed.length > 0) {
        const { standing } = bulk.access;
        await db.transaction().execute(async (tx) => {
          await deleteServiceAccounts(tx, doomed.map((a) => a.id));
          await audit.record(tx, client, doomed.map((a) => accountEvent(standing, EventType.ServiceAccount_Deleted, a)));
        });
      }
      return resultsPerId(wanted, doomed);
    },

    async listTokens({ principal }: SmCaller, id: string) {
      const { account } = await readable(principal, id);
      return (await accessTokensOf(db, account.id)).map(toAccessTokenResponse);
    },

    /**
     * Makes a token with a server-generated client secret, answered once and stored only as
     * its SHA-256 hash. The name, payload and key are the client's ciphertext.
     */
    async createToken({ principal }: SmCaller, id: string, body: AccessTokenCreateBody) {
      const { account } = await writable(principal, id);
      const now = clock.now();
      let expireAt: string | null = null;
      if (body.expireAt) {
        const at = new Date(body.expireAt);
        if (at.getTime() <= now.getTime()) throw BadRequest.field('expireAt', PAST_EXPIRATION);
        expireAt = at.toISOString();
      }
      const clientSecret = generateClientSecret();
      const row: AccessTokenRow = {
        id: randomUUID(),
        service_account_id: account.id,
        name: body.name,
        client_secret_hash: hashClientSecret(clientSecret),
        scope: JSON.stringify([SECRETS_SCOPE]),
        encrypted_payload: body.encryptedPayload,
        key: body.key,
        expire_at: expireAt,
        creation_date: now.toISOString(),
        revision_date: now.toISOString(),
      };
      await insertAccessToken(db, row);
      return toAccessTokenCreation(row, clientSecret);
    },

    /** Deletes the listed tokens of this machine account; ids of other tokens are ignored. */
    async revokeTokens({ principal }: SmCaller, id: string, ids: readonly string[]) {
      const { account } = await writable(principal, id);
      await revokeAccessTokens(db, account.id, mergedIds(ids));
    },
  };
}

export type ServiceAccountService = ReturnType<typeof createServiceAccountService>;
