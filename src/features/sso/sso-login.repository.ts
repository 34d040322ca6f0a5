import { createHash } from 'node:crypto';
import type { Insertable, Selectable } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { SsoCodesTable, SsoFlowsTable } from '../../db/schema/sso.js';

export type SsoFlowRow = Selectable<SsoFlowsTable>;
export type SsoCodeRow = Selectable<SsoCodesTable>;

/** States and codes are kept only as hashes: a copy of the database cannot finish a login. */
export function digest(secret: string): string {
  return createHash('sha256').update(secret).digest('base64url');
}

export async function insertFlow(db: Executor, flow: Insertable<SsoFlowsTable>): Promise<void> {
  await db.insertInto('sso_flows').values(flow).execute();
}

export async function findFlow(db: Executor, stateHash: string): Promise<SsoFlowRow | undefined> {
  return db.selectFrom('sso_flows').selectAll().where('state_hash', '=', stateHash).executeTakeFirst();
}

/** Marks a flow used; false when another request used it first. */
export async function spendFlow(db: Executor, stateHash: string): Promise<boolean> {
  const result = await db.updateTable('sso_flows').set({ used: true }).where('state_hash', '=', stateHash).where('used', '=', false).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function insertCode(db: Executor, code: Insertable<SsoCodesTable>): Promise<void> {
  await db.insertInto('sso_codes').values(code).execute();
}

export async function findCode(db: Executor, codeHash: string): Promise<SsoCodeRow | undefined> {
  return db.selectFrom('sso_codes').selectAll().where('code_hash', '=', codeHash).executeTakeFirst();
}

/** Marks a code used; false when another request used it first. */
export async function spendCode(db: Executor, codeHash: string): Promise<boolean> {
  const result = await db.updateTable('sso_codes').set({ used: true }).where('code_hash', '=', codeHash).where('used', '=', false).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Drops flows and codes a day past their expiry (kept that long so a late replay is named as one). */
export async function purgeExpired(db: Executor, before: string): Promise<void> {
  await db.deleteFrom('sso_flows').where('expiration_date', '<', before).execute();
  await db.deleteFrom('sso_codes').where('expiration_date', '<', before).execute();
}

export async function findSsoLink(db: Executor, organizationId: string, externalId: string): Promise<{ id: string; user_id: string } | undefined> {
  return db.selectFrom('sso_users').select(['id', 'user_id']).where('organization_id', '=', organizationId).where('external_id', '=', externalId).executeTakeFirst();
}
