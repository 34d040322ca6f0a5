/**
 * The permission matrix: every kind of caller against every administrative operation of an
 * organization, and every collection access level against what a member may do with an item
 * and its collection. The expected outcomes are written out below, by hand, as allow-lists;
 * nothing here asks the server's own role table, so a change in that table shows up as a
 * failing row naming the operation and the callers whose outcome moved.
 *
 * Each call gets a fresh target (a member, group, collection, item or organization of its
 * own), so no outcome depends on the order of the rows. A refused call must also leave its
 * target untouched, and an allowed one must have changed it: where that is cheap to see,
 * the outcome carries a note when it is not so.
 */
import { createECDH, randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_DEVICE } from './support/accounts.js';
import { actor, custom, ENC, seedCollection, seedGroup, seedTarget, seedUser, type Actor } from './support/admin.js';
import { generateSymmetricKey } from './support/bw-crypto.js';
import { seedOrgItem, seedPersonalItem } from './support/org-items.js';
import { seedMembership, seedOrganization } from './support/orgs.js';
import { machineAccountToken, orgApiToken } from './support/public-api.js';
import { startTestServer, type TestResponse, type TestServer } from './support/test-server.js';
import { cipherBody } from './support/vault.js';
import { SoftAuthenticator } from './support/soft-authenticator.js';
import { OrganizationUserStatusType as Status, OrganizationUserType as Role, PERMISSION_FLAGS, type PermissionFlag } from '../src/platform/access/roles.js';

// Logging in some thirty accounts derives as many master keys; a busy machine needs the room.
const SETUP_TIMEOUT = 240_000;
const CLIENT = { 'bitwarden-client-version': '2026.9.0' };
const OTHER_NAME = ENC.replace('2.A', '2.B');
const KEY = '4.a2V5';
const itemKey = generateSymmetricKey();

/** An outcome: the status, or for a few reads a word for what the caller was shown. */
type Outcome = number | string;

// ---------------------------------------------------------------------------------------
// Callers of the administrative matrix
// ---------------------------------------------------------------------------------------

/** Confirmed members: the four roles, a custom role without flags and one per flag. */
const MEMBERS = ['owner', 'admin', 'user', 'manager', 'custom', ...PERMISSION_FLAGS] as const;
/**
 * Callers who are not confirmed members: an invited, an accepted and a revoked owner (an owner,
 * so that status is seen to beat even the strongest role), and the owner of another organization.
 */
const OUTSIDERS = ['invited', 'accepted', 'revoked', 'stranger'] as const;
const CALLERS = [...MEMBERS, ...OUTSIDERS] as const;
type Member = (typeof MEMBERS)[number];
type Caller = (typeof CALLERS)[number];

const ROLE_OF: Record<Exclude<Caller, 'stranger'>, Parameters<typeof actor>[3]> = {
  owner: { type: Role.Owner },
  admin: { type: Role.Admin },
  user: { type: Role.User },
  manager: { type: Role.Manager },
  custom: { type: Role.Custom, permissions: {} },
  ...(Object.fromEntries(PERMISSION_FLAGS.map((flag) => [flag, custom(flag)])) as Record<PermissionFlag, ReturnType<typeof custom>>),
  invited: { type: Role.Owner, status: Status.Invited },
  accepted: { type: Role.Owner, status: Status.Accepted },
  revoked: { type: Role.Owner, status: Status.Revoked },
};

// ---------------------------------------------------------------------------------------
// Members of the collection access matrix: one per access level, each a plain User
// ---------------------------------------------------------------------------------------

interface Grant {
  readOnly?: boolean;
  hidePasswords?: boolean;
  manage?: boolean;
}

/**
 * How a profile reaches the collection `c1` that holds the item: a direct grant, a grant to a
 * group the member belongs to, or both; `second` places the item in a second collection too.
 */
interface Placement {
  direct?: Grant;
  group?: Grant;
  second?: Grant;
}

const PLACEMENTS = {
  none: {},
  readOnly: { direct: { readOnly: true } },
  readOnlyHidden: { direct: { readOnly: true, hidePasswords: true } },
  hidePasswords: { direct: { hidePasswords: true } },
  edit: { direct: {} },
  manage: { direct: { manage: true } },
  groupReadOnly: { group: { readOnly: true } },
  groupManage: { group: { manage: true } },
  /** Read-only with hidden passwords directly, plain edit through a group: the group's edit and sight win. */
  mixedEdit: { direct: { readOnly: true, hidePasswords: true }, group: {} },
  /** Read-only directly, manage through a group: manage wins. */
  mixedManage: { direct: { readOnly: true }, group: { manage: true } },
  /** The item in a read-only collection and in one with hidden passwords: edit from one, sight from the other. */
  twoCollections: { direct: { readOnly: true }, second: { hidePasswords: true } },
  /** The Manager role manages every collection it is assigned to, here read-only. */
  managerRole: { direct: { readOnly: true } },
  /** Callers from the administrative matrix: an admin without assignments, and outsiders holding manage. */
  admin: {},
  invited: { direct: { manage: true } },
  accepted: { direct: { manage: true } },
  revoked: { direct: { manage: true } },
  stranger: {},
} satisfies Record<string, Placement>;
type Profile = keyof typeof PLACEMENTS;
const PROFILES = Object.keys(PLACEMENTS) as Profile[];
/** Profiles with an account of their own (the rest are callers of the administrative matrix). */
const OWN_ACCOUNTS = ['none', 'readOnly', 'readOnlyHidden', 'hidePasswords', 'edit', 'manage', 'groupReadOnly', 'groupManage', 'mixedEdit', 'mixedManage', 'twoCollections', 'managerRole'] as const;

// ---------------------------------------------------------------------------------------
// The server, the organization and its callers, built once
// ---------------------------------------------------------------------------------------

let server: TestServer;
let org: string;
let otherOrg: string;
const actors = {} as Record<Caller | (typeof OWN_ACCOUNTS)[number], Actor>;
const groupOf = {} as Partial<Record<Profile, string>>;
/** A collection and a member that access lists may name. */
let spareCollection: string;
let bystander: string;

const db = () => server.database.db;
let serial = 0;
const unique = (prefix: string) => `${prefix}-${++serial}`;

beforeAll(async () => {
  // Cloud: storage and license download are cloud-only, and belong in the matrix.
  server = await startTestServer({ env: { DEPLOYMENT: 'cloud' } });
  org = await seedOrganization(server, { name: 'Matrix' });
  otherOrg = await seedOrganization(server, { name: 'Elsewhere' });
  for (const [name, role] of Object.entries(ROLE_OF)) actors[name as Caller] = await actor(server, org, `${name}@example.com`, role);
  actors.stranger = await actor(server, otherOrg, 'stranger@example.com', { type: Role.Owner });
  for (const name of OWN_ACCOUNTS) {
    actors[name] = await actor(server, org, `vault-${name}@example.com`, { type: name === 'managerRole' ? Role.Manager : Role.User });
  }
  for (const profile of PROFILES) {
    if ((PLACEMENTS[profile] as Placement).group) groupOf[profile] = await seedGroup(server, org, [actors[profile].memberId]);
  }
  spareCollection = await seedCollection(server, org);
  bystander = await seedTarget(server, org);
}, SETUP_TIMEOUT);
// Closing drops the test's database schema, which on a busy PostgreSQL can take a while.
afterAll(async () => server?.close(), SETUP_TIMEOUT);

// ---------------------------------------------------------------------------------------
// Running one call
// ---------------------------------------------------------------------------------------

interface Call {
  method: string;
  /** Under /api. */
  path: string;
  json?: unknown;
  /** What the caller was shown; the status by default. */
  outcome?: (res: TestResponse) => Outcome | Promise<Outcome>;
  /** Whether the call changed its target. */
  written?: () => Promise<boolean>;
  cleanup?: () => Promise<void>;
}

async function run(who: Caller | Profile, call: Call): Promise<Outcome> {
  const res = await server.request(call.method, `/api${call.path}`, {
    token: actors[who].token,
    headers: CLIENT,
    ...(call.json === undefined ? {} : { json: call.json }),
  });
  let outcome: Outcome = res.status >= 500 ? `${res.status} ${res.text}` : call.outcome ? await call.outcome(res) : res.status;
  if (call.written) {
    const written = await call.written();
    const succeeded = res.status >= 200 && res.status < 300;
    if (written !== succeeded) outcome = `${outcome} (${written ? 'changed although refused' : 'changed nothing'})`;
  }
  await call.cleanup?.();
  return outcome;
}

/** A bulk result of one id: `200` when it went through, else the status with the error. */
const bulkOutcome = (res: TestResponse): Outcome => {
  const error = (res.body?.data as { error: string }[] | undefined)?.[0]?.error;
  return res.status === 200 && error ? `200 (${error})` : res.status;
};

const exists = async (table: 'collections' | 'groups' | 'organizations' | 'organization_users' | 'ciphers', id: string) =>
  Boolean(await db().selectFrom(table).select('id').where('id', '=', id).executeTakeFirst());
const memberStatus = async (id: string) => (await db().selectFrom('organization_users').select('status').where('id', '=', id).executeTakeFirst())?.status;

const integrationOf = async (type: number) =>
  db().selectFrom('organization_integrations').select(['id', 'configuration']).where('organization_id', '=', org).where('type', '=', type).executeTakeFirst();

/** The organization's integration of this type, made afresh (Slack: an incoming webhook; HEC and Datadog: full settings). */
async function freshIntegration(type: number): Promise<string> {
  await db().deleteFrom('organization_integrations').where('organization_id', '=', org).where('type', '=', type).execute();
  const id = randomUUID();
  const now = new Date().toISOString();
  const configuration = JSON.stringify({ Uri: 'https://receiver.example.com/in', Scheme: 'Splunk', Token: 't', ApiKey: 'k' });
  await db().insertInto('organization_integrations').values({ id, organization_id: org, type, configuration, signing_secret: 's', creation_date: now, revision_date: now }).execute();
  return id;
}

/** A Slack integration of the organization with one configuration, made afresh. */
async function freshConfiguration(): Promise<{ integration: string; configuration: string }> {
  const integration = await freshIntegration(3);
  const configuration = randomUUID();
  const now = new Date().toISOString();
  await db()
    .insertInto('organization_integration_configurations')
    .values({ id: configuration, organization_integration_id: integration, event_type: null, configuration: null, filters: null, template: '#Type#', creation_date: now, revision_date: now })
    .execute();
  return { integration, configuration };
}

/** A delivery of that configuration that failed every retry. */
async function freshDeadLetter(): Promise<string> {
  const { integration, configuration } = await freshConfiguration();
  const id = randomUUID();
  await db()
    .insertInto('integration_dead_letters')
    .values({ id, organization_id: org, integration_id: integration, configuration_id: configuration, integration_type: 3, message_id: randomUUID(), event_type: 1000, body: '{}', attempts: 3, last_error: 'refused', creation_date: new Date().toISOString() })
    .execute();
  return id;
}

/** A fresh organization where the caller holds a copy of their membership (none for the stranger), and a second owner. */
async function throwawayOrg(who: Caller): Promise<string> {
  const id = await seedOrganization(server, { name: 'Throwaway' });
  await seedMembership(server, { organizationId: id, email: `${unique('owner')}@example.com`, type: Role.Owner });
  const row = await db()
    .selectFrom('organization_users')
    .select(['type', 'status', 'permissions'])
    .where('organization_id', '=', org)
    .where('user_id', '=', actors[who].userId)
    .executeTakeFirst();
  if (row) {
    const copy = await seedMembership(server, { organizationId: id, userId: actors[who].userId, type: row.type, status: row.status, key: '4.aGVsbG8=' });
    await db().updateTable('organization_users').set({ permissions: row.permissions }).where('id', '=', copy).execute();
  }
  return id;
}

async function setOrg(changes: { limit_collection_creation?: boolean; limit_item_deletion?: boolean; allow_admin_access_to_all_collection_items?: boolean }): Promise<void> {
  await db().updateTable('organizations').set(changes).where('id', '=', org).execute();
}

// ---------------------------------------------------------------------------------------
// Expectations
// ---------------------------------------------------------------------------------------

interface Expectation {
  /** The confirmed members the server lets through ('members': all of them). */
  allow: readonly Member[] | 'members';
  /** What an allowed member gets; 200 unless told. */
  ok?: Outcome;
  /** What a confirmed member who is not allowed gets; 403 unless told. */
  refuse?: Outcome;
  /** Members not allowed who get 404 instead: the target does not exist for them ('rest': all not allowed). */
  hidden?: readonly Member[] | 'rest';
  /** What the outsiders get; 404 unless told (a caller who is no confirmed member sees no organization). */
  outsiders?: Outcome | Partial<Record<(typeof OUTSIDERS)[number], Outcome>>;
  /** Members whose outcome is neither of the above. */
  except?: Partial<Record<Member, Outcome>>;
}

function expected(e: Expectation, who: Caller): Outcome {
  if ((OUTSIDERS as readonly string[]).includes(who)) {
    if (typeof e.outsiders === 'object') return e.outsiders[who as (typeof OUTSIDERS)[number]] ?? 404;
    return e.outsiders ?? 404;
  }
  const member = who as Member;
  const special = e.except?.[member];
  if (special !== undefined) return special;
  if (e.allow === 'members' || e.allow.includes(member)) return e.ok ?? 200;
  if (e.hidden === 'rest' || e.hidden?.includes(member)) return 404;
  return e.refuse ?? 403;
}

// Allow-lists used by several rows. Owners and admins hold every custom permission.
const OWNER = ['owner'] as const;
const ADMINS = ['owner', 'admin'] as const;
const USERS_ADMINS = [...ADMINS, 'manageUsers'] as const;
const GROUP_ADMINS = [...ADMINS, 'manageGroups'] as const;
const POLICY_ADMINS = [...ADMINS, 'managePolicies'] as const;
const RECOVERY_ADMINS = [...ADMINS, 'manageResetPassword'] as const;
const SSO_ADMINS = [...ADMINS, 'manageSso'] as const;
/** Sees every collection of the organization (the official ReadAll). */
const READ_ALL = [...ADMINS, 'accessImportExport', 'editAnyCollection', 'deleteAnyCollection', 'manageGroups'] as const;
/** Sees every collection with its access lists (the official ReadAllWithAccess). */
const READ_ALL_WITH_ACCESS = [...ADMINS, 'editAnyCollection', 'deleteAnyCollection', 'manageUsers', 'manageGroups'] as const;
/** Members who see an unassigned collection at all; everyone else gets 404 for it. */
const SEE_UNASSIGNED = [...ADMINS, 'accessImportExport', 'editAnyCollection', 'deleteAnyCollection', 'manageGroups', 'manageUsers'] as const;
/** Edit any item as an organization admin (the official CanEditCipherAsAdmin, and EditAnyCollection). */
const ATTACHMENT_ADMINS = [...ADMINS, 'editAnyCollection'] as const;
/** The other members: an unassigned collection, and anything in it, does not exist for them. */
const BLIND = MEMBERS.filter((m) => !(SEE_UNASSIGNED as readonly Member[]).includes(m));

// ---------------------------------------------------------------------------------------
// Administrative operations
// ---------------------------------------------------------------------------------------

type Row = [name: string, call: (who: Caller) => Promise<Call>, expectation: Expectation, around?: { before(): Promise<void>; after(): Promise<void> }];

const base = () => `/organizations/${org}`;
const secret = (who: Caller) => actors[who].account.masterPasswordHash;
/** A browser's Web Push subscription, as the extension sends it. */
const webPushSubscription = () => ({
  endpoint: `https://push.example.com/send/${randomUUID()}`,
  p256dh: createECDH('prime256v1').generateKeys().toString('base64url'),
  auth: randomBytes(16).toString('base64url'),
});

