import type { Selectable } from 'kysely';
import type { OneTimeCodesTable, TwoFactorProvidersTable } from '../../db/schema.js';
import type { UserRow } from '../../platform/auth/users.repository.js';
import type { Executor } from '../../db/database.js';
import { twoFactorOn } from '../../platform/auth/two-factor-state.js';

export type ProviderRow = Selectable<TwoFactorProvidersTable>;
export type OneTimeCodeRow = Selectable<OneTimeCodesTable>;

export async function providersOf(db: Executor, userId: string): Promise<ProviderRow[]> {
  return db.selectFrom('two_factor_providers').selectAll().where('user_id', '=', userId).orderBy('type').execute();
}

export async function findProvider(db: Executor, userId: string, type: number): Promise<ProviderRow | undefined> {
  return db.selectFrom('two_factor_providers').selectAll().where('user_id', '=', userId).where('type', '=', type).executeTakeFirst();
}

/** Sets (or replaces) a provider; a replaced authenticator key starts its used-step record afresh. */
export async function upsertProvider(db: Executor, userId: string, type: number, metadata: object, now: string, lastUsedStep: number | null = null): Promise<void> {
  await db
    .insertInto('two_factor_providers')
    .values({ user_id: userId, type, enabled: true, metadata: JSON.stringify(metadata), last_used_step: lastUsedStep, creation_date: now, revision_date: now })
    .onConflict((oc) => oc.columns(['user_id', 'type']).doUpdateSet({ enabled: true, metadata: JSON.stringify(metadata), last_used_step: lastUsedStep, revision_date: now }))
    .execute();
}

export async function deleteProvider(db: Executor, userId: string, type: number): Promise<boolean> {
  const result = await db.deleteFrom('two_factor_providers').where('user_id', '=', userId).where('type', '=', type).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Deletes every provider of the user; answers how many there were. */
export async function deleteAllProviders(db: Executor, userId: string): Promise<number> {
  const result = await db.deleteFrom('two_factor_providers').where('user_id', '=', userId).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/**
 * Records that an authenticator time step logged in, if no later or equal step did: a
 * conditional update, so two requests racing with one code cannot both win.
 */
export async function claimTimeStep(db: Executor, userId: string, step: number): Promise<boolean> {
  const result = await db
    .updateTable('two_factor_providers')
    .set({ last_used_step: step })
    .where('user_id', '=', userId)
    .where('type', '=', 0)
    .where((eb) => eb.or([eb('last_used_step', 'is', null), eb('last_used_step', '<', step)]))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function recoveryHashOf(db: Executor, userId: string): Promise<string | undefined> {
  return (await db.selectFrom('two_factor_recovery').select('code_hash').where('user_id', '=', userId).executeTakeFirst())?.code_hash;
}

export async function setRecoveryHash(db: Executor, userId: string, codeHash: string, now: string): Promise<void> {
  await db
    .insertInto('two_factor_recovery')
    .values({ user_id: userId, code_hash: codeHash, creation_date: now })
    .onConflict((oc) => oc.column('user_id').doUpdateSet({ code_hash: codeHash, creation_date: now }))
    .execute();
}

/** Forgets the recovery code, whatever it was. */
export async function deleteRecovery(db: Executor, userId: string): Promise<void> {
  await db.deleteFrom('two_factor_recovery').where('user_id', '=', userId).execute();
}

/** Takes the recovery code: only one of several racing uses deletes the row. */
export async function takeRecovery(db: Executor, userId: string, codeHash: string): Promise<boolean> {
  const result = await db.deleteFrom('two_factor_recovery').where('user_id', '=', userId).where('code_hash', '=', codeHash).executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

export async function putCode(db: Executor, row: Omit<OneTimeCodeRow, 'attempts'>): Promise<void> {
  await db
    .insertInto('one_time_codes')
    .values({ ...row, attempts: 0 })
    .onConflict((oc) =>
      oc.columns(['user_id', 'purpose']).doUpdateSet({ code_hash: row.code_hash, target: row.target, attempts: 0, expiration_date: row.expiration_date, creation_date: row.creation_date }),
    )
    .execute();
}

export async function findCode(db: Executor, userId: string, purpose: string): Promise<OneTimeCodeRow | undefined> {
  return db.selectFrom('one_time_codes').selectAll().where('user_id', '=', userId).where('purpose', '=', purpose).executeTakeFirst();
}

export async function insertRememberToken(
  db: Executor,
  row: { token_hash: string; user_id: string; device_id: string; security_stamp: string; expiration_date: string; creation_date: string },
): Promise<void> {
  await db.insertInto('two_factor_remember_tokens').values(row).execute();
}

/** A remember token that is the user's, for this device, under the current stamp and not expired. */
export async function validRememberToken(db: Executor, tokenHash: string, userId: string, deviceId: string, stamp: string, now: string): Promise<boolean> {
  const row = await db
    .selectFrom('two_factor_remember_tokens')
    .select('token_hash')
    .where('token_hash', '=', tokenHash)
    .where('user_id', '=', userId)
    .where('device_id', '=', deviceId)
    .where('security_stamp', '=', stamp)
    .where('expiration_date', '>', now)
    .executeTakeFirst();
  return Boolean(row);
}

export async function deleteRememberTokens(db: Executor, userId: string): Promise<void> {
  await db.deleteFrom('two_factor_remember_tokens').where('user_id', '=', userId).execute();
}

/** The user, with whether any provider is on: one query, for sync's profile. */
export async function findUserWithTwoFactor(db: Executor, id: string): Promise<(UserRow & { two_factor_enabled: boolean }) | undefined> {
  const row = await db
    .selectFrom('users')
    .selectAll('users')
    .select(twoFactorOn().as('two_factor_enabled'))
    .where('users.id', '=', id)
    .executeTakeFirst();
  return row ? { ...row, two_factor_enabled: Boolean(row.two_factor_enabled) } : undefined;
}

/** Replaces a provider's metadata (a WebAuthn key's sign counter after a login). */
export async function setProviderMetadata(db: Executor, userId: string, type: number, metadata: object, now: string): Promise<void> {
  await db.updateTable('two_factor_providers').set({ metadata: JSON.stringify(metadata), revision_date: now }).where('user_id', '=', userId).where('type', '=', type).execute();
}
