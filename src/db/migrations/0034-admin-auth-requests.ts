import type { Kysely } from 'kysely';

/**
 * Device approvals by organization admins (#42, trusted device encryption): a member who logged
 * in through SSO on a new device asks the admins of an organization they are enrolled in account
 * recovery with (AuthRequestType 2, AdminApproval). Such a request names that organization; the
 * admins list its pending requests by it. Requests go with their organization.
 */
export function adminAuthRequests() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('auth_requests').addColumn('organization_id', 'text', (c) => c.references('organizations.id').onDelete('cascade')).execute();
      await db.schema.createIndex('auth_requests_organization_created').on('auth_requests').columns(['organization_id', 'creation_date']).execute();
    },
  };
}
