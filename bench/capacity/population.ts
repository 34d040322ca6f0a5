/**
 * Seeds docs/capacity.md's population into a running server: people with vaults of the model's
 * sizes, organizations with collections, groups, organization items, Secrets Manager machines
 * and a directory-sync API key, and a few accounts for full-cost password logins.
 *
 * What costs nothing to prove goes straight into the database through the server's own row
 * writers (`newUserRow`, `insertCiphers`, `insertMembers`):
 * people's account rows with a one-iteration hash of their master password hash (verification
 * follows the count stored with each hash, so logging them in is cheap), their confirmed
 * memberships, and their personal items. Everything an organization's owner does through the
 * clients goes through the real routes: founding, importing its items and collections, groups,
 * Secrets Manager, the API key. The items are client-side encrypted (AES-256-CBC + HMAC, as the
 * clients do); people share one set of keys and a pool of encrypted items, which the server
 * cannot tell from distinct ones (it stores and answers ciphertext) and which keeps a seed of
 * millions of items to a few minutes.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { newUserRow } from '../../src/features/accounts/registration.service.js';
import { serializeCipherData, toCipherData } from '../../src/features/vault/cipher-data.js';
import { insertMembers } from '../../src/features/members/members.repository.js';
import { insertCiphers, newCipherRow } from '../../src/features/vault/ciphers.repository.js';
import type { CipherRequest } from '../../src/features/vault/ciphers.schemas.js';
import { openDatabase, type Database } from '../../src/db/database.js';
import { OrganizationUserStatusType, OrganizationUserType } from '../../src/platform/access/roles.js';
import { normalizeEmail } from '../../src/platform/auth/kdf.js';
import { createPasswordHasher } from '../../src/platform/auth/password-hasher.js';
import { insertUser } from '../../src/platform/auth/users.repository.js';
import { passwordGrantForm } from '../../test/support/accounts.js';
import { encryptText, generateRsaKeyPair, generateSymmetricKey, makeTestAccount, registerFinishBody, rsaEncryptToEncString, encryptToEncString, type SymmetricKey, type TestAccount } from '../../test/support/bw-crypto.js';
import { accessTokenBody, machineLoginForm } from '../../test/support/sm.js';
import { itemBody } from '../items.js';
import type { Client } from './client.js';
import { ITEMS_PER_COLLECTION, MACHINES_PER_1000, MEMBERS_PER_COLLECTION, MEMBERS_PER_GROUP, ORGANIZATION_SHARE, SECRETS_PER_ORGANIZATION, organizationSizes, vaultSizeOf } from './model.js';

export interface Person {
  index: number;
  email: string;
  userId: string;
  deviceIdentifier: string;
  token: string;
  refreshToken: string;
  /** A refresh in flight: refresh tokens rotate, so one person refreshes one at a time. */
  refreshing: boolean;
  org: Organization;
  /** Organization items this person sees (for the views and autofills clients report). */
  visibleOrgItems: string[];
  /** How many organization items this person's groups give them. */
  orgItemsSeen: number;
  /** Personal items the generator wrote and may edit, fetch or delete. */
  written: string[];
}

export interface Machine {
  form: Record<string, string>;
  token: string;
}

export interface Organization {
  id: string;
  key: SymmetricKey;
  ownerToken: string;
  /** The organization's API key (client secret of `organization.<id>`) and a token taken with it. */
  apiKey: string;
  apiToken: string;
  members: Person[];
  machines: Machine[];
}

export interface Population {
  people: Person[];
  organizations: Organization[];
  machines: Machine[];
  /** The shared keys everyone's items are encrypted with. */
  account: TestAccount;
  /** Accounts registered through the real route, whose password grant costs the server's full hash. */
  fullCostLogins: Record<string, string>[];
  /** Items in the database when the seed ended. */
  items: number;
}

const DEVICE = { deviceType: '8', deviceName: 'linux' };
const seedHasher = createPasswordHasher({ iterations: 1 });

/** Runs `work` over `items`, `width` at a time. */
export async function inParallel<T>(items: readonly T[], width: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, async () => {
    while (next < items.length) await work(items[next++]!);
  }));
}