/** The Account recovery administration policy (8) on for a row: recovery and enrollment need it. */
const recoveryPolicy = {
  async before() {
    const now = new Date().toISOString();
    await db().insertInto('policies').values({ id: randomUUID(), organization_id: org, type: 8, enabled: true, data: null, creation_date: now, revision_date: now }).execute();
  },
  async after() {
    await db().deleteFrom('policies').where('organization_id', '=', org).where('type', '=', 8).execute();
  },
};

const ORGANIZATION_ROWS: Row[] = [
  [
    'GET /organizations/{id} (billing details shown)',
    async () => ({ method: 'GET', path: base(), outcome: (res) => (res.status === 200 ? (res.body.billingEmail ? 'billing' : 'no billing') : res.status) }),
    // Every member reads it, without billing details. (The official server answers owners only, 404 otherwise.)
    { allow: ADMINS, ok: 'billing', refuse: 'no billing' },
  ],
  [
    'PUT /organizations/{id} (name)',
    async (who) => {
      const name = unique(`Renamed by ${who}`);
      return { method: 'PUT', path: base(), json: { name }, written: async () => (await org_()).name === name };
    },
    // Admins hold manageOrganization here. (The official server lets owners only rename.)
    { allow: ADMINS },
  ],
  [
    'PUT /organizations/{id} (billing email)',
    async (who) => {
      const billingEmail = `${unique(who)}@billing.example.com`.toLowerCase();
      return { method: 'PUT', path: base(), json: { name: (await org_()).name, billingEmail }, written: async () => (await org_()).billing_email === billingEmail };
    },
    { allow: OWNER },
  ],
  [
    'PUT /organizations/{id}/collection-management (the settings it has)',
    async () => {
      // The same values again, so later rows see the settings they expect; the write shows in revision_date.
      const before = await org_();
      const json = {
        limitCollectionCreation: Boolean(before.limit_collection_creation),
        limitCollectionDeletion: Boolean(before.limit_collection_deletion),
        limitItemDeletion: Boolean(before.limit_item_deletion),
        allowAdminAccessToAllCollectionItems: Boolean(before.allow_admin_access_to_all_collection_items),
      };
      return { method: 'PUT', path: `${base()}/collection-management`, json, written: async () => (await org_()).revision_date !== before.revision_date };
    },
    { allow: OWNER, hidden: 'rest' },
  ],
  ['GET /organizations/{id}/events', async () => ({ method: 'GET', path: `${base()}/events` }), { allow: [...ADMINS, 'accessEventLogs'] }],
  [
    'POST /organizations/{id}/api-key',
    async (who) => ({ method: 'POST', path: `${base()}/api-key`, json: { masterPasswordHash: secret(who) } }),
    { allow: OWNER },
  ],
  [
    'POST /organizations/{id}/rotate-api-key',
    async (who) => {
      const before = await apiKey();
      return { method: 'POST', path: `${base()}/rotate-api-key`, json: { masterPasswordHash: secret(who) }, written: async () => (await apiKey()) !== before };
    },
    { allow: OWNER },
  ],
  // Integrations: owners only; everyone else is shown no organization (404), as on the official server.
  ['GET /organizations/{id}/integrations', async () => ({ method: 'GET', path: `${base()}/integrations` }), { allow: OWNER, hidden: 'rest' }],
  [
    'POST /organizations/{id}/integrations',
    async () => {
      await db().deleteFrom('organization_integrations').where('organization_id', '=', org).where('type', '=', 4).execute();
      return { method: 'POST', path: `${base()}/integrations`, json: { type: 4, configuration: null }, written: async () => (await integrationOf(4)) !== undefined };
    },
    { allow: OWNER, hidden: 'rest' },
  ],
  [
    'PUT /organizations/{id}/integrations/{integrationId}',
    async (who) => {
      const id = await freshIntegration(5);
      const configuration = JSON.stringify({ Uri: `https://${unique(who).toLowerCase()}.example.com`, Scheme: 'Splunk', Token: 't' });
      return { method: 'PUT', path: `${base()}/integrations/${id}`, json: { type: 5, configuration }, written: async () => (await integrationOf(5))?.configuration === configuration };
    },
    { allow: OWNER, hidden: 'rest' },
  ],
  [
    'DELETE /organizations/{id}/integrations/{integrationId}',
    async () => {
      const id = await freshIntegration(6);
      return { method: 'DELETE', path: `${base()}/integrations/${id}`, outcome: (res) => (res.status === 204 ? 200 : res.status), written: async () => (await integrationOf(6)) === undefined };
    },
    { allow: OWNER, hidden: 'rest' },
  ],
  [
    'POST /organizations/{id}/integrations/{integrationId}/configurations',
    async () => {
      const id = await freshIntegration(3);
      const count = async () => (await db().selectFrom('organization_integration_configurations').select('id').where('organization_integration_id', '=', id).execute()).length;
      return { method: 'POST', path: `${base()}/integrations/${id}/configurations`, json: { configuration: null, template: '#Type#' }, written: async () => (await count()) === 1 };
    },
    { allow: OWNER, hidden: 'rest' },
  ],
  ['GET /organizations/{id}/integrations/dead-letters', async () => ({ method: 'GET', path: `${base()}/integrations/dead-letters` }), { allow: OWNER, hidden: 'rest' }],
  [
    'GET /organizations/{id}/integrations/{integrationId}/configurations',
    async () => ({ method: 'GET', path: `${base()}/integrations/${await freshIntegration(7)}/configurations` }),
    { allow: OWNER, hidden: 'rest' },
  ],
  [
    'PUT /organizations/{id}/integrations/{integrationId}/configurations/{configurationId}',
    async () => {
      const { integration, configuration } = await freshConfiguration();
      const template = async () => (await db().selectFrom('organization_integration_configurations').select('template').where('id', '=', configuration).executeTakeFirst())?.template;
      return { method: 'PUT', path: `${base()}/integrations/${integration}/configurations/${configuration}`, json: { configuration: null, template: '#Date#' }, written: async () => (await template()) === '#Date#' };
    },
    { allow: OWNER, hidden: 'rest' },
  ],
  [
    'DELETE /organizations/{id}/integrations/{integrationId}/configurations/{configurationId}',
    async () => {
      const { integration, configuration } = await freshConfiguration();
      const gone = async () => !(await db().selectFrom('organization_integration_configurations').select('id').where('id', '=', configuration).executeTakeFirst());
      return { method: 'DELETE', path: `${base()}/integrations/${integration}/configurations/${configuration}`, outcome: (res) => (res.status === 204 ? 200 : res.status), written: gone };
    },
    { allow: OWNER, hidden: 'rest' },
  ],
  [
    'POST /organizations/{id}/integrations/dead-letters/{deadLetterId}/replay',
    async () => {
      const letter = await freshDeadLetter();
      // An owner reaches the replay itself: 200, or 400 when this server runs no forwarding; others get 404.
      return { method: 'POST', path: `${base()}/integrations/dead-letters/${letter}/replay`, outcome: (res) => (res.status === 400 ? 200 : res.status) };
    },
    { allow: OWNER, hidden: 'rest' },
  ],
  [
    'POST /organizations/{id}/integrations/dead-letters/replay',
    async () => ({ method: 'POST', path: `${base()}/integrations/dead-letters/replay`, outcome: (res) => (res.status === 400 ? 200 : res.status) }),
    { allow: OWNER, hidden: 'rest' },
  ],
  [
    'POST /organizations/{id}/api-key (SCIM key)',
    async (who) => ({ method: 'POST', path: `${base()}/api-key`, json: { type: 2, masterPasswordHash: secret(who) } }),
    { allow: [...ADMINS, 'manageScim'] },
  ],
  [
    'POST /organizations/{id}/storage',
    async () => {
      const before = (await org_()).max_storage_gb;
      return { method: 'POST', path: `${base()}/storage`, json: { storageGbAdjustment: 1 }, written: async () => (await org_()).max_storage_gb !== before };
    },
    { allow: OWNER },
  ],
  [
    'GET /organizations/{id}/license',
    async () => ({ method: 'GET', path: `${base()}/license?installationId=${randomUUID()}` }),
    { allow: OWNER },
  ],
  [
    'DELETE /organizations/{id} (an organization of its own)',
    async (who) => {
      const id = await throwawayOrg(who);
      return { method: 'DELETE', path: `/organizations/${id}`, json: { secret: secret(who) }, written: async () => !(await exists('organizations', id)) };
    },
    { allow: OWNER },
  ],
  [
    'POST /organizations/{id}/leave (an organization of its own)',
    async (who) => {
      const id = await throwawayOrg(who);
      const mine = async () => db().selectFrom('organization_users').select('id').where('organization_id', '=', id).where('user_id', '=', actors[who].userId).executeTakeFirst();
      const had = Boolean(await mine());
      return { method: 'POST', path: `/organizations/${id}/leave`, written: async () => had && !(await mine()) };
    },
    { allow: 'members' },
  ],
  [
    'GET /organizations/{id}/auto-enroll-status',
    async () => ({ method: 'GET', path: `${base()}/auto-enroll-status` }),
    // Asked while joining: any membership answers, whatever its status.
    { allow: 'members', outsiders: { invited: 200, accepted: 200, revoked: 200 } },
  ],
  [
    'GET /ciphers/has-unassigned-ciphers (an item of the organization in no collection)',
    async () => {
      const item = await seedOrgItem(server, org);
      return {
        method: 'GET',
        path: '/ciphers/has-unassigned-ciphers',
        outcome: (res) => (res.status === 200 ? String(res.body) : res.status),
        cleanup: async () => void (await db().deleteFrom('ciphers').where('id', '=', item).execute()),
      };
    },
    // The banner is for owners and admins; everyone else is told false, as the official server does.
    { allow: ADMINS, ok: 'true', refuse: 'false', outsiders: 'false' },
  ],
  ['GET /organizations/{id}/keys', async () => ({ method: 'GET', path: `${base()}/keys` }), { allow: 'members', outsiders: 200 }],
  ['GET /organizations/{id}/public-key', async () => ({ method: 'GET', path: `${base()}/public-key` }), { allow: 'members', outsiders: 200 }],
  ['GET /organizations/{id}/billing/vnext/self-host/metadata', async () => ({ method: 'GET', path: `${base()}/billing/vnext/self-host/metadata` }), { allow: 'members' }],
  ['GET /organizations/{id}/billing/metadata', async () => ({ method: 'GET', path: `${base()}/billing/metadata` }), { allow: 'members' }],
  ['GET /organizations/{id}/billing/vnext/metadata', async () => ({ method: 'GET', path: `${base()}/billing/vnext/metadata` }), { allow: 'members' }],
  // Self-hosted only, and this server is cloud: every caller gets the variant refusal before any
  // organization rule. The owner-only rule is tested in src/features/organizations/self-hosted-licenses.test.ts.
  [
    'POST /organizations/licenses/self-hosted/{id}',
    async () => ({ method: 'POST', path: `/organizations/licenses/self-hosted/${org}`, json: { license: '{}' } }),
    { allow: 'members', ok: 400, outsiders: 400 },
  ],
  ['POST /organizations/licenses/self-hosted/{id}/sync', async () => ({ method: 'POST', path: `/organizations/licenses/self-hosted/${org}/sync` }), { allow: 'members', ok: 400, outsiders: 400 }],
  // The official OrganizationAdmin: owners and admins; every other member gets 404 too.
  ['GET /organizations/{id}/two-factor', async () => ({ method: 'GET', path: `${base()}/two-factor` }), { allow: ADMINS, hidden: 'rest' }],
  // Organization-wide Duo is not offered: policy managers are told so (400).
  ['POST /organizations/{id}/two-factor/get-duo', async (who) => ({ method: 'POST', path: `${base()}/two-factor/get-duo`, json: { masterPasswordHash: secret(who) } }), { allow: POLICY_ADMINS, ok: 400 }],
  ['PUT /organizations/{id}/two-factor/duo', async () => ({ method: 'PUT', path: `${base()}/two-factor/duo`, json: { clientId: 'DI', clientSecret: 's', host: 'api-x.duosecurity.com' } }), { allow: POLICY_ADMINS, ok: 400 }],
  ['DELETE /organizations/{id}/two-factor/duo', async () => ({ method: 'DELETE', path: `${base()}/two-factor/duo`, json: { userVerificationToken: 't' } }), { allow: POLICY_ADMINS, ok: 400 }],
  // The official ViewSubscription: owners only, the organization hidden from everyone else.
  ['GET /organizations/{id}/subscription', async () => ({ method: 'GET', path: `${base()}/subscription` }), { allow: OWNER, hidden: 'rest' }],
  // The cloud billing pages' reads (cloud only, as this server is): the official ManageOrganizationBilling
  // and ViewBillingHistory are owners only, the warnings any member.
  ['GET /organizations/{id}/billing/history', async () => ({ method: 'GET', path: `${base()}/billing/history` }), { allow: OWNER, hidden: 'rest' }],
  ['GET /organizations/{id}/billing', async () => ({ method: 'GET', path: `${base()}/billing` }), { allow: OWNER, hidden: 'rest' }],
  ['GET /organizations/{id}/billing/vnext/payment-method', async () => ({ method: 'GET', path: `${base()}/billing/vnext/payment-method` }), { allow: OWNER, hidden: 'rest' }],
  ['GET /organizations/{id}/billing/vnext/address', async () => ({ method: 'GET', path: `${base()}/billing/vnext/address` }), { allow: OWNER, hidden: 'rest' }],
  ['GET /organizations/{id}/billing/vnext/credit', async () => ({ method: 'GET', path: `${base()}/billing/vnext/credit` }), { allow: OWNER, hidden: 'rest' }],
  ['GET /organizations/{id}/billing/vnext/warnings', async () => ({ method: 'GET', path: `${base()}/billing/vnext/warnings` }), { allow: 'members' }],
  [
    'POST /organizations/{id}/keys',
    async (who) => {
      // A fresh organization without keys for every caller: the pair can be set only once.
      const id = await throwawayOrg(who);
      const hasKeys = async () => Boolean((await db().selectFrom('organizations').select('public_key').where('id', '=', id).executeTakeFirstOrThrow()).public_key);
      return { method: 'POST', path: `/organizations/${id}/keys`, json: { publicKey: 'cHVibGlj', encryptedPrivateKey: ENC }, written: hasKeys };
    },
    { allow: RECOVERY_ADMINS },
  ],
  [
    'DELETE /accounts/sso/{organizationId}',
    async () => ({ method: 'DELETE', path: `/accounts/sso/${org}` }),
    { allow: 'members', outsiders: { invited: 200, accepted: 200, revoked: 200 } },
  ],
];

const users = () => `${base()}/users`;

const MEMBER_ROWS: Row[] = [
  [
    'GET /organizations/{org}/users (a member listed)',
    async () => {
      const target = await seedTarget(server, org);
      return { method: 'GET', path: users(), outcome: listing(target) };
    },
    // Account-recovery managers see only the members enrolled in account recovery.
    { allow: USERS_ADMINS, ok: 'listed', except: { manageResetPassword: 'not listed' } },
  ],
  [
    'GET /organizations/{org}/users (a member enrolled in account recovery listed)',
    async () => {
      const target = await seedTarget(server, org);
      await db().updateTable('organization_users').set({ reset_password_key: '4.cmVzZXQ=' }).where('id', '=', target).execute();
      return { method: 'GET', path: users(), outcome: listing(target) };
    },
    { allow: [...RECOVERY_ADMINS, 'manageUsers'], ok: 'listed' },
  ],
  ['GET /organizations/{org}/users/mini-details', async () => ({ method: 'GET', path: `${users()}/mini-details` }), { allow: 'members' }],
  [
    'GET /organizations/{org}/users/{id}',
    async () => ({ method: 'GET', path: `${users()}/${await seedTarget(server, org)}?includeGroups=true` }),
    { allow: USERS_ADMINS },
  ],
  ['GET /organizations/{org}/users/{id}/groups', async () => ({ method: 'GET', path: `${users()}/${await seedTarget(server, org)}/groups` }), { allow: USERS_ADMINS }],
  [
    'PUT /organizations/{org}/users/{id}/groups',
    async () => {
      const [target, group] = [await seedTarget(server, org), await seedGroup(server, org)];
      return { method: 'PUT', path: `${users()}/${target}/groups`, json: { groupIds: [group] }, written: async () => inGroup(group, target) };
    },
    { allow: USERS_ADMINS },
  ],
  [
    'POST /organizations/{org}/users/invite',
    async (who) => {
      const email = `${unique(`invitee-${who}`)}@example.com`.toLowerCase();
      const invited = async () => Boolean(await db().selectFrom('organization_users').select('id').where('organization_id', '=', org).where('email', '=', email).executeTakeFirst());
      return { method: 'POST', path: `${users()}/invite`, json: { emails: [email], type: Role.User, collections: [], groups: [] }, written: invited };
    },
    { allow: USERS_ADMINS },
  ],
  [
    'POST /organizations/{org}/users/{id}/reinvite',
    async () => ({ method: 'POST', path: `${users()}/${await seedTarget(server, org, { status: Status.Invited })}/reinvite` }),
    { allow: USERS_ADMINS },
  ],
  [
    'POST /organizations/{org}/users/reinvite',
    async () => ({ method: 'POST', path: `${users()}/reinvite`, json: { ids: [await seedTarget(server, org, { status: Status.Invited })] }, outcome: bulkOutcome }),
    { allow: USERS_ADMINS },
  ],
  [
    'POST /organizations/{org}/users/{id}/confirm',
    async () => {
      const target = await seedTarget(server, org, { status: Status.Accepted });
      return { method: 'POST', path: `${users()}/${target}/confirm`, json: { key: KEY }, written: async () => (await memberStatus(target)) === Status.Confirmed };
    },
    { allow: USERS_ADMINS },
  ],
  [
    'POST /organizations/{org}/users/confirm',
    async () => {
      const target = await seedTarget(server, org, { status: Status.Accepted });
      return { method: 'POST', path: `${users()}/confirm`, json: { keys: [{ id: target, key: KEY }] }, outcome: bulkOutcome, written: async () => (await memberStatus(target)) === Status.Confirmed };
    },
    { allow: USERS_ADMINS },
  ],
  [
    'PUT /organizations/{org}/users/{id}',
    async () => {
      const target = await seedTarget(server, org);
      const assigned = async () =>
        Boolean(await db().selectFrom('collection_users').select('collection_id').where('organization_user_id', '=', target).where('collection_id', '=', spareCollection).executeTakeFirst());
      return {
        method: 'PUT',
        path: `${users()}/${target}`,
        json: { type: Role.User, accessAll: false, collections: [{ id: spareCollection, readOnly: true }], groups: [] },
        written: assigned,
      };
    },
    { allow: USERS_ADMINS },
  ],
  ...(['revoke', 'restore'] as const).flatMap((verb): Row[] => {
    const from = verb === 'revoke' ? Status.Confirmed : Status.Revoked;
    const to = verb === 'revoke' ? Status.Revoked : Status.Confirmed;
    return [
      [
        `PUT /organizations/{org}/users/{id}/${verb}`,
        async () => {
          const target = await seedTarget(server, org, { status: from });
          return { method: 'PUT', path: `${users()}/${target}/${verb}`, written: async () => (await memberStatus(target)) === to };
        },
        { allow: USERS_ADMINS },
      ],
      [
        `PUT /organizations/{org}/users/${verb}`,
        async () => {
          const target = await seedTarget(server, org, { status: from });
          return { method: 'PUT', path: `${users()}/${verb}`, json: { ids: [target] }, outcome: bulkOutcome, written: async () => (await memberStatus(target)) === to };
        },
        { allow: USERS_ADMINS },
      ],
    ];
  }),
  [
    'POST /organizations/{org}/import (the older private directory sync)',
    async (who) => {
      const externalId = unique(`directory-${who}`);
      const imported = async () => Boolean(await db().selectFrom('organization_users').select('id').where('organization_id', '=', org).where('external_id', '=', externalId).executeTakeFirst());
      return { method: 'POST', path: `${base()}/import`, json: { overwriteExisting: false, users: [{ email: `${externalId}@example.com`, externalId }], groups: [] }, written: imported };
    },
    // The official OrganizationAdmin: owners and admins; every other member gets 404 too.
    { allow: ADMINS, hidden: 'rest' },
  ],
  [
    'PUT /organizations/{org}/users/{id}/restore/vnext',
    async () => {
      const target = await seedTarget(server, org, { status: Status.Revoked });
      return { method: 'PUT', path: `${users()}/${target}/restore/vnext`, json: { defaultUserCollectionName: ENC }, written: async () => (await memberStatus(target)) === Status.Confirmed };
    },
    { allow: USERS_ADMINS },
  ],
  [
    'PUT /organizations/{org}/users/enable-secrets-manager',
    async () => {
      const target = await seedTarget(server, org);
      const granted = async () => Boolean((await db().selectFrom('organization_users').select('access_secrets_manager').where('id', '=', target).executeTakeFirst())?.access_secrets_manager);
      return { method: 'PUT', path: `${users()}/enable-secrets-manager`, json: { ids: [target] }, written: granted };
    },
    { allow: USERS_ADMINS },
  ],
  [
    'PUT /organizations/{org}/users/revoke-self (an organization of its own, with the data ownership policy on)',
    async (who) => {
      const id = await throwawayOrg(who);
      const now = new Date().toISOString();
      await db().insertInto('policies').values({ id: randomUUID(), organization_id: id, type: 5, enabled: true, data: null, creation_date: now, revision_date: now }).execute();
      const mine = async () => (await db().selectFrom('organization_users').select('status').where('organization_id', '=', id).where('user_id', '=', actors[who].userId).executeTakeFirst())?.status;
      const before = await mine();
      return { method: 'PUT', path: `/organizations/${id}/users/revoke-self`, written: async () => before !== Status.Revoked && (await mine()) === Status.Revoked };
    },
    // The policy exempts owners and admins, so they have nothing to decline (400).
    { allow: MEMBERS.filter((m) => !(ADMINS as readonly string[]).includes(m)), refuse: 400 },
  ],
  [
    'DELETE /organizations/{org}/users/{id}',
    async () => {
      const target = await seedTarget(server, org);
      return { method: 'DELETE', path: `${users()}/${target}`, written: async () => !(await exists('organization_users', target)) };
    },
    { allow: USERS_ADMINS },
  ],
  [
    'DELETE /organizations/{org}/users',
    async () => {
      const target = await seedTarget(server, org);
      return { method: 'DELETE', path: users(), json: { ids: [target] }, outcome: bulkOutcome, written: async () => !(await exists('organization_users', target)) };
    },
    { allow: USERS_ADMINS },
  ],
  [
    'GET /organizations/{org}/users/{id}/reset-password-details',
    async () => ({ method: 'GET', path: `${users()}/${await seedTarget(server, org)}/reset-password-details` }),
    { allow: RECOVERY_ADMINS },
  ],
  [
    'POST /organizations/{org}/users/account-recovery-details',
    async () => ({ method: 'POST', path: `${users()}/account-recovery-details`, json: { ids: [await seedTarget(server, org)] } }),
    { allow: RECOVERY_ADMINS },
  ],
  // An owner's escrowed key would let whoever reads it take over the owner's account: only owners read it, admins an admin's.
  [
    'GET /organizations/{org}/users/{id}/reset-password-details (an owner)',
    async () => ({ method: 'GET', path: `${users()}/${await seedTarget(server, org, { type: Role.Owner })}/reset-password-details` }),
    { allow: OWNER, except: { admin: 404, manageResetPassword: 404 } },
  ],
  [
    'GET /organizations/{org}/users/{id}/reset-password-details (an admin)',
    async () => ({ method: 'GET', path: `${users()}/${await seedTarget(server, org, { type: Role.Admin })}/reset-password-details` }),
    { allow: ADMINS, except: { manageResetPassword: 404 } },
  ],
  [
    'POST /organizations/{org}/users/account-recovery-details (an owner)',
    async () => ({
      method: 'POST',
      path: `${users()}/account-recovery-details`,
      json: { ids: [await seedTarget(server, org, { type: Role.Owner })] },
      outcome: (res) => (res.status === 200 ? ((res.body.data as unknown[]).length === 1 ? 'listed' : 'not listed') : res.status),
    }),
    { allow: OWNER, ok: 'listed', except: { admin: 'not listed', manageResetPassword: 'not listed' } },
  ],
  ...(
    [
      ['recover-account', Role.User, { allow: RECOVERY_ADMINS }],
      // Only an owner recovers an owner, and only an owner or admin an admin: the others who may recover get the official 400.
      ['recover-account', Role.Owner, { allow: OWNER, except: { admin: 400, manageResetPassword: 400 } }],
      ['recover-account', Role.Admin, { allow: ADMINS, except: { manageResetPassword: 400 } }],
      ['reset-password', Role.User, { allow: RECOVERY_ADMINS }],
      ['reset-password', Role.Owner, { allow: OWNER, except: { admin: 400, manageResetPassword: 400 } }],
      ['reset-password', Role.Admin, { allow: ADMINS, except: { manageResetPassword: 400 } }],
    ] as const
  ).map(
    ([route, type, expectation]): Row => [
      `PUT /organizations/{org}/users/{id}/${route} (an enrolled ${Role[type]})`,
      async () => {
        const target = await seedTarget(server, org, { type });
        await db().updateTable('organization_users').set({ reset_password_key: KEY }).where('id', '=', target).execute();
        const userId = (await db().selectFrom('organization_users').select('user_id').where('id', '=', target).executeTakeFirstOrThrow()).user_id ?? '';
        const reset = async () => Boolean((await db().selectFrom('users').select('force_password_reset').where('id', '=', userId).executeTakeFirst())?.force_password_reset);
        const json = { resetMasterPassword: true, newMasterPasswordHash: 'bmV3IGhhc2g=', key: ENC };
        return { method: 'PUT', path: `${users()}/${target}/${route}`, json, written: reset };
      },
      expectation,
      recoveryPolicy,
    ],
  ),
  [
    'PUT /organizations/{org}/users/{id}/recover-account (two-step login only, an enrolled User)',
    async () => {
      const target = await seedTarget(server, org);
      const row = await db().updateTable('organization_users').set({ reset_password_key: KEY }).where('id', '=', target).returning('user_id').executeTakeFirstOrThrow();
      const userId = row.user_id ?? '';
      const now = new Date().toISOString();
      await db().insertInto('two_factor_providers').values({ user_id: userId, type: 0, enabled: true, metadata: '{}', creation_date: now, revision_date: now, last_used_step: null }).execute();
      const turnedOff = async () => !(await db().selectFrom('two_factor_providers').select('type').where('user_id', '=', userId).executeTakeFirst());
      return { method: 'PUT', path: `${users()}/${target}/recover-account`, json: { resetTwoFactor: true }, written: turnedOff };
    },
    { allow: RECOVERY_ADMINS },
    recoveryPolicy,
  ],
  // Recovering one's own membership is no higher role: allowed, as on the official server. The caller's account is put back after.
  [
    "PUT /organizations/{org}/users/{id}/recover-account (the caller's own, enrolled)",
    async (who) => {
      const { memberId, userId } = actors[who];
      const saved = await db().selectFrom('users').select(['master_password_hash', 'key', 'security_stamp', 'force_password_reset']).where('id', '=', userId).executeTakeFirstOrThrow();
      const enrollment = (await db().selectFrom('organization_users').select('reset_password_key').where('id', '=', memberId).executeTakeFirstOrThrow()).reset_password_key;
      await db().updateTable('organization_users').set({ reset_password_key: KEY }).where('id', '=', memberId).execute();
      return {
        method: 'PUT',
        path: `${users()}/${memberId}/recover-account`,
        json: { resetMasterPassword: true, newMasterPasswordHash: 'bmV3IGhhc2g=', key: ENC },
        written: async () => (await db().selectFrom('users').select('master_password_hash').where('id', '=', userId).executeTakeFirstOrThrow()).master_password_hash !== saved.master_password_hash,
        cleanup: async () => {
          await db().updateTable('users').set(saved).where('id', '=', userId).execute();
          await db().updateTable('organization_users').set({ reset_password_key: enrollment }).where('id', '=', memberId).execute();
        },
      };
    },
    { allow: RECOVERY_ADMINS },
    recoveryPolicy,
  ],
  // A user route, on the caller's own account: anyone signed in whose password an admin set replaces it. The account is put back after.
  [
    'PUT /accounts/update-temp-password (the caller with a temporary password)',
    async (who) => {
      const { userId } = actors[who];
      const saved = await db().selectFrom('users').select(['master_password_hash', 'key', 'security_stamp', 'force_password_reset', 'master_password_hint']).where('id', '=', userId).executeTakeFirstOrThrow();
      await db().updateTable('users').set({ force_password_reset: true }).where('id', '=', userId).execute();
      return {
        method: 'PUT',
        path: '/accounts/update-temp-password',
        json: { newMasterPasswordHash: 'bmV3IGhhc2g=', key: ENC },
        written: async () => !(await db().selectFrom('users').select('force_password_reset').where('id', '=', userId).executeTakeFirstOrThrow()).force_password_reset,
        cleanup: async () => {
          await db().updateTable('users').set(saved).where('id', '=', userId).execute();
        },
      };
    },
    { allow: 'members', outsiders: 200 },
  ],
  // Web Push (docs/notifications.md): a subscription for the caller's own device only; organizations play no part.
  [
    'PUT /devices/identifier/{identifier}/web-push-auth (the caller\'s own device)',
    async (who) => {
      const device = async () => (await db().selectFrom('devices').select('id').where('user_id', '=', actors[who].userId).where('identifier', '=', TEST_DEVICE.deviceIdentifier).executeTakeFirstOrThrow()).id;
      const subscribed = async () => Boolean(await db().selectFrom('web_push_subscriptions').select('device_id').where('device_id', '=', await device()).executeTakeFirst());
      return {
        method: 'PUT',
        path: `/devices/identifier/${TEST_DEVICE.deviceIdentifier}/web-push-auth`,
        json: webPushSubscription(),
        written: subscribed,
        cleanup: async () => {
          await db().deleteFrom('web_push_subscriptions').where('device_id', '=', await device()).execute();
        },
      };
    },
    { allow: 'members', outsiders: 200 },
  ],
  // PUT, and the older POST the extension sent before 2026.
  ...(['PUT', 'POST'] as const).map((method): Row => [
    `${method} /devices/identifier/{identifier}/web-push-auth (another account's device)`,
    async () => {
      const identifier = randomUUID();
      const id = randomUUID();
      const now = new Date().toISOString();
      await db().insertInto('devices').values({ id, user_id: await seedUser(server), type: 2, identifier, name: 'chrome', push_token: null, creation_date: now, revision_date: now }).execute();
      const subscribed = async () => Boolean(await db().selectFrom('web_push_subscriptions').select('device_id').where('device_id', '=', id).executeTakeFirst());
      return { method, path: `/devices/identifier/${identifier}/web-push-auth`, json: webPushSubscription(), written: subscribed };
    },
    { allow: [], hidden: 'rest' },
  ]),
  [
    'PUT /organizations/{org}/users/{userId}/reset-password-enrollment (another member\'s)',
    async (who) => {
      const target = await seedTarget(server, org);
      const userId = (await db().selectFrom('organization_users').select('user_id').where('id', '=', target).executeTakeFirstOrThrow()).user_id ?? '';
      const enrolled = async () => (await db().selectFrom('organization_users').select('reset_password_key').where('id', '=', target).executeTakeFirst())?.reset_password_key !== null;
      return { method: 'PUT', path: `${users()}/${userId}/reset-password-enrollment`, json: { resetPasswordKey: KEY, masterPasswordHash: secret(who) }, written: enrolled };
    },
    // Members enroll only themselves: everyone, the organization's owner included, gets the official 400 "User not valid.".
    { allow: [], refuse: 400, outsiders: 400 },
    recoveryPolicy,
  ],
  // Device approvals by admins: those who may recover accounts answer them (the official ManageResetPassword; it answers 401 where these get 403).
  [
    'GET /organizations/{org}/auth-requests',
    async () => {
      const id = await seedAdminRequest();
      return { method: 'GET', path: authRequests(), outcome: (res) => (res.status === 200 ? ((res.body.data as { id: string }[]).some((r) => r.id === id) ? 'listed' : 'not listed') : res.status) };
    },
    { allow: RECOVERY_ADMINS, ok: 'listed' },
  ],
  [
    'POST /organizations/{org}/auth-requests/{id}',
    async () => {
      const id = await seedAdminRequest();
      return { method: 'POST', path: `${authRequests()}/${id}`, json: { requestApproved: true, encryptedUserKey: KEY }, written: () => adminRequestAnswered(id) };
    },
    { allow: RECOVERY_ADMINS },
  ],
  [
    'POST /organizations/{org}/auth-requests',
    async () => {
      const id = await seedAdminRequest();
      return { method: 'POST', path: authRequests(), json: [{ id, approved: false }], written: () => adminRequestAnswered(id) };
    },
    { allow: RECOVERY_ADMINS },
  ],
  [
    'POST /organizations/{org}/auth-requests/deny',
    async () => {
      const id = await seedAdminRequest();
      return { method: 'POST', path: `${authRequests()}/deny`, json: { ids: [id] }, written: () => adminRequestAnswered(id) };
    },
    { allow: RECOVERY_ADMINS },
  ],
  // Approving hands over the member's user key, as a recovery does: an owner's request is an owner's
  // to answer, an admin's an owner's or admin's. To the others it does not exist: 404 alone, skipped in a batch.
  ...(
    [
      [Role.Owner, OWNER, ['admin', 'manageResetPassword']],
      [Role.Admin, ADMINS, ['manageResetPassword']],
    ] as const
  ).flatMap(([type, allow, blind]): Row[] => {
    const whose = `(an ${Role[type]}'s request)`;
    const skipped = Object.fromEntries(blind.map((m) => [m, 'skipped']));
    const batch = async (res: TestResponse, id: string): Promise<Outcome> => (res.status !== 200 ? res.status : (await adminRequestAnswered(id)) ? 'answered' : 'skipped');
    return [
      [
        `GET /organizations/{org}/auth-requests ${whose}`,
        async () => {
          const id = await seedAdminRequest(type);
          return { method: 'GET', path: authRequests(), outcome: (res) => (res.status === 200 ? ((res.body.data as { id: string }[]).some((r) => r.id === id) ? 'listed' : 'not listed') : res.status) };
        },
        { allow, ok: 'listed', except: Object.fromEntries(blind.map((m) => [m, 'not listed'])) },
      ],
      [
        `POST /organizations/{org}/auth-requests/{id} ${whose}`,
        async () => {
          const id = await seedAdminRequest(type);
          return { method: 'POST', path: `${authRequests()}/${id}`, json: { requestApproved: true, encryptedUserKey: KEY }, written: () => adminRequestAnswered(id) };
        },
        { allow, except: Object.fromEntries(blind.map((m) => [m, 404])) },
      ],
      [
        `POST /organizations/{org}/auth-requests ${whose}`,
        async () => {
          const id = await seedAdminRequest(type);
          return { method: 'POST', path: authRequests(), json: [{ id, approved: true, key: KEY }], outcome: (res) => batch(res, id) };
        },
        { allow, ok: 'answered', except: skipped },
      ],
      [
        `POST /organizations/{org}/auth-requests/deny ${whose}`,
        async () => {
          const id = await seedAdminRequest(type);
          return { method: 'POST', path: `${authRequests()}/deny`, json: { ids: [id] }, outcome: (res) => batch(res, id) };
        },
        { allow, ok: 'answered', except: skipped },
      ],
    ];
  }),
];