/** A pool of item bodies encrypted with `key`, as the clients send them. */
function itemPool(key: SymmetricKey, size: number): CipherRequest[] {
  const holder = { userKey: key } as TestAccount;
  return Array.from({ length: size }, (_, i) => itemBody(holder, i) as unknown as CipherRequest);
}

/** Logs `person` in with the password grant (their stored hash has one iteration: cheap). */
export function personLogin(client: Client, account: TestAccount): (person: Person) => Promise<void> {
  return async (person) => {
    const answer = await client.send<{ access_token: string; refresh_token: string }>('POST', '/identity/connect/token', {
      form: passwordGrantForm({ ...account, email: person.email }, { ...DEVICE, deviceIdentifier: person.deviceIdentifier }),
    });
    person.token = answer.access_token;
    person.refreshToken = answer.refresh_token;
  };
}

export async function seedPopulation(client: Client, databaseUrl: string, people: number, log: (line: string) => void): Promise<Population> {
  const database = openDatabase(databaseUrl, { poolSize: 4 });
  try {
    return await seed(client, database, people, log);
  } finally {
    await database.close();
  }
}

async function seed(client: Client, database: Database, count: number, log: (line: string) => void): Promise<Population> {
  const started = performance.now();
  const account = makeTestAccount({ email: 'people@bench.test', derivation: 'stand-in' });
  const storedHash = await seedHasher.hash(account.masterPasswordHash);
  const now = new Date().toISOString();
  const db = database.db;

  // Accounts, as registration writes them.
  const rows = Array.from({ length: count }, (_, i) =>
    newUserRow(
      {
        email: normalizeEmail(`person${i}@bench.test`),
        name: `Person ${i}`,
        masterPasswordHash: storedHash,
        hint: null,
        key: account.encryptedUserKey,
        publicKey: account.publicKeyB64,
        privateKey: account.encryptedPrivateKey,
        kdf: { kdf: 0, iterations: 600_000, memory: null, parallelism: null },
      },
      now,
    ),
  );
  for (let at = 0; at < rows.length; at += 500) await db.transaction().execute(async (tx) => { for (const row of rows.slice(at, at + 500)) await insertUser(tx, row); });
  const sizes = organizationSizes(count);
  const organizations: Organization[] = [];
  const everyone: Person[] = [];
  let nextPerson = 0;
  const login = personLogin(client, account);
  const personOf = (i: number, org: Organization): Person => ({
    index: i,
    email: `person${i}@bench.test`,
    userId: rows[i]!.id,
    deviceIdentifier: randomUUID(),
    token: '',
    refreshToken: '',
    refreshing: false,
    org,
    visibleOrgItems: [],
    orgItemsSeen: 0,
    written: [],
  });
  log(`seed: ${count} accounts written (${((performance.now() - started) / 1000).toFixed(0)} s)`);

  // Organizations: the owner founds it and imports its items and collections through the routes.
  const machinesWanted = Math.max(1, Math.round((count * MACHINES_PER_1000) / 1000));
  for (const [o, wanted] of sizes.entries()) {
    const size = Math.min(wanted, count - nextPerson);
    if (size <= 0) break;
    const org = { id: '', key: generateSymmetricKey(), ownerToken: '', apiKey: '', apiToken: '', members: [], machines: [] } as Organization;
    const owner = personOf(nextPerson++, org);
    await login(owner);
    org.ownerToken = owner.token;
    const pair = generateRsaKeyPair();
    const founded = await client.send<{ id: string }>('POST', '/api/organizations', {
      token: owner.token,
      json: {
        name: `Organization ${o}`,
        billingEmail: `billing${o}@bench.test`,
        planType: 20,
        useSecretsManager: true,
        key: rsaEncryptToEncString(org.key.raw, account.publicKeyB64),
        keys: { publicKey: pair.publicKeyB64, encryptedPrivateKey: encryptToEncString(pair.privateKeyDer, org.key) },
        collectionName: encryptText('Default collection', org.key),
      },
    });
    org.id = founded.id;
    const collections = Math.max(1, Math.round(size / MEMBERS_PER_COLLECTION));
    const pool = itemPool(org.key, 40);
    await client.send('POST', `/api/ciphers/import-organization?organizationId=${org.id}`, {
      token: owner.token,
      json: {
        ciphers: Array.from({ length: collections * ITEMS_PER_COLLECTION }, (_, i) => ({ ...pool[i % pool.length], organizationId: org.id })),
        collections: Array.from({ length: collections }, (_, c) => ({ name: encryptText(`Team ${c}`, org.key) })),
        collectionRelationships: Array.from({ length: collections * ITEMS_PER_COLLECTION }, (_, i) => ({ key: i, value: Math.floor(i / ITEMS_PER_COLLECTION) })),
      },
    });
    const links = await db
      .selectFrom('collection_ciphers')
      .innerJoin('collections', 'collections.id', 'collection_ciphers.collection_id')
      .select(['collection_ciphers.collection_id as collectionId', 'collection_ciphers.cipher_id as cipherId'])
      .where('collections.organization_id', '=', org.id)
      .where('collections.name', '!=', '')
      .execute();
    const byCollection = new Map<string, string[]>();
    for (const link of links) {
      const items = byCollection.get(link.collectionId);
      if (items) items.push(link.cipherId);
      else byCollection.set(link.collectionId, [link.cipherId]);
    }
    const collectionIds = [...byCollection.keys()];

    // Members, confirmed, with the organization key wrapped for them; then the groups that
    // grant them their collections, through the routes.
    const members = Array.from({ length: size - 1 }, () => personOf(nextPerson++, org));
    const memberKey = rsaEncryptToEncString(org.key.raw, account.publicKeyB64);
    const memberIds = new Map<Person, string>();
    await insertMembers(
      db,
      members.map((member) => {
        const id = randomUUID();
        memberIds.set(member, id);
        return {
          id,
          organization_id: org.id,
          user_id: member.userId,
          email: null,
          key: memberKey,
          reset_password_key: null,
          status: OrganizationUserStatusType.Confirmed,
          type: OrganizationUserType.User,
          access_all: false,
          external_id: null,
          permissions: null,
          access_secrets_manager: false,
          creation_date: now,
          revision_date: now,
        };
      }),
    );
    const seesCollections = (person: Person) => Math.min(collectionIds.length, Math.max(1, Math.round((vaultSizeOf(person.index) * ORGANIZATION_SHARE) / ITEMS_PER_COLLECTION)));
    const groups = new Map<string, { collections: string[]; members: Person[] }>();
    const smallGroups = Math.max(1, Math.floor(size / MEMBERS_PER_GROUP));
    for (const [m, member] of members.entries()) {
      const wide = seesCollections(member);
      const first = wide >= collectionIds.length ? 0 : ((m % smallGroups) * wide) % collectionIds.length;
      const chosen = Array.from({ length: wide }, (_, k) => collectionIds[(first + k) % collectionIds.length]!);
      const name = `${wide}-${first}`;
      const group = groups.get(name) ?? { collections: chosen, members: [] };
      group.members.push(member);
      groups.set(name, group);
      const seen = chosen.flatMap((c) => byCollection.get(c) ?? []);
      member.orgItemsSeen = seen.length;
      member.visibleOrgItems = seen.slice(0, 40);
    }
    for (const [name, group] of groups) {
      await client.send('POST', `/api/organizations/${org.id}/groups`, {
        token: owner.token,
        json: {
          name: `Group ${name}`,
          accessAll: false,
          collections: group.collections.map((id) => ({ id, readOnly: false, hidePasswords: false, manage: false })),
          users: group.members.map((m) => memberIds.get(m)!),
        },
      });
    }
    org.members = [owner, ...members];
    organizations.push(org);
    everyone.push(owner, ...members);

    // The directory sync's API key, as an owner gets it in the admin console.
    const apiKey = await client.send<{ apiKey: string }>('POST', `/api/organizations/${org.id}/api-key`, { token: owner.token, json: { masterPasswordHash: account.masterPasswordHash } });
    org.apiKey = apiKey.apiKey;
    org.apiToken = (
      await client.send<{ access_token: string }>('POST', '/identity/connect/token', {
        form: { grant_type: 'client_credentials', scope: 'api.organization', client_id: `organization.${org.id}`, client_secret: apiKey.apiKey },
      })
    ).access_token;

    // Secrets Manager: a project of secrets and this organization's share of the machines.
    const machines = Math.max(1, Math.round((machinesWanted * size) / count));
    await seedMachines(client, org, owner.token, machines);
  }
  log(`seed: ${organizations.length} organizations with collections, groups and machines (${((performance.now() - started) / 1000).toFixed(0)} s)`);

  // Personal items: what each person sees beyond their organization's collections.
  const personalPool = itemPool(account.userKey, 200).map((body) => ({ body, data: serializeCipherData(toCipherData(body)) }));
  let items = 0;
  let batch: ReturnType<typeof newCipherRow>[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    const rowsNow = batch;
    batch = [];
    await db.transaction().execute((tx) => insertCiphers(tx, rowsNow));
  };
  for (const person of everyone) {
    const personal = Math.max(20, vaultSizeOf(person.index) - person.orgItemsSeen);
    for (let k = 0; k < personal; k++) {
      const { body, data } = personalPool[(person.index + k) % personalPool.length]!;
      batch.push(newCipherRow({ user_id: person.userId, organization_id: null }, body, data, now));
      if (batch.length >= 5000) await flush();
    }
    items += personal;
  }
  await flush();
  log(`seed: ${items} personal items (${((performance.now() - started) / 1000).toFixed(0)} s)`);

  await inParallel(everyone.filter((p) => !p.token), 8, login);
  log(`seed: ${everyone.length} people logged in (${((performance.now() - started) / 1000).toFixed(0)} s)`);

  // Accounts for the model's password logins: registered through the route, so their stored
  // hash has the server's full PASSWORD_ITERATIONS.
  const fullCostLogins: Record<string, string>[] = [];
  for (let i = 0; i < 4; i++) {
    const real = makeTestAccount({ email: `login${i}@bench.test`, derivation: 'stand-in' });
    await client.send('POST', '/identity/accounts/register/finish', { json: registerFinishBody(real) });
    fullCostLogins.push(passwordGrantForm(real, { ...DEVICE, deviceIdentifier: randomUUID() }));
  }
  const total = await db.selectFrom('ciphers').select(db.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  log(`seed: done in ${((performance.now() - started) / 1000).toFixed(0)} s, ${Number(total.n)} items in all`);
  return { people: everyone, organizations, machines: organizations.flatMap((o) => o.machines), account, fullCostLogins, items: Number(total.n) };
}

async function seedMachines(client: Client, org: Organization, ownerToken: string, machines: number): Promise<void> {
  const importId = randomUUID();
  await client.send('POST', `/api/sm/${org.id}/import`, {
    token: ownerToken,
    json: {
      projects: [{ id: importId, name: encryptText('deployments', org.key) }],
      secrets: Array.from({ length: SECRETS_PER_ORGANIZATION }, (_, i) => ({
        id: randomUUID(),
        key: encryptText(`SECRET_${i}`, org.key),
        value: encryptText(`value-${i}-${randomBytes(12).toString('base64')}`, org.key),
        note: encryptText('', org.key),
        projectIds: [importId],
      })),
    },
  });
  // The import gives its projects new ids.
  const projects = await client.send<{ data: { id: string }[] }>('GET', `/api/organizations/${org.id}/projects`, { token: ownerToken });
  const projectId = projects.data[0]!.id;
  for (let m = 0; m < machines; m++) {
    const machine = await client.send<{ id: string }>('POST', `/api/organizations/${org.id}/service-accounts`, { token: ownerToken, json: { name: encryptText(`deploy ${m}`, org.key) } });
    await client.send('PUT', `/api/service-accounts/${machine.id}/granted-policies`, {
      token: ownerToken,
      json: { projectGrantedPolicyRequests: [{ grantedId: projectId, read: true, write: false }] },
    });
    const secret = randomBytes(16);
    const made = await client.send<{ id: string; clientSecret: string }>('POST', `/api/service-accounts/${machine.id}/access-tokens`, {
      token: ownerToken,
      json: accessTokenBody(org.key, secret, 'capacity'),
    });
    const form = machineLoginForm(`0.${made.id}.${made.clientSecret}:${secret.toString('base64')}`);
    const token = (await client.send<{ access_token: string }>('POST', '/identity/connect/token', { form })).access_token;
    org.machines.push({ form, token });
  }
}