const authRequests = () => `${base()}/auth-requests`;
/** A fresh member's (of role `type`) pending admin approval request to the organization. */
async function seedAdminRequest(type: Role = Role.User): Promise<string> {
  const target = await seedTarget(server, org, { type });
  const userId = (await db().selectFrom('organization_users').select('user_id').where('id', '=', target).executeTakeFirstOrThrow()).user_id ?? '';
  const id = randomUUID();
  await db()
    .insertInto('auth_requests')
    .values({ id, user_id: userId, organization_id: org, type: 2, request_device_identifier: randomUUID(), request_device_type: 9, access_code: 'code', public_key: 'cHVibGlj', creation_date: new Date().toISOString() })
    .execute();
  return id;
}
const adminRequestAnswered = async (id: string) => (await db().selectFrom('auth_requests').select('response_date').where('id', '=', id).executeTakeFirst())?.response_date != null;

const groups = () => `${base()}/groups`;
const inGroup = async (group: string, member: string) =>
  Boolean(await db().selectFrom('group_users').select('group_id').where('group_id', '=', group).where('organization_user_id', '=', member).executeTakeFirst());
const groupName = async (id: string) => (await db().selectFrom('groups').select('name').where('id', '=', id).executeTakeFirst())?.name;

/** Those who read the group list while collection creation is limited (see the group rows). */
const GROUP_READERS = [...ADMINS, 'manager', 'createNewCollections', 'editAnyCollection', 'deleteAnyCollection', 'editAssignedCollections', 'manageGroups', 'manageUsers', 'accessReports'] as const;

const GROUP_ROWS: Row[] = [
  // Anyone who may create a collection picks groups for its access, so with creation open every member reads the list.
  ['GET /organizations/{org}/groups', async () => ({ method: 'GET', path: groups() }), { allow: 'members' }],
  [
    'GET /organizations/{org}/groups (collection creation limited)',
    async () => ({ method: 'GET', path: groups() }),
    { allow: GROUP_READERS },
    { before: () => setOrg({ limit_collection_creation: true }), after: () => setOrg({ limit_collection_creation: false }) },
  ],
  ['GET /organizations/{org}/groups/details', async () => ({ method: 'GET', path: `${groups()}/details` }), { allow: [...ADMINS, 'manageGroups', 'manageUsers'] }],
  ['GET /organizations/{org}/groups/{id}', async () => ({ method: 'GET', path: `${groups()}/${await seedGroup(server, org)}` }), { allow: GROUP_ADMINS }],
  ['GET /organizations/{org}/groups/{id}/details', async () => ({ method: 'GET', path: `${groups()}/${await seedGroup(server, org)}/details` }), { allow: GROUP_ADMINS }],
  ['GET /organizations/{org}/groups/{id}/users', async () => ({ method: 'GET', path: `${groups()}/${await seedGroup(server, org)}/users` }), { allow: GROUP_ADMINS }],
  [
    'POST /organizations/{org}/groups',
    async (who) => {
      const name = unique(`Group by ${who}`);
      const made = async () => Boolean(await db().selectFrom('groups').select('id').where('organization_id', '=', org).where('name', '=', name).executeTakeFirst());
      return { method: 'POST', path: groups(), json: { name, collections: [], users: [] }, written: made };
    },
    { allow: GROUP_ADMINS },
  ],
  [
    'PUT /organizations/{org}/groups/{id}',
    async (who) => {
      const [id, name] = [await seedGroup(server, org), unique(`Renamed by ${who}`)];
      return { method: 'PUT', path: `${groups()}/${id}`, json: { name, collections: [], users: [] }, written: async () => (await groupName(id)) === name };
    },
    { allow: GROUP_ADMINS },
  ],
  [
    'PUT /organizations/{org}/groups/{id}/users',
    async () => {
      const [id, target] = [await seedGroup(server, org), await seedTarget(server, org)];
      return { method: 'PUT', path: `${groups()}/${id}/users`, json: [target], written: () => inGroup(id, target) };
    },
    { allow: GROUP_ADMINS },
  ],
  [
    'DELETE /organizations/{org}/groups/{id}/user/{orgUserId}',
    async () => {
      const target = await seedTarget(server, org);
      const id = await seedGroup(server, org, [target]);
      return { method: 'DELETE', path: `${groups()}/${id}/user/${target}`, written: async () => !(await inGroup(id, target)) };
    },
    { allow: GROUP_ADMINS },
  ],
  [
    'DELETE /organizations/{org}/groups/{id}',
    async () => {
      const id = await seedGroup(server, org);
      return { method: 'DELETE', path: `${groups()}/${id}`, written: async () => !(await exists('groups', id)) };
    },
    { allow: GROUP_ADMINS },
  ],
  [
    'DELETE /organizations/{org}/groups',
    async () => {
      const id = await seedGroup(server, org);
      return { method: 'DELETE', path: groups(), json: { ids: [id] }, written: async () => !(await exists('groups', id)) };
    },
    { allow: GROUP_ADMINS },
  ],
];

const collections = () => `${base()}/collections`;
/** Whether a list answer names the target: 'listed' or 'not listed' (or the refusal). */
const listing = (id: string) => (res: TestResponse): Outcome =>
  res.status === 200 ? ((res.body.data as { id: string }[]).some((x) => x.id === id) ? 'listed' : 'not listed') : res.status;
const collectionName = async (id: string) => (await db().selectFrom('collections').select('name').where('id', '=', id).executeTakeFirst())?.name;
const collectionUser = async (collection: string, member: string) =>
  Boolean(await db().selectFrom('collection_users').select('collection_id').where('collection_id', '=', collection).where('organization_user_id', '=', member).executeTakeFirst());

async function dropCollections(where: { externalId: string }): Promise<void> {
  const rows = await db().selectFrom('collections').select('id').where('organization_id', '=', org).where('external_id', '=', where.externalId).execute();
  for (const { id } of rows) {
    await db().deleteFrom('collection_users').where('collection_id', '=', id).execute();
    await db().deleteFrom('collection_groups').where('collection_id', '=', id).execute();
    await db().deleteFrom('collections').where('id', '=', id).execute();
  }
}

const createCollection = async (who: Caller): Promise<Call> => {
  const externalId = unique(`by-${who}`);
  const made = async () =>
    Boolean(await db().selectFrom('collections').select('id').where('organization_id', '=', org).where('external_id', '=', externalId).executeTakeFirst());
  // The creator is given manage access to what they made; take it away again so no later row sees it.
  return { method: 'POST', path: collections(), json: { name: ENC, externalId, groups: [], users: [] }, written: made, cleanup: () => dropCollections({ externalId }) };
};

/** Edits an unassigned collection: owners, admins and custom members who edit any collection adopt one nobody manages. */
const EDIT_UNASSIGNED = [...ADMINS, 'editAnyCollection'] as const;
const DELETE_UNASSIGNED = [...ADMINS, 'editAnyCollection', 'deleteAnyCollection'] as const;

const COLLECTION_ROWS: Row[] = [
  [
    'GET /organizations/{org}/collections (an unassigned collection listed)',
    async () => {
      const id = await seedCollection(server, org);
      return { method: 'GET', path: collections(), outcome: listing(id) };
    },
    // The others see only the collections they manage.
    { allow: READ_ALL, ok: 'listed', refuse: 'not listed' },
  ],
  [
    'GET /organizations/{org}/collections/details (an unassigned collection listed)',
    async () => {
      const id = await seedCollection(server, org);
      return { method: 'GET', path: `${collections()}/details`, outcome: listing(id) };
    },
    { allow: READ_ALL_WITH_ACCESS, ok: 'listed', refuse: 'not listed' },
  ],
  [
    'GET /organizations/{org}/collections/{id} (unassigned)',
    async () => ({ method: 'GET', path: `${collections()}/${await seedCollection(server, org)}` }),
    { allow: ['owner', 'admin', 'editAnyCollection', 'deleteAnyCollection'], hidden: BLIND },
  ],
  [
    'GET /organizations/{org}/collections/{id}/details (unassigned)',
    async () => ({ method: 'GET', path: `${collections()}/${await seedCollection(server, org)}/details` }),
    { allow: READ_ALL_WITH_ACCESS, hidden: BLIND },
  ],
  [
    'GET /organizations/{org}/collections/{id}/users (unassigned)',
    async () => ({ method: 'GET', path: `${collections()}/${await seedCollection(server, org)}/users` }),
    { allow: ['owner', 'admin', 'editAnyCollection', 'deleteAnyCollection'], hidden: BLIND },
  ],
  ['POST /organizations/{org}/collections', createCollection, { allow: 'members' }],
  [
    'POST /organizations/{org}/collections (creation limited)',
    createCollection,
    { allow: [...ADMINS, 'createNewCollections'] },
    { before: () => setOrg({ limit_collection_creation: true }), after: () => setOrg({ limit_collection_creation: false }) },
  ],
  [
    'PUT /organizations/{org}/collections/{id} (unassigned)',
    async () => {
      const id = await seedCollection(server, org);
      return { method: 'PUT', path: `${collections()}/${id}`, json: { name: OTHER_NAME }, written: async () => (await collectionName(id)) === OTHER_NAME };
    },
    { allow: EDIT_UNASSIGNED, hidden: BLIND },
  ],
  [
    'PUT /organizations/{org}/collections/{id}/users (unassigned)',
    async () => {
      const id = await seedCollection(server, org);
      return { method: 'PUT', path: `${collections()}/${id}/users`, json: [{ id: bystander, readOnly: true }], written: () => collectionUser(id, bystander) };
    },
    // Member managers give members access to any collection while admins reach every collection.
    { allow: [...EDIT_UNASSIGNED, 'manageUsers'], hidden: BLIND },
  ],
  [
    'POST /organizations/{org}/collections/bulk-access (unassigned)',
    async () => {
      const id = await seedCollection(server, org);
      return { method: 'POST', path: `${collections()}/bulk-access`, json: { collectionIds: [id], users: [{ id: bystander, readOnly: true }], groups: [] }, written: () => collectionUser(id, bystander) };
    },
    // The official server answers 404 to every caller it does not let through.
    { allow: EDIT_UNASSIGNED, refuse: 404 },
  ],
  [
    'DELETE /organizations/{org}/collections/{id} (unassigned)',
    async () => {
      const id = await seedCollection(server, org);
      return { method: 'DELETE', path: `${collections()}/${id}`, written: async () => !(await exists('collections', id)) };
    },
    { allow: DELETE_UNASSIGNED, hidden: BLIND },
  ],
  [
    'DELETE /organizations/{org}/collections (unassigned)',
    async () => {
      const id = await seedCollection(server, org);
      return { method: 'DELETE', path: collections(), json: { ids: [id] }, written: async () => !(await exists('collections', id)) };
    },
    { allow: DELETE_UNASSIGNED, hidden: BLIND },
  ],
];

const DISABLE_SEND = 6;
const MASTER_PASSWORD = 1;
const POLICY_ROWS: Row[] = [
  ['GET /organizations/{org}/policies', async () => ({ method: 'GET', path: `${base()}/policies` }), { allow: POLICY_ADMINS }],
  ['GET /organizations/{org}/policies/{type}', async () => ({ method: 'GET', path: `${base()}/policies/${DISABLE_SEND}` }), { allow: POLICY_ADMINS }],
  [
    'PUT /organizations/{org}/policies/{type}',
    async () => {
      await db().deleteFrom('policies').where('organization_id', '=', org).where('type', '=', DISABLE_SEND).execute();
      const enabled = async () =>
        Boolean((await db().selectFrom('policies').select('enabled').where('organization_id', '=', org).where('type', '=', DISABLE_SEND).executeTakeFirst())?.enabled);
      return { method: 'PUT', path: `${base()}/policies/${DISABLE_SEND}`, json: { enabled: true }, written: enabled };
    },
    { allow: POLICY_ADMINS },
  ],
  [
    'PUT /organizations/{org}/policies/{type}/vnext',
    async () => {
      await db().deleteFrom('policies').where('organization_id', '=', org).where('type', '=', DISABLE_SEND).execute();
      const enabled = async () =>
        Boolean((await db().selectFrom('policies').select('enabled').where('organization_id', '=', org).where('type', '=', DISABLE_SEND).executeTakeFirst())?.enabled);
      return { method: 'PUT', path: `${base()}/policies/${DISABLE_SEND}/vnext`, json: { policy: { enabled: true }, metadata: {} }, written: enabled };
    },
    { allow: POLICY_ADMINS },
  ],
  [
    'GET /organizations/{org}/policies/master-password (enabled)',
    async () => ({ method: 'GET', path: `${base()}/policies/master-password` }),
    // Read while joining: any membership of the caller's account answers, whatever its status.
    { allow: 'members', outsiders: { invited: 200, accepted: 200, revoked: 200 } },
    {
      before: async () => {
        const now = new Date().toISOString();
        await db().insertInto('policies').values({ id: randomUUID(), organization_id: org, type: MASTER_PASSWORD, enabled: true, data: JSON.stringify({ minLength: 12 }), creation_date: now, revision_date: now }).execute();
      },
      after: async () => void (await db().deleteFrom('policies').where('organization_id', '=', org).where('type', '=', MASTER_PASSWORD).execute()),
    },
  ],
];

const SSO_ROWS: Row[] = [
  ['GET /organizations/{org}/sso', async () => ({ method: 'GET', path: `${base()}/sso` }), { allow: SSO_ADMINS }],
  [
    'POST /organizations/{org}/sso',
    async () => {
      await db().deleteFrom('sso_configs').where('organization_id', '=', org).execute();
      const { identifier } = await db().selectFrom('organizations').select('identifier').where('id', '=', org).executeTakeFirstOrThrow();
      // A disabled configuration: saved without asking an identity provider.
      const json = { enabled: false, identifier, data: { configType: 1, memberDecryptionType: 0, authority: 'https://idp.example.com', clientId: 'strongroom', clientSecret: 'matrix-secret' } };
      return { method: 'POST', path: `${base()}/sso`, json, written: async () => Boolean(await db().selectFrom('sso_configs').select('organization_id').where('organization_id', '=', org).executeTakeFirst()) };
    },
    { allow: SSO_ADMINS },
  ],
];

const CIPHER_ADMIN_ROWS: Row[] = [
  [
    'GET /ciphers/{id}/admin (an item in an unassigned collection)',
    async () => ({ method: 'GET', path: `/ciphers/${await seedOrgItem(server, org, [await seedCollection(server, org)])}/admin` }),
    // The admin view of an item answers like an unknown id to everyone else.
    { allow: ['owner', 'admin', 'editAnyCollection', 'deleteAnyCollection'], hidden: 'rest' },
  ],
  [
    'GET /ciphers/organization-details',
    async () => ({ method: 'GET', path: `/ciphers/organization-details?organizationId=${org}` }),
    // Every item: for admins, exports (accessImportExport), reports (accessReports) and those who edit any collection.
    { allow: [...ADMINS, 'accessImportExport', 'accessReports', 'editAnyCollection'] },
  ],
  [
    'GET /organizations/{orgId}/export (the whole vault)',
    async () => ({
      method: 'GET',
      path: `${base()}/export`,
      // Other members get the collections they manage (404 when none, as for outsiders): which
      // ones depends on earlier rows, so both count as "not the whole vault" here; the
      // managed export is tested in src/features/vault/org-export.test.ts.
      outcome: async (res) => {
        const all = await db().selectFrom('collections').select('id').where('organization_id', '=', org).execute();
        if (res.status === 200 && (res.body.collections as unknown[]).length === all.length) return 'whole vault';
        return res.status === 200 || res.status === 404 ? 'not the whole vault' : res.status;
      },
    }),
    { allow: [...ADMINS, 'accessImportExport'], ok: 'whole vault', refuse: 'not the whole vault', outsiders: 'not the whole vault' },
  ],
  ['GET /ciphers/organization-details/assigned', async () => ({ method: 'GET', path: `/ciphers/organization-details/assigned?organizationId=${org}` }), { allow: 'members' }],
  // The admin console's attachment routes: the official "edit as admin" rule (CanEditCipherAsAdmin), 404 to everyone else.
  [
    'GET /ciphers/{id}/attachment/{attachmentId}/admin (an item in an unassigned collection)',
    async () => {
      const item = await seedOrgItem(server, org, [await seedCollection(server, org)]);
      return { method: 'GET', path: `/ciphers/${item}/attachment/${await seedAttachment(item, true)}/admin` };
    },
    { allow: ATTACHMENT_ADMINS, hidden: 'rest' },
  ],
  [
    'GET /ciphers/{id}/attachment/{attachmentId}/admin (admins not let at all items: an item in an unassigned collection)',
    async () => {
      const item = await seedOrgItem(server, org, [await seedCollection(server, org)]);
      return { method: 'GET', path: `/ciphers/${item}/attachment/${await seedAttachment(item, true)}/admin` };
    },
    // Owners and admins edit only what they are assigned; the custom flag still reaches every item.
    { allow: ['editAnyCollection'], hidden: 'rest' },
    { before: () => setOrg({ allow_admin_access_to_all_collection_items: false }), after: () => setOrg({ allow_admin_access_to_all_collection_items: true }) },
  ],
  [
    'GET /ciphers/{id}/attachment/{attachmentId}/admin (admins not let at all items: an item in no collection)',
    async () => {
      const item = await seedOrgItem(server, org);
      return { method: 'GET', path: `/ciphers/${item}/attachment/${await seedAttachment(item, true)}/admin` };
    },
    // Unassigned items stay open to owners and admins.
    { allow: ATTACHMENT_ADMINS, hidden: 'rest' },
    { before: () => setOrg({ allow_admin_access_to_all_collection_items: false }), after: () => setOrg({ allow_admin_access_to_all_collection_items: true }) },
  ],
  [
    'POST /ciphers/{id}/attachment/v2 (adminRequest: an item in an unassigned collection)',
    async () => {
      const item = await seedOrgItem(server, org, [await seedCollection(server, org)]);
      return { method: 'POST', path: `/ciphers/${item}/attachment/v2`, json: { key: ENC, fileName: ENC, fileSize: 10, adminRequest: true }, written: async () => Boolean(await attachmentsOf(item)) };
    },
    { allow: ATTACHMENT_ADMINS, hidden: 'rest' },
  ],
  [
    'GET /ciphers/{id}/attachment/{attachmentId}/renew (an item in an unassigned collection: the admin rule)',
    async () => {
      const item = await seedOrgItem(server, org, [await seedCollection(server, org)]);
      return { method: 'GET', path: `/ciphers/${item}/attachment/${await seedAttachment(item, false)}/renew` };
    },
    { allow: ATTACHMENT_ADMINS, hidden: 'rest' },
  ],
  [
    'DELETE /ciphers/{id}/attachment/{attachmentId}/admin (an item in an unassigned collection)',
    async () => {
      const item = await seedOrgItem(server, org, [await seedCollection(server, org)]);
      const id = await seedAttachment(item, true);
      return { method: 'DELETE', path: `/ciphers/${item}/attachment/${id}/admin`, written: async () => !(await attachmentsOf(item))?.includes(id) };
    },
    { allow: ATTACHMENT_ADMINS, hidden: 'rest' },
  ],
  // The admin console's item routes: the official CanEditCipherAsAdmin / CanDeleteOrRestoreCipherAsAdmin, 404 to everyone else.
  [
    'PUT /ciphers/{id}/admin (an item in an unassigned collection)',
    async () => {
      const item = await seedOrgItem(server, org, [await seedCollection(server, org)]);
      const before = (await cipherRow(item))?.data;
      return { method: 'PUT', path: `/ciphers/${item}/admin`, json: cipherBody('login', itemKey, { organizationId: org }), written: async () => (await cipherRow(item))?.data !== before };
    },
    { allow: ATTACHMENT_ADMINS, hidden: 'rest' },
  ],
  [
    'PUT /ciphers/{id}/collections-admin (an item in an unassigned collection)',
    async () => {
      const item = await seedOrgItem(server, org, [await seedCollection(server, org)]);
      return { method: 'PUT', path: `/ciphers/${item}/collections-admin`, json: { collectionIds: [] }, written: async () => (await placesOf(item)).length === 0 };
    },
    { allow: ATTACHMENT_ADMINS, hidden: 'rest' },
  ],
  [
    'PUT /ciphers/{id}/delete-admin (an item in an unassigned collection)',
    async () => {
      const item = await seedOrgItem(server, org, [await seedCollection(server, org)]);
      return { method: 'PUT', path: `/ciphers/${item}/delete-admin`, written: async () => Boolean((await cipherRow(item))?.deleted_date) };
    },
    { allow: ATTACHMENT_ADMINS, hidden: 'rest' },
  ],
  [
    'PUT /ciphers/{id}/restore-admin (an item in an unassigned collection)',
    async () => {
      const item = await seedOrgItem(server, org, [await seedCollection(server, org)]);
      await db().updateTable('ciphers').set({ deleted_date: new Date().toISOString() }).where('id', '=', item).execute();
      return { method: 'PUT', path: `/ciphers/${item}/restore-admin`, written: async () => !(await cipherRow(item))?.deleted_date };
    },
    { allow: ATTACHMENT_ADMINS, hidden: 'rest' },
  ],
  [
    'DELETE /ciphers/{id}/admin (an item in an unassigned collection)',
    async () => {
      const item = await seedOrgItem(server, org, [await seedCollection(server, org)]);
      return { method: 'DELETE', path: `/ciphers/${item}/admin`, written: async () => !(await exists('ciphers', item)) };
    },
    { allow: ATTACHMENT_ADMINS, hidden: 'rest' },
  ],
  [
    'DELETE /ciphers/{id}/admin (admins not let at all items: an item in an unassigned collection)',
    async () => {
      const item = await seedOrgItem(server, org, [await seedCollection(server, org)]);
      return { method: 'DELETE', path: `/ciphers/${item}/admin`, written: async () => !(await exists('ciphers', item)) };
    },
    { allow: ['editAnyCollection'], hidden: 'rest' },
    { before: () => setOrg({ allow_admin_access_to_all_collection_items: false }), after: () => setOrg({ allow_admin_access_to_all_collection_items: true }) },
  ],
  [
    'PUT /ciphers/delete-admin (bulk: an item in an unassigned collection)',
    async () => {
      const item = await seedOrgItem(server, org, [await seedCollection(server, org)]);
      return { method: 'PUT', path: '/ciphers/delete-admin', json: { ids: [item], organizationId: org }, written: async () => Boolean((await cipherRow(item))?.deleted_date) };
    },
    { allow: ATTACHMENT_ADMINS, hidden: 'rest' },
  ],
  [
    'DELETE /ciphers/admin (bulk: an item in no collection)',
    async () => {
      const item = await seedOrgItem(server, org);
      return { method: 'DELETE', path: '/ciphers/admin', json: { ids: [item], organizationId: org }, written: async () => !(await exists('ciphers', item)) };
    },
    { allow: ATTACHMENT_ADMINS, hidden: 'rest' },
  ],
  [
    'POST /ciphers/admin (in an unassigned collection)',
    async () => {
      const collection = await seedCollection(server, org);
      return { method: 'POST', path: '/ciphers/admin', json: { cipher: cipherBody('login', itemKey, { organizationId: org }), collectionIds: [collection] }, written: async () => (await placesOfCollection(collection)) > 0 };
    },
    { allow: ATTACHMENT_ADMINS, hidden: 'rest' },
  ],
  [
    'POST /ciphers/import-organization?organizationId= (into a new collection)',
    async () => {
      const before = await collectionCount();
      return {
        method: 'POST',
        path: `/ciphers/import-organization?organizationId=${org}`,
        json: { ciphers: [cipherBody('login', itemKey, { organizationId: org })], collections: [{ name: ENC }], collectionRelationships: [{ key: 0, value: 0 }] },
        written: async () => (await collectionCount()) > before,
      };
    },
    // Importers (owners, admins, the custom flag) and, with collection creation open to all, anyone who may create the collection.
    { allow: 'members', hidden: 'rest' },
  ],
  [
    'POST /ciphers/import-organization?organizationId= (into a new collection, creation limited)',
    async () => {
      const before = await collectionCount();
      return {
        method: 'POST',
        path: `/ciphers/import-organization?organizationId=${org}`,
        json: { ciphers: [cipherBody('login', itemKey, { organizationId: org })], collections: [{ name: ENC }], collectionRelationships: [{ key: 0, value: 0 }] },
        written: async () => (await collectionCount()) > before,
      };
    },
    { allow: [...ADMINS, 'accessImportExport', 'createNewCollections'], hidden: 'rest' },
    { before: () => setOrg({ limit_collection_creation: true }), after: () => setOrg({ limit_collection_creation: false }) },
  ],
  [
    "POST /ciphers/purge?organizationId= (an organization's vault)",
    async (who) => {
      const where = await throwawayOrg(who);
      const item = await seedOrgItem(server, where, [await seedCollection(server, where)]);
      return { method: 'POST', path: `/ciphers/purge?organizationId=${where}`, json: { masterPasswordHash: secret(who) }, written: async () => !(await exists('ciphers', item)) };
    },
    // The official EditAnyCollection: owners, admins and the custom flag; 404 to everyone else.
    { allow: ATTACHMENT_ADMINS, hidden: 'rest' },
  ],
];

const EVENT_LOG = [...ADMINS, 'accessEventLogs'] as const;
/** Security tasks for the whole organization: the official admins and custom members with accessReports. */
const REPORTERS = [...ADMINS, 'accessReports'] as const;

const EVENT_AND_TASK_ROWS: Row[] = [
  ['GET /organizations/{org}/users/{id}/events', async () => ({ method: 'GET', path: `${users()}/${await seedTarget(server, org)}/events` }), { allow: EVENT_LOG }],
  ['GET /organizations/{org}/events/export', async () => ({ method: 'GET', path: `${base()}/events/export?format=json` }), { allow: EVENT_LOG }],
  [
    'GET /ciphers/{id}/events (an organization item)',
    async () => ({ method: 'GET', path: `/ciphers/${await seedOrgItem(server, org)}/events` }),
    // Like the official server: 404 to everyone who may not read the log.
    { allow: EVENT_LOG, hidden: 'rest' },
  ],
  ['GET /tasks/organization', async () => ({ method: 'GET', path: `/tasks/organization?organizationId=${org}` }), { allow: REPORTERS }],
  ['GET /tasks/{org}/metrics', async () => ({ method: 'GET', path: `/tasks/${org}/metrics` }), { allow: REPORTERS }],
  ['GET /organizations/{org}/security-tasks/metrics', async () => ({ method: 'GET', path: `${base()}/security-tasks/metrics` }), { allow: REPORTERS }],
  [
    'POST /tasks/{org}/bulk-create',
    async () => {
      const item = await seedOrgItem(server, org);
      const created = async () => Boolean(await db().selectFrom('security_tasks').select('id').where('cipher_id', '=', item).executeTakeFirst());
      return { method: 'POST', path: `/tasks/${org}/bulk-create`, json: { tasks: [{ type: 0, cipherId: item }] }, written: created };
    },
    { allow: REPORTERS },
  ],
];

/** A report of the matrix organization, written straight to the database, with a distinct summary. */
async function seedReport(): Promise<string> {
  const id = randomUUID();
  const now = new Date().toISOString();
  await db()
    .insertInto('organization_reports')
    .values({ id, organization_id: org, report_data: ENC, content_encryption_key: ENC, summary_data: ENC, application_data: ENC, creation_date: now, revision_date: now })
    .execute();
  return id;
}
const reportOf = (id: string) => db().selectFrom('organization_reports').selectAll().where('id', '=', id).executeTakeFirst();
const reports = () => `/reports/organizations/${org}`;

const REPORT_ROWS: Row[] = [
  [
    'POST /reports/organizations/{org}',
    async () => {
      const marker = OTHER_NAME;
      const added = async () => Boolean(await db().selectFrom('organization_reports').select('id').where('organization_id', '=', org).where('report_data', '=', marker).executeTakeFirst());
      await db().deleteFrom('organization_reports').where('report_data', '=', marker).execute();
      return { method: 'POST', path: reports(), json: { reportData: marker, contentEncryptionKey: ENC, summaryData: ENC, applicationData: ENC }, written: added };
    },
    { allow: REPORTERS },
  ],
  [
    'GET /reports/organizations/{org}/latest',
    async () => {
      await seedReport();
      return { method: 'GET', path: `${reports()}/latest` };
    },
    { allow: REPORTERS },
  ],
  ['GET /reports/organizations/{org}/data/summary', async () => ({ method: 'GET', path: `${reports()}/data/summary?startDate=2020-01-01&endDate=2099-01-01` }), { allow: REPORTERS }],
  ['GET /reports/organizations/{org}/data/summary/{id}', async () => ({ method: 'GET', path: `${reports()}/data/summary/${await seedReport()}` }), { allow: REPORTERS }],
  [
    'PATCH /reports/organizations/{org}/data/summary/{id}',
    async () => {
      const id = await seedReport();
      return { method: 'PATCH', path: `${reports()}/data/summary/${id}`, json: { summaryData: OTHER_NAME }, written: async () => (await reportOf(id))?.summary_data === OTHER_NAME };
    },
    { allow: REPORTERS },
  ],
  ['GET /reports/organizations/{org}/data/application/{id}', async () => ({ method: 'GET', path: `${reports()}/data/application/${await seedReport()}` }), { allow: REPORTERS }],
  [
    'PATCH /reports/organizations/{org}/data/application/{id}',
    async () => {
      const id = await seedReport();
      return { method: 'PATCH', path: `${reports()}/data/application/${id}`, json: { applicationData: OTHER_NAME }, written: async () => (await reportOf(id))?.application_data === OTHER_NAME };
    },
    { allow: REPORTERS },
  ],
  ['GET /reports/organizations/{org}/{id}', async () => ({ method: 'GET', path: `${reports()}/${await seedReport()}` }), { allow: REPORTERS }],
  ['GET /reports/member-access/{org}', async () => ({ method: 'GET', path: `/reports/member-access/${org}` }), { allow: REPORTERS }],
  [
    'DELETE /reports/organizations/{org}/{id}',
    async () => {
      const id = await seedReport();
      return { method: 'DELETE', path: `${reports()}/${id}`, written: async () => !(await reportOf(id)) };
    },
    { allow: REPORTERS },
  ],
];

async function org_() {
  return db().selectFrom('organizations').selectAll().where('id', '=', org).executeTakeFirstOrThrow();
}
async function apiKey(): Promise<string | undefined> {
  return (await db().selectFrom('organization_api_keys').select('api_key').where('organization_id', '=', org).where('type', '=', 0).executeTakeFirst())?.api_key;
}

describe.each([
  ['organizations', ORGANIZATION_ROWS],
  ['members', MEMBER_ROWS],
  ['groups', GROUP_ROWS],
  ['collections', COLLECTION_ROWS],
  ['policies', POLICY_ROWS],
  ['single sign-on settings', SSO_ROWS],
  ['organization items (admin views)', CIPHER_ADMIN_ROWS],
  ['events and security tasks', EVENT_AND_TASK_ROWS],
  ['organization reports', REPORT_ROWS],
] as const)('who may administer %s', (_area, rows) => {
  it.each(rows)('%s', async (_name, call, expectation, around) => {
    const want: Record<string, Outcome> = {};
    const got: Record<string, Outcome> = {};
    await around?.before();
    try {
      for (const who of CALLERS) {
        want[who] = expected(expectation, who);
        got[who] = await run(who, await call(who));
      }
    } finally {
      await around?.after();
    }
    expect(got).toEqual(want);
  });
});

// ---------------------------------------------------------------------------------------
// Collection access levels
// ---------------------------------------------------------------------------------------

/** What a profile may do with the item, as sync and GET /ciphers/{id} report it; null: the item does not exist for them. */
interface ItemRights {
  edit: boolean;
  viewPassword: boolean;
  delete: boolean;
  restore: boolean;
}
const R = (edit: boolean, viewPassword: boolean, remove: boolean): ItemRights => ({ edit, viewPassword, delete: remove, restore: remove });

const ITEM_RIGHTS: Record<Profile, ItemRights | null> = {
  none: null,
  readOnly: R(false, true, false),
  readOnlyHidden: R(false, false, false),
  hidePasswords: R(true, false, true),
  edit: R(true, true, true),
  manage: R(true, true, true),
  groupReadOnly: R(false, true, false),
  groupManage: R(true, true, true),
  mixedEdit: R(true, true, true),
  mixedManage: R(true, true, true),
  twoCollections: R(true, true, true),
  // The legacy Manager role manages, and so edits and sees, every collection it is assigned.
  managerRole: R(true, true, true),
  // Owners and admins reach items through their collections; this one has none.
  admin: null,
  invited: null,
  accepted: null,
  revoked: null,
  stranger: null,
};

/** The access the user's own collection list (GET /collections) reports for the holding collection; null: not listed. */
const COLLECTION_GRANT: Record<Profile, Required<Grant> | null> = {
  none: null,
  readOnly: { readOnly: true, hidePasswords: false, manage: false },
  readOnlyHidden: { readOnly: true, hidePasswords: true, manage: false },
  hidePasswords: { readOnly: false, hidePasswords: true, manage: false },
  edit: { readOnly: false, hidePasswords: false, manage: false },
  manage: { readOnly: false, hidePasswords: false, manage: true },
  groupReadOnly: { readOnly: true, hidePasswords: false, manage: false },
  groupManage: { readOnly: false, hidePasswords: false, manage: true },
  mixedEdit: { readOnly: false, hidePasswords: false, manage: false },
  mixedManage: { readOnly: false, hidePasswords: false, manage: true },
  twoCollections: { readOnly: true, hidePasswords: false, manage: false },
  managerRole: { readOnly: false, hidePasswords: false, manage: true },
  admin: null,
  invited: null,
  accepted: null,
  revoked: null,
  stranger: null,
};

/** Reach the item. */
const SEES = ['readOnly', 'readOnlyHidden', 'hidePasswords', 'edit', 'manage', 'groupReadOnly', 'groupManage', 'mixedEdit', 'mixedManage', 'twoCollections', 'managerRole'] as const;
/** May change the item, and with item deletion open, trash, restore and delete it. */
const EDITS = ['hidePasswords', 'edit', 'manage', 'groupManage', 'mixedEdit', 'mixedManage', 'twoCollections', 'managerRole'] as const;
/** May change the item's collections: edit with passwords shown (else a second collection would reveal them). */
const ASSIGNS = EDITS.filter((p) => p !== 'hidePasswords');
/** Not confirmed members of the organization: an item call naming it is bad input. */
const OUTSIDE = ['invited', 'accepted', 'revoked', 'stranger'] as const;
/**
 * Hold manage on a collection holding the item: the only ones who delete it while item deletion
 * is limited. The Manager role manages every collection it is assigned to.
 */
const MANAGES = ['manage', 'groupManage', 'mixedManage', 'managerRole'] as const;
/** May put items into the holding collection: a grant that is not read-only, or manage. */
const WRITES_C1 = ['hidePasswords', 'edit', 'manage', 'groupManage', 'mixedEdit', 'mixedManage', 'managerRole'] as const;
/** Assigned to the holding collection. */
const ASSIGNED_C1 = SEES;

interface ItemExpectation {
  allow: readonly Profile[];
  ok?: Outcome;
  /** For profiles who reach the item or collection but may not do this; 400 or 403. */
  refuse: Outcome;
  /** Everyone else; 404 unless told. */
  others?: Outcome;
  /** Profiles to which the refusal applies; those who reach the item unless told. */
  reaching?: readonly Profile[];
}

function expectedFor(e: ItemExpectation, profile: Profile): Outcome {
  if (e.allow.includes(profile)) return e.ok ?? 200;
  if ((e.reaching ?? SEES).includes(profile)) return e.refuse;
  return e.others ?? 404;
}

/** A fresh collection (and item in it) reached as the profile's placement says. */
async function place(profile: Profile): Promise<{ c1: string; item: string }> {
  const p: Placement = PLACEMENTS[profile];
  const member = actors[profile].memberId;
  const group = groupOf[profile];
  const c1 = await seedCollection(server, org, {
    users: p.direct ? [[member, p.direct]] : [],
    groups: p.group && group ? [[group, p.group]] : [],
  });
  const c2 = p.second ? await seedCollection(server, org, { users: [[member, p.second]] }) : undefined;
  const item = await seedOrgItem(server, org, c2 ? [c1, c2] : [c1]);
  return { c1, item };
}

interface CipherJson {
  id: string;
  edit: boolean;
  viewPassword: boolean;
  permissions: { delete: boolean; restore: boolean };
}
const rightsOutcome = (json: CipherJson | undefined): Outcome =>
  json ? JSON.stringify({ edit: json.edit, viewPassword: json.viewPassword, delete: json.permissions.delete, restore: json.permissions.restore }) : 404;
const rightsExpected = (r: ItemRights | null): Outcome => (r ? JSON.stringify(r) : 404);

const cipherRow = (id: string) => db().selectFrom('ciphers').select(['id', 'revision_date', 'deleted_date', 'data']).where('id', '=', id).executeTakeFirst();
const placesOfCollection = async (collection: string) => (await db().selectFrom('collection_ciphers').select('cipher_id').where('collection_id', '=', collection).execute()).length;
const collectionCount = async () => (await db().selectFrom('collections').select('id').where('organization_id', '=', org).execute()).length;
const placesOf = async (item: string) => (await db().selectFrom('collection_ciphers').select('collection_id').where('cipher_id', '=', item).execute()).map((r) => r.collection_id).sort();

const attachmentsOf = async (item: string) => (await db().selectFrom('ciphers').select('attachments').where('id', '=', item).executeTakeFirst())?.attachments ?? null;
/** An attachment written straight into the item's attachments document (uploaded or only reserved); answers its id. */
async function seedAttachment(item: string, validated: boolean): Promise<string> {
  const id = `a${randomUUID().replace(/-/g, '')}`.slice(0, 32);
  const document = { [id]: { fileName: ENC, key: ENC, size: 10, validated, uploadStarted: new Date().toISOString() } };
  await db().updateTable('ciphers').set({ attachments: JSON.stringify(document) }).where('id', '=', item).execute();
  return id;
}

type ItemRow = [name: string, call: (profile: Profile) => Promise<Call>, expected: (profile: Profile) => Outcome, around?: { before(): Promise<void>; after(): Promise<void> }];
const table = (e: ItemExpectation) => (profile: Profile) => expectedFor(e, profile);

const ITEM_ROWS: ItemRow[] = [
  [
    'GET /sync: the item and its edit, viewPassword and permissions',
    async (profile) => {
      const { item } = await place(profile);
      const found = (res: TestResponse) => (res.body?.ciphers as CipherJson[] | undefined)?.find((c) => c.id === item);
      return { method: 'GET', path: '/sync', outcome: (res) => (res.status === 200 ? rightsOutcome(found(res)) : res.status) };
    },
    (profile) => rightsExpected(ITEM_RIGHTS[profile]),
  ],
  [
    'GET /ciphers/{id}: the same rights',
    async (profile) => {
      const { item } = await place(profile);
      return { method: 'GET', path: `/ciphers/${item}`, outcome: (res) => (res.status === 200 ? rightsOutcome(res.body) : res.status) };
    },
    (profile) => rightsExpected(ITEM_RIGHTS[profile]),
  ],
  ...(['details', 'full-details'] as const).map(
    (form): ItemRow => [
      `GET /ciphers/{id}/${form}: the same rights`,
      async (profile) => {
        const { item } = await place(profile);
        return { method: 'GET', path: `/ciphers/${item}/${form}`, outcome: (res) => (res.status === 200 ? rightsOutcome(res.body) : res.status) };
      },
      (profile) => rightsExpected(ITEM_RIGHTS[profile]),
    ],
  ),
  [
    'GET /collections: the access the holding collection shows',
    async (profile) => {
      const { c1 } = await place(profile);
      return {
        method: 'GET',
        path: '/collections',
        outcome: (res) => {
          const c = (res.body?.data as ({ id: string } & Required<Grant>)[] | undefined)?.find((x) => x.id === c1);
          return c ? JSON.stringify({ readOnly: c.readOnly, hidePasswords: c.hidePasswords, manage: c.manage }) : 'not listed';
        },
      };
    },
    (profile) => (COLLECTION_GRANT[profile] ? JSON.stringify(COLLECTION_GRANT[profile]) : 'not listed'),
  ],
  [
    'PUT /ciphers/{id} (edit the item)',
    async (profile) => {
      const { item } = await place(profile);
      const before = (await cipherRow(item))?.data;
      return { method: 'PUT', path: `/ciphers/${item}`, json: cipherBody('login', itemKey, { organizationId: org }), written: async () => (await cipherRow(item))?.data !== before };
    },
    table({ allow: EDITS, refuse: 400 }),
  ],
  [
    'PUT /ciphers/{id}/partial (favorite: a setting of the caller\'s own)',
    async (profile) => ({ method: 'PUT', path: `/ciphers/${(await place(profile)).item}/partial`, json: { favorite: true, folderId: null } }),
    table({ allow: SEES, refuse: 400 }),
  ],
  [
    'PUT /ciphers/{id}/delete (to the trash)',
    async (profile) => {
      const { item } = await place(profile);
      return { method: 'PUT', path: `/ciphers/${item}/delete`, written: async () => Boolean((await cipherRow(item))?.deleted_date) };
    },
    table({ allow: EDITS, refuse: 400 }),
  ],
  [
    'PUT /ciphers/{id}/delete (item deletion limited to managers)',
    async (profile) => {
      const { item } = await place(profile);
      return { method: 'PUT', path: `/ciphers/${item}/delete`, written: async () => Boolean((await cipherRow(item))?.deleted_date) };
    },
    table({ allow: MANAGES, refuse: 400 }),
    { before: () => setOrg({ limit_item_deletion: true }), after: () => setOrg({ limit_item_deletion: false }) },
  ],
  [
    'PUT /ciphers/{id}/restore (from the trash)',
    async (profile) => {
      const { item } = await place(profile);
      await db().updateTable('ciphers').set({ deleted_date: new Date().toISOString() }).where('id', '=', item).execute();
      return { method: 'PUT', path: `/ciphers/${item}/restore`, written: async () => !(await cipherRow(item))?.deleted_date };
    },
    table({ allow: EDITS, refuse: 400 }),
  ],
  [
    'DELETE /ciphers/{id} (for good)',
    async (profile) => {
      const { item } = await place(profile);
      return { method: 'DELETE', path: `/ciphers/${item}`, written: async () => !(await exists('ciphers', item)) };
    },
    table({ allow: EDITS, refuse: 400 }),
  ],
  [
    'POST /ciphers/{id}/attachment/v2 (reserve an attachment)',
    async (profile) => {
      const { item } = await place(profile);
      return { method: 'POST', path: `/ciphers/${item}/attachment/v2`, json: { key: ENC, fileName: ENC, fileSize: 10 }, written: async () => Boolean((await attachmentsOf(item))) };
    },
    table({ allow: EDITS, refuse: 400 }),
  ],
  [
    'GET /ciphers/{id}/attachment/{attachmentId} (a download link)',
    async (profile) => {
      const { item } = await place(profile);
      return { method: 'GET', path: `/ciphers/${item}/attachment/${await seedAttachment(item, true)}` };
    },
    table({ allow: SEES, refuse: 400 }),
  ],
  [
    'GET /ciphers/{id}/attachment/{attachmentId}/renew (a new upload window)',
    async (profile) => {
      const { item } = await place(profile);
      return { method: 'GET', path: `/ciphers/${item}/attachment/${await seedAttachment(item, false)}/renew` };
    },
    // The admin console uploads here too: an admin may edit any item as an admin (not through a collection).
    table({ allow: [...EDITS, 'admin'], refuse: 400 }),
  ],
  [
    'DELETE /ciphers/{id}/attachment/{attachmentId}',
    async (profile) => {
      const { item } = await place(profile);
      const id = await seedAttachment(item, true);
      return { method: 'DELETE', path: `/ciphers/${item}/attachment/${id}`, written: async () => !(await attachmentsOf(item))?.includes(id) };
    },
    table({ allow: EDITS, refuse: 400 }),
  ],
  [
    'PUT /ciphers/{id}/collections_v2 (take it out of its collections)',
    async (profile) => {
      const { item } = await place(profile);
      const before = JSON.stringify(await placesOf(item));
      return { method: 'PUT', path: `/ciphers/${item}/collections_v2`, json: { collectionIds: [] }, written: async () => JSON.stringify(await placesOf(item)) !== before };
    },
    table({ allow: ASSIGNS, refuse: 400 }),
  ],
  [
    'PUT /ciphers/{id}/collections (take it out of the collections the caller may write to)',
    async (profile) => {
      const { item } = await place(profile);
      const before = JSON.stringify(await placesOf(item));
      return { method: 'PUT', path: `/ciphers/${item}/collections`, json: { collectionIds: [] }, written: async () => JSON.stringify(await placesOf(item)) !== before };
    },
    table({ allow: ASSIGNS, refuse: 400 }),
  ],
  ...(['archive', 'unarchive'] as const).map(
    (verb): ItemRow => [
      `PUT /ciphers/{id}/${verb} (for the caller)`,
      async (profile) => {
        const { item } = await place(profile);
        if (verb === 'unarchive') await server.request('PUT', `/api/ciphers/${item}/archive`, { token: actors[profile].token, headers: CLIENT });
        return { method: 'PUT', path: `/ciphers/${item}/${verb}` };
      },
      // Archive is per user, but an organization item needs edit rights through a collection.
      table({ allow: EDITS, refuse: 400 }),
    ],
  ),
  [
    'POST /ciphers/create (a new item in the collection)',
    async (profile) => {
      const { c1 } = await place(profile);
      const count = async () => (await db().selectFrom('collection_ciphers').select('cipher_id').where('collection_id', '=', c1).execute()).length;
      return {
        method: 'POST',
        path: '/ciphers/create',
        json: { cipher: cipherBody('login', itemKey, { organizationId: org }), collectionIds: [c1] },
        written: async () => (await count()) > 1,
      };
    },
    // A collection the caller cannot write to, or an organization they are not a confirmed member of, is bad input.
    table({ allow: WRITES_C1, refuse: 400, others: 400 }),
  ],
  [
    'PUT /ciphers/{id}/share (the caller\'s own item into the holding collection)',
    async (profile) => {
      const { c1 } = await place(profile);
      const item = await seedPersonalItem(server, actors[profile].userId);
      const owner = async () => (await db().selectFrom('ciphers').select('organization_id').where('id', '=', item).executeTakeFirst())?.organization_id;
      return {
        method: 'PUT',
        path: `/ciphers/${item}/share`,
        json: { cipher: cipherBody('login', itemKey, { organizationId: org }), collectionIds: [c1] },
        written: async () => (await owner()) === org,
      };
    },
    // As for creation: a collection the caller cannot write to, or an organization they are not a confirmed member of, is bad input.
    table({ allow: WRITES_C1, refuse: 400, others: 400 }),
  ],
  [
    'POST /ciphers/bulk-collections (take the item out of the holding collection)',
    async (profile) => {
      const { c1, item } = await place(profile);
      return {
        method: 'POST',
        path: '/ciphers/bulk-collections',
        json: { organizationId: org, cipherIds: [item], collectionIds: [c1], removeCollections: true },
        written: async () => !(await placesOf(item)).includes(c1),
      };
    },
    // The holding collection must be writable and the item's collections the caller's to change.
    table({ allow: WRITES_C1.filter((p) => (ASSIGNS as readonly Profile[]).includes(p)), refuse: 400, others: 400 }),
  ],
  [
    'POST /ciphers/bulk-collections (put the item into a collection the caller may write to)',
    async (profile) => {
      const { item } = await place(profile);
      const target = await seedCollection(server, org, { users: profile === 'stranger' ? [] : [[actors[profile].memberId, {}]] });
      return {
        method: 'POST',
        path: '/ciphers/bulk-collections',
        json: { organizationId: org, cipherIds: [item], collectionIds: [target] },
        written: async () => (await placesOf(item)).includes(target),
      };
    },
    // An item the caller does not reach is unknown: all or nothing.
    (profile) => ((OUTSIDE as readonly Profile[]).includes(profile) ? 400 : expectedFor({ allow: ASSIGNS, refuse: 400 }, profile)),
  ],
  [
    'GET /ciphers/{id}/admin',
    async (profile) => ({ method: 'GET', path: `/ciphers/${(await place(profile)).item}/admin` }),
    table({ allow: [...MANAGES, 'admin'], refuse: 404 }),
  ],
  [
    'GET /ciphers/{id}/attachment/{attachmentId}/admin (no collection access level opens the admin rule)',
    async (profile) => {
      const { item } = await place(profile);
      return { method: 'GET', path: `/ciphers/${item}/attachment/${await seedAttachment(item, true)}/admin` };
    },
    table({ allow: ['admin'], refuse: 404 }),
  ],
  [
    'GET /organizations/{org}/collections/{id}/details (the holding collection)',
    async (profile) => ({ method: 'GET', path: `${collections()}/${(await place(profile)).c1}/details` }),
    table({ allow: [...MANAGES, 'admin'], refuse: 403, reaching: ASSIGNED_C1 }),
  ],
  [
    'PUT /organizations/{org}/collections/{id} (rename the holding collection)',
    async (profile) => {
      const { c1 } = await place(profile);
      return { method: 'PUT', path: `${collections()}/${c1}`, json: { name: OTHER_NAME }, written: async () => (await collectionName(c1)) === OTHER_NAME };
    },
    table({ allow: [...MANAGES, 'admin'], refuse: 403, reaching: ASSIGNED_C1 }),
  ],
  [
    'PUT /organizations/{org}/collections/{id}/users (change who reaches it)',
    async (profile) => {
      const { c1 } = await place(profile);
      const keep = PLACEMENTS[profile] as Placement;
      const users = [{ id: bystander, readOnly: true }, ...(keep.direct ? [{ id: actors[profile].memberId, ...keep.direct }] : [])];
      return { method: 'PUT', path: `${collections()}/${c1}/users`, json: users, written: () => collectionUser(c1, bystander) };
    },
    table({ allow: [...MANAGES, 'admin'], refuse: 403, reaching: ASSIGNED_C1 }),
  ],
  [
    'DELETE /organizations/{org}/collections/{id} (the holding collection)',
    async (profile) => {
      const { c1 } = await place(profile);
      return { method: 'DELETE', path: `${collections()}/${c1}`, written: async () => !(await exists('collections', c1)) };
    },
    table({ allow: [...MANAGES, 'admin'], refuse: 403, reaching: ASSIGNED_C1 }),
  ],
];

describe('what each collection access level allows with an item and its collection', () => {
  it.each(ITEM_ROWS)('%s', async (_name, call, expectedOf, around) => {
    const want: Record<string, Outcome> = {};
    const got: Record<string, Outcome> = {};
    await around?.before();
    try {
      for (const profile of PROFILES) {
        want[profile] = expectedOf(profile);
        got[profile] = await run(profile, await call(profile));
      }
    } finally {
      await around?.after();
    }
    expect(got).toEqual(want);
  });
});

// ---------------------------------------------------------------------------------------
// The organization public API (/public): who may call it at all
// ---------------------------------------------------------------------------------------

/**
 * Callers of the public API: the organization's own API key token, another organization's, a
 * user token of this organization's owner, a machine account of this organization, and no token.
 */
const PUBLIC_CALLERS = ['orgKey', 'otherOrgKey', 'ownerUser', 'machineAccount', 'anonymous'] as const;
type PublicCaller = (typeof PUBLIC_CALLERS)[number];
const publicTokens = {} as Record<PublicCaller, string | undefined>;

/** One public route: a fresh target per call; `written` tells whether the call changed it. */
type PublicRow = [name: string, call: () => Promise<Call>, expectation: { orgKey?: Outcome; otherOrgKey: Outcome }];

/** This organization's key reaches it (200 unless told); another organization's sees a stranger's id as missing; users, machines and nobody get 401. */
function expectedPublic(e: PublicRow[2], who: PublicCaller): Outcome {
  if (who === 'orgKey') return e.orgKey ?? 200;
  if (who === 'otherOrgKey') return e.otherOrgKey;
  return 401;
}

const listed = (id: () => string) => (res: TestResponse): Outcome =>
  res.status === 200 ? ((res.body.data as { id: string }[]).some((item) => item.id === id()) ? 'listed' : 'not listed') : res.status;
const externalIdOf = async (table: 'collections' | 'organization_users', id: string) => (await db().selectFrom(table).select('external_id').where('id', '=', id).executeTakeFirst())?.external_id;

/** Where a create landed: this organization, the caller's own, or nowhere (the status). */
const createdIn = (organizationOf: () => Promise<string | undefined>) => async (res: TestResponse): Promise<Outcome> => {
  const where = await organizationOf();
  if (res.status !== 200) return where ? `${res.status} (made although refused)` : res.status;
  return where === org ? 'made here' : where === otherOrg ? 'made in its own' : 'made nowhere';
};

let lastTarget = '';
const PUBLIC_ROWS: PublicRow[] = [
  ['GET /public/members (lists this organization\'s member)', async () => ({ method: 'GET', path: '/public/members', outcome: listed(() => bystander) }), { orgKey: 'listed', otherOrgKey: 'not listed' }],
  ['GET /public/members/{id}', async () => ({ method: 'GET', path: `/public/members/${bystander}` }), { otherOrgKey: 404 }],
  [
    'POST /public/members',
    async () => {
      const email = `${unique('public-invite')}@example.com`;
      return { method: 'POST', path: '/public/members', json: { email, type: Role.User }, outcome: createdIn(async () => (await db().selectFrom('organization_users').select('organization_id').where('email', '=', email).executeTakeFirst())?.organization_id) };
    },
    { orgKey: 'made here', otherOrgKey: 'made in its own' },
  ],
  [
    'PUT /public/members/{id}',
    async () => {
      const target = await seedTarget(server, org);
      return { method: 'PUT', path: `/public/members/${target}`, json: { type: Role.User, externalId: 'set' }, written: async () => (await externalIdOf('organization_users', target)) === 'set' };
    },
    { otherOrgKey: 404 },
  ],
  [
    'DELETE /public/members/{id}',
    async () => {
      const target = await seedTarget(server, org);
      return { method: 'DELETE', path: `/public/members/${target}`, written: async () => !(await exists('organization_users', target)) };
    },
    { otherOrgKey: 404 },
  ],
  ['GET /public/members/{id}/group-ids', async () => ({ method: 'GET', path: `/public/members/${bystander}/group-ids` }), { otherOrgKey: 404 }],
  [
    'PUT /public/members/{id}/group-ids',
    async () => {
      const target = await seedTarget(server, org);
      const group = await seedGroup(server, org);
      return {
        method: 'PUT',
        path: `/public/members/${target}/group-ids`,
        json: { groupIds: [group] },
        written: async () => Boolean(await db().selectFrom('group_users').select('group_id').where('organization_user_id', '=', target).executeTakeFirst()),
      };
    },
    { otherOrgKey: 404 },
  ],
  [
    'POST /public/members/{id}/revoke',
    async () => {
      const target = await seedTarget(server, org);
      return { method: 'POST', path: `/public/members/${target}/revoke`, written: async () => (await memberStatus(target)) === Status.Revoked };
    },
    { otherOrgKey: 404 },
  ],
  [
    'POST /public/members/{id}/restore',
    async () => {
      const target = await seedTarget(server, org, { status: Status.Revoked });
      return { method: 'POST', path: `/public/members/${target}/restore`, written: async () => (await memberStatus(target)) === Status.Confirmed };
    },
    { otherOrgKey: 404 },
  ],
  [
    'POST /public/members/{id}/reinvite',
    async () => ({ method: 'POST', path: `/public/members/${await seedTarget(server, org, { status: Status.Invited })}/reinvite` }),
    { otherOrgKey: 404 },
  ],
  ['GET /public/groups (lists this organization\'s group)', async () => {
    lastTarget = await seedGroup(server, org);
    return { method: 'GET', path: '/public/groups', outcome: listed(() => lastTarget) };
  }, { orgKey: 'listed', otherOrgKey: 'not listed' }],
  ['GET /public/groups/{id}', async () => ({ method: 'GET', path: `/public/groups/${await seedGroup(server, org)}` }), { otherOrgKey: 404 }],
  [
    'POST /public/groups',
    async () => {
      const name = unique('public-group');
      return { method: 'POST', path: '/public/groups', json: { name }, outcome: createdIn(async () => (await db().selectFrom('groups').select('organization_id').where('name', '=', name).executeTakeFirst())?.organization_id) };
    },
    { orgKey: 'made here', otherOrgKey: 'made in its own' },
  ],
  [
    'PUT /public/groups/{id}',
    async () => {
      const group = await seedGroup(server, org);
      return { method: 'PUT', path: `/public/groups/${group}`, json: { name: 'Renamed' }, written: async () => (await groupName(group)) === 'Renamed' };
    },
    { otherOrgKey: 404 },
  ],
  [
    'DELETE /public/groups/{id}',
    async () => {
      const group = await seedGroup(server, org);
      return { method: 'DELETE', path: `/public/groups/${group}`, written: async () => !(await exists('groups', group)) };
    },
    { otherOrgKey: 404 },
  ],
  ['GET /public/groups/{id}/member-ids', async () => ({ method: 'GET', path: `/public/groups/${await seedGroup(server, org)}/member-ids` }), { otherOrgKey: 404 }],
  [
    'PUT /public/groups/{id}/member-ids',
    async () => {
      const group = await seedGroup(server, org);
      return {
        method: 'PUT',
        path: `/public/groups/${group}/member-ids`,
        json: { memberIds: [bystander] },
        written: async () => Boolean(await db().selectFrom('group_users').select('group_id').where('group_id', '=', group).executeTakeFirst()),
      };
    },
    { otherOrgKey: 404 },
  ],
  ['GET /public/collections (lists this organization\'s collection)', async () => ({ method: 'GET', path: '/public/collections', outcome: listed(() => spareCollection) }), { orgKey: 'listed', otherOrgKey: 'not listed' }],
  ['GET /public/collections/{id}', async () => ({ method: 'GET', path: `/public/collections/${spareCollection}` }), { otherOrgKey: 404 }],
  [
    'PUT /public/collections/{id}',
    async () => {
      const collection = await seedCollection(server, org);
      return { method: 'PUT', path: `/public/collections/${collection}`, json: { externalId: 'set' }, written: async () => (await externalIdOf('collections', collection)) === 'set' };
    },
    { otherOrgKey: 404 },
  ],
  [
    'DELETE /public/collections/{id}',
    async () => {
      const collection = await seedCollection(server, org);
      return { method: 'DELETE', path: `/public/collections/${collection}`, written: async () => !(await exists('collections', collection)) };
    },
    { otherOrgKey: 404 },
  ],
  ['GET /public/policies', async () => ({ method: 'GET', path: '/public/policies' }), { otherOrgKey: 200 }],
  // A policy only this organization saved: another organization's key finds none.
  ['GET /public/policies/{type}', async () => ({ method: 'GET', path: '/public/policies/2' }), { otherOrgKey: 404 }],
  ['PUT /public/policies/{type}', async () => ({ method: 'PUT', path: '/public/policies/2', json: { enabled: true } }), { otherOrgKey: 200 }],
  ['GET /public/events (this organization\'s log only)', async () => ({
    method: 'GET',
    path: `/public/events?itemId=${bystander}`,
    outcome: (res) => (res.status === 200 ? ((res.body.data as unknown[]).length > 0 ? 'events' : 'no events') : res.status),
  }), { orgKey: 'events', otherOrgKey: 'no events' }],
  ['POST /public/organization/import', async () => ({ method: 'POST', path: '/public/organization/import', json: { overwriteExisting: false } }), { otherOrgKey: 200 }],
  ['GET /public/organization/subscription (cloud)', async () => ({ method: 'GET', path: '/public/organization/subscription' }), { otherOrgKey: 200 }],
];

describe('who may call the organization public API', () => {
  beforeAll(async () => {
    publicTokens.orgKey = (await orgApiToken(server, org)).token;
    publicTokens.otherOrgKey = (await orgApiToken(server, otherOrg)).token;
    publicTokens.ownerUser = actors.owner.token;
    publicTokens.machineAccount = await machineAccountToken(server, org);
    publicTokens.anonymous = undefined;
    // The policy row the policy reads look for, and an event about the bystander.
    await server.request('PUT', '/api/public/policies/2', { token: publicTokens.orgKey, json: { enabled: false } });
    await server.request('PUT', `/api/public/members/${bystander}/group-ids`, { token: publicTokens.orgKey, json: { groupIds: [] } });
  }, SETUP_TIMEOUT);

  it.each(PUBLIC_ROWS)('%s', async (_name, call, expectation) => {
    const want: Record<string, Outcome> = {};
    const got: Record<string, Outcome> = {};
    for (const who of PUBLIC_CALLERS) {
      want[who] = expectedPublic(expectation, who);
      const made = await call();
      const bearer = publicTokens[who];
      const res = await server.request(made.method, `/api${made.path}`, { ...(bearer ? { token: bearer } : {}), ...(made.json === undefined ? {} : { json: made.json }) });
      let outcome: Outcome = res.status >= 500 ? `${res.status} ${res.text}` : made.outcome ? await made.outcome(res) : res.status;
      if (made.written) {
        const written = await made.written();
        const succeeded = res.status >= 200 && res.status < 300;
        if (written !== succeeded) outcome = `${outcome} (${written ? 'changed although refused' : 'changed nothing'})`;
      }
      got[who] = outcome;
    }
    expect(got).toEqual(want);
  });

  it('refuses the organization token on the organization routes of the web API (401)', async () => {
    const token = publicTokens.orgKey;
    for (const [method, path] of [
      ['GET', `/api/organizations/${org}/users`],
      ['GET', `/api/organizations/${org}/groups`],
      ['GET', `/api/organizations/${org}/policies`],
      ['GET', `/api/organizations/${org}/events`],
      ['GET', `/api/organizations/${org}`],
    ] as const) {
      expect((await server.request(method, path, { ...(token ? { token } : {}) })).status, `${method} ${path}`).toBe(401);
    }
  });
});

// ---------------------------------------------------------------------------------------
// Emergency access: a grant belongs to its two accounts, never to an organization
// ---------------------------------------------------------------------------------------

/**
 * Every emergency access route on a grant, against its grantor (a plain member of the
 * organization), its grantee, an owner of another organization, and the organization's admin,
 * custom member with manageResetPassword and custom member without it: only the grant's own
 * parties pass the ownership check (their outcome is then the grant's status and type); anyone
 * else gets 404, whatever their role over the grantor. Each call gets a fresh grant, approved
 * (status 4), of the type the route needs, so the parties' outcomes are not 404.
 */
const EA_CALLERS = ['grantor', 'grantee', 'stranger', 'orgAdmin', 'resetManager', 'customNoFlags'] as const;
type EaCaller = (typeof EA_CALLERS)[number];
const EA_ACTOR: Record<EaCaller, Caller> = { grantor: 'user', grantee: 'manager', stranger: 'stranger', orgAdmin: 'admin', resetManager: 'manageResetPassword', customNoFlags: 'custom' };

/** A route, the grant type its call needs, its body, and the outcomes of the two parties (everyone else: 404). */
const EA_ROWS: [string, 0 | 1, unknown, Partial<Record<EaCaller, Outcome>>][] = [
  ['GET /emergency-access/{id}', 0, undefined, { grantor: 200 }],
  ['PUT /emergency-access/{id}', 0, { type: 0, waitTimeDays: 1 }, { grantor: 200 }],
  ['POST /emergency-access/{id}', 0, { type: 0, waitTimeDays: 1 }, { grantor: 200 }],
  ['DELETE /emergency-access/{id}', 0, undefined, { grantor: 200, grantee: 200 }],
  ['POST /emergency-access/{id}/delete', 0, undefined, { grantor: 200, grantee: 200 }],
  ['POST /emergency-access/{id}/reinvite', 0, undefined, { grantor: 400 }],
  ['POST /emergency-access/{id}/confirm', 0, { key: KEY }, { grantor: 400 }],
  ['POST /emergency-access/{id}/approve', 0, undefined, { grantor: 400 }],
  ['POST /emergency-access/{id}/reject', 0, undefined, { grantor: 200 }],
  ['POST /emergency-access/{id}/initiate', 0, undefined, { grantee: 400 }],
  ['POST /emergency-access/{id}/view', 0, undefined, { grantee: 200 }],
  // A takeover grant: the grantee passes the ownership check and is refused on the type (400).
  ['GET /emergency-access/{id}/{cipherId}/attachment/{attachmentId}', 1, undefined, { grantee: 400 }],
  ['POST /emergency-access/{id}/takeover', 1, undefined, { grantee: 200 }],
  // Without the new hash, so that the grantee's call stops at the body and takes no account over.
  ['POST /emergency-access/{id}/password', 1, { key: ENC }, { grantee: 400 }],
  ['GET /emergency-access/{id}/policies', 1, undefined, { grantee: 200 }],
];

describe('who may act on an emergency access grant', () => {
  async function approvedGrant(type: 0 | 1): Promise<string> {
    const id = randomUUID();
    const now = new Date().toISOString();
    await server.database.db
      .insertInto('emergency_access')
      .values({ id, grantor_id: actors.user.userId, grantee_id: actors.manager.userId, email: null, key_encrypted: KEY, type, status: 4, wait_time_days: 1, recovery_initiated_date: now, last_notification_date: now, creation_date: now, revision_date: now })
      .execute();
    return id;
  }

  it.each(EA_ROWS)('%s', async (route, type, json, parties) => {
    const [method, path] = route.split(' ') as [string, string];
    const want: Record<string, Outcome> = {};
    const got: Record<string, Outcome> = {};
    for (const who of EA_CALLERS) {
      want[who] = parties[who] ?? 404;
      const id = await approvedGrant(type);
      const url = `/api${path.replace('{id}', id).replace('{cipherId}', randomUUID()).replace('{attachmentId}', 'abc')}`;
      const res = await server.request(method, url, { token: actors[EA_ACTOR[who]].token, headers: CLIENT, ...(json === undefined ? {} : { json }) });
      got[who] = res.status >= 500 ? `${res.status} ${res.text}` : res.status;
    }
    expect(got).toEqual(want);
  });
});

// ---------------------------------------------------------------------------------------
// Passkeys for logging in: a passkey belongs to its account, never to an organization
// ---------------------------------------------------------------------------------------

/**
 * Every passkey route against the passkey's owner (a plain member of the organization), the
 * organization's admin and owner, a stranger and nobody: each signed-in caller may start a
 * ceremony on their own account, but only the owner reaches the owner's passkey (listing it,
 * removing it, answering a token issued to the owner, wrapping keys for it); a removal by anyone
 * else finds nothing (404), and a body naming the owner's passkey or token is refused (400). The
 * anonymous login options are everyone's.
 */
const PK_CALLERS = ['owner', 'orgAdmin', 'orgOwner', 'stranger', 'nobody'] as const;
type PkCaller = (typeof PK_CALLERS)[number];
const PK_ACTOR: Record<Exclude<PkCaller, 'nobody'>, Caller> = { owner: 'user', orgAdmin: 'admin', orgOwner: 'owner', stranger: 'stranger' };
const SIGNED_IN = { owner: 200, orgAdmin: 200, orgOwner: 200, stranger: 200, nobody: 401 } as const;
const OWNER_ONLY = (others: Outcome) => ({ owner: 200, orgAdmin: others, orgOwner: others, stranger: others, nobody: 401 });

/** A route and the outcome for each caller; `listed` reads whether the owner's passkey showed. */
const PK_ROWS: [string, Record<PkCaller, Outcome>][] = [
  ['GET /api/webauthn', { owner: 'listed', orgAdmin: 'empty', orgOwner: 'empty', stranger: 'empty', nobody: 401 }],
  ['POST /api/webauthn/attestation-options', SIGNED_IN],
  ['POST /api/webauthn', OWNER_ONLY(400)],
  ['POST /api/webauthn/assertion-options', SIGNED_IN],
  ['PUT /api/webauthn', OWNER_ONLY(400)],
  ['POST /api/webauthn/{id}/delete', OWNER_ONLY(404)],
  ['GET /identity/accounts/webauthn/assertion-options', { owner: 200, orgAdmin: 200, orgOwner: 200, stranger: 200, nobody: 200 }],
];

describe('who may act on a passkey', () => {
  const origin = () => new URL(server.config.publicUrl).origin;
  const send = (who: PkCaller, method: string, path: string, json?: unknown) =>
    server.request(method, path, { ...(who === 'nobody' ? {} : { token: actors[PK_ACTOR[who]].token }), headers: CLIENT, ...(json === undefined ? {} : { json }) });
  const secretOf = (who: PkCaller) => ({ masterPasswordHash: who === 'nobody' ? 'x' : actors[PK_ACTOR[who]].account.masterPasswordHash });

  /** A fresh passkey of the owner, with PRF and no keys yet: its id and its authenticator. */
  async function ownersPasskey(): Promise<{ id: string; key: SoftAuthenticator }> {
    const key = new SoftAuthenticator(origin());
    const started = await send('owner', 'POST', '/api/webauthn/attestation-options', secretOf('owner'));
    const saved = await send('owner', 'POST', '/api/webauthn', { deviceResponse: key.register(started.body.options), name: 'Key', token: started.body.token, supportsPrf: true });
    expect(saved.status, saved.text).toBe(200);
    return { id: saved.body.id as string, key };
  }

  it.each(PK_ROWS)('%s', async (route, want) => {
    const [method, path] = route.split(' ') as [string, string];
    const got: Record<string, Outcome> = {};
    for (const who of PK_CALLERS) {
      const passkey = await ownersPasskey();
      let json: unknown;
      if (path === '/api/webauthn' && method === 'POST') {
        const ownersOptions = await send('owner', 'POST', '/api/webauthn/attestation-options', secretOf('owner'));
        json = { deviceResponse: new SoftAuthenticator(origin()).register(ownersOptions.body.options), name: 'Key', token: ownersOptions.body.token, supportsPrf: false };
      } else if (method === 'PUT') {
        // The caller's own token, answered by the owner's passkey.
        const options = who === 'nobody' ? await send('owner', 'POST', '/api/webauthn/assertion-options', secretOf('owner')) : await send(who, 'POST', '/api/webauthn/assertion-options', secretOf(who));
        const userHandle = Buffer.from(actors.user.userId.replace(/-/g, ''), 'hex').toString('base64url');
        json = { deviceResponse: JSON.parse(passkey.key.assert(options.body.options, { userHandle })) as unknown, token: options.body.token, encryptedUserKey: KEY, encryptedPublicKey: ENC, encryptedPrivateKey: ENC };
      } else if (method === 'POST') json = secretOf(who);
      const res = await send(who, method, path.replace('{id}', passkey.id), json);
      if (res.status >= 500) got[who] = `${res.status} ${res.text}`;
      else if (route === 'GET /api/webauthn' && res.status === 200) got[who] = (res.body.data as { id: string }[]).some((p) => p.id === passkey.id) ? 'listed' : 'empty';
      else got[who] = res.status;
      // Each caller meets a fresh passkey; the owner keeps at most five.
      await server.database.db.deleteFrom('webauthn_credentials').where('user_id', '=', actors.user.userId).execute();
    }
    expect(got).toEqual(want);
  });
});

// ---------------------------------------------------------------------------------------
// A device's push token: the account's own devices only; clearing is anonymous, as officially
// ---------------------------------------------------------------------------------------

/**
 * The push token routes against the device's owner (a plain member), the organization's admin
 * and owner, a stranger and nobody, each on a fresh device of the owner's that holds a token.
 * Setting it reaches only the owner's own device (another account's is 404, as an unknown one);
 * clearing it needs no session, as the official `clear-token` is AllowAnonymous. A refused call
 * must leave the token, an allowed one must have changed it.
 */
const PT_CALLERS = ['owner', 'orgAdmin', 'orgOwner', 'stranger', 'nobody'] as const;
type PtCaller = (typeof PT_CALLERS)[number];
const PT_ACTOR: Record<Exclude<PtCaller, 'nobody'>, Caller> = { owner: 'user', orgAdmin: 'admin', orgOwner: 'owner', stranger: 'stranger' };
const OWN_DEVICE = { owner: 200, orgAdmin: 404, orgOwner: 404, stranger: 404, nobody: 401 } as const;
const ANYONE = { owner: 200, orgAdmin: 200, orgOwner: 200, stranger: 200, nobody: 200 } as const;

const PT_ROWS: [string, Record<PtCaller, Outcome>][] = [
  ['PUT /api/devices/identifier/{identifier}/token', OWN_DEVICE],
  ['POST /api/devices/identifier/{identifier}/token', OWN_DEVICE],
  ['PUT /api/devices/identifier/{identifier}/clear-token', ANYONE],
  ['POST /api/devices/identifier/{identifier}/clear-token', ANYONE],
];

describe("who may set or clear a device's push token", () => {
  it.each(PT_ROWS)('%s', async (route, want) => {
    const [method, path] = route.split(' ') as [string, string];
    const got: Record<string, Outcome> = {};
    for (const who of PT_CALLERS) {
      const identifier = randomUUID();
      const stamp = new Date().toISOString();
      await server.database.db
        .insertInto('devices')
        .values({ id: randomUUID(), user_id: actors.user.userId, type: 0, identifier, name: 'phone', push_token: 'before', creation_date: stamp, revision_date: stamp, encrypted_user_key: null, encrypted_public_key: null, encrypted_private_key: null })
        .execute();
      const res = await server.request(method, path.replace('{identifier}', identifier), {
        ...(who === 'nobody' ? {} : { token: actors[PT_ACTOR[who]].token }),
        headers: CLIENT,
        ...(path.endsWith('/token') ? { json: { pushToken: 'after' } } : {}),
      });
      const row = await server.database.db.selectFrom('devices').select('push_token').where('identifier', '=', identifier).executeTakeFirstOrThrow();
      const changed = row.push_token !== 'before';
      got[who] = res.status >= 500 ? `${res.status} ${res.text}` : res.status === 200 && !changed ? '200 but unchanged' : res.status !== 200 && changed ? `${res.status} but changed` : res.status;
    }
    expect(got).toEqual(want);
  });
});
