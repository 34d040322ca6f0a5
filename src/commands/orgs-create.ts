import { existsSync, readFileSync } from 'node:fs';
import type { Config } from '../config/config.js';
import { sqlitePathOf, type Database } from '../db/database.js';
import { DatabaseNotReady, openReadyDatabase } from '../db/open.js';
import { systemClock } from '../shared/clock.js';
import { UsageError } from '../shared/startup-error.js';
import { generateRsaKeyPair } from '../features/accounts/client-keys.js';
import { encryptBytes, encryptString, generateSymmetricKey, rsaWrap } from './client/crypto.js';
import { runLicenseCommand } from './license.js';
import { emailOption, usage, type OrgsCommandDeps, type OrgsSubcommand } from './orgs-options.js';
import { CommandFailure, ExitCode, text, type OptionValues } from './options.js';

/** The first collection's name when --collection does not give one, as the web vault names it. */
const DEFAULT_COLLECTION = 'Default collection';
/** A license the command signs for its own instance: in practice it does not expire (100 years). */
const DEFAULT_EXPIRY = '36500d';
const NAME_MAX = 50;

/**
 * Opens the instance's database to sign a license with its issuer key. A missing SQLite file
 * means the command is not on the server's machine (or DATA_DIR is wrong): say how to go on.
 */
async function openInstanceDatabase(config: Config): Promise<Database> {
  const path = sqlitePathOf(config.databaseUrl);
  if (path !== null && path !== ':memory:' && !existsSync(path)) {
    throw new CommandFailure(
      `There is no database at ${path} to sign a license with: run the command on the server's machine (check DATA_DIR or DATABASE_URL), or pass --license <file> made there with "strongroom license issue".`,
      ExitCode.Usage,
    );
  }
  try {
    return (await openReadyDatabase(config.databaseUrl, { poolSize: 1, postgresPreparedStatements: config.postgresPreparedStatements })).database;
  } catch (error) {
    if (!(error instanceof DatabaseNotReady)) throw error;
    throw new CommandFailure(`The database is unavailable: ${error.message}`, ExitCode.DatabaseUnavailable);
  }
}

/** Signs a license for the new organization with this instance's issuer key, as `strongroom license issue` does. */
async function signLicense(deps: OrgsCommandDeps, terms: { name: string; billingEmail: string; plan: string; expires: string }): Promise<string> {
  const database = deps.database ?? (await openInstanceDatabase(deps.config));
  try {
    return await runLicenseCommand(['issue', '--name', terms.name, '--plan', terms.plan, '--expires', terms.expires, '--billing-email', terms.billingEmail], {
      db: database.db,
      clock: deps.clock ?? systemClock,
    });
  } catch (error) {
    // The license command's own messages name the option (--plan, --expires); its usage text is not ours.
    if (error instanceof UsageError) throw new CommandFailure(error.message.split('\n\n')[0] ?? error.message, ExitCode.Usage);
    throw error;
  } finally {
    if (!deps.database) await database.close().catch(() => undefined);
  }
}

function readLicenseFile(file: string): string {
  let license: string;
  try {
    license = readFileSync(file, 'utf8');
  } catch (error) {
    throw new CommandFailure(`--license: cannot read ${file}: ${(error as Error).message}`, ExitCode.Usage);
  }
  // A file that is not a license at all is bad input (2), checked before the password is asked;
  // the server still judges a license's signature and terms.
  try {
    JSON.parse(license);
  } catch {
    throw new CommandFailure(`--license: ${file} is not a license file (not JSON); make one with "strongroom license issue".`, ExitCode.Usage);
  }
  return license;
}

interface CreateInput {
  owner: string;
  collection: string;
  /** Self-hosted: the license text to upload; null on a cloud deployment. */
  license: string | null;
  name: string | null;
  billingEmail: string;
}

/** Checks every option before anything is asked or sent. */
async function createInput(values: OptionValues, deps: OrgsCommandDeps): Promise<CreateInput> {
  const owner = emailOption(values, 'email');
  const collection = (text(values, 'collection') ?? DEFAULT_COLLECTION).trim();
  if (collection === '') throw new CommandFailure('--collection: the name is empty.', ExitCode.Usage);
  const licenseFile = text(values, 'license');
  const billingEmail = text(values, 'billing-email') === undefined ? owner : emailOption(values, 'billing-email');
  if (licenseFile !== undefined) {
    const conflicting = ['name', 'billing-email', 'plan', 'expires'].filter((o) => values[o] !== undefined);
    if (conflicting.length > 0) throw usage(`--license brings the organization's name, billing email and plan: drop ${conflicting.map((o) => `--${o}`).join(', ')}.`);
    return { owner, collection, license: readLicenseFile(licenseFile), name: null, billingEmail };
  }
  const name = text(values, 'name')?.trim();
  if (!name) throw usage('--name is required.');
  if (name.length > NAME_MAX) throw new CommandFailure(`--name: at most ${NAME_MAX} characters.`, ExitCode.Usage);
  if (!deps.config.selfHosted) {
    // Paid plans are bought in the cloud's billing pages; this command founds Free organizations there.
    if (values.plan !== undefined || values.expires !== undefined) throw usage('--plan and --expires apply to self-hosted instances only; a cloud deployment creates a Free organization.');
    return { owner, collection, license: null, name, billingEmail };
  }
  const license = await signLicense(deps, { name, billingEmail, plan: text(values, 'plan') ?? 'Free', expires: text(values, 'expires') ?? DEFAULT_EXPIRY });
  return { owner, collection, license, name, billingEmail };
}

export const createOrganizationCommand: OrgsSubcommand = {
  options: {
    email: { type: 'string' },
    name: { type: 'string' },
    'billing-email': { type: 'string' },
    collection: { type: 'string' },
    plan: { type: 'string' },
    expires: { type: 'string' },
    license: { type: 'string' },
  },
  async run({ values, deps, login, print }) {
    const input = await createInput(values, deps);
    const session = await login(input.owner);
    // The organization's key is made here and reaches the server only wrapped: to the owner's
    // public key, and as the key its own private key and the collection name are encrypted with.
    const orgKey = generateSymmetricKey();
    const pair = await generateRsaKeyPair();
    const founding = {
      key: rsaWrap(orgKey, session.publicKeyB64),
      keys: { publicKey: pair.publicKeyB64, encryptedPrivateKey: encryptBytes(pair.privateKeyDer, orgKey) },
      collectionName: encryptString(input.collection, orgKey),
    };
    const org =
      input.license !== null
        ? await session.request<{ id: string; name: string; planType: number }>('POST', '/api/organizations/license', { license: input.license, ...founding })
        : await session.request<{ id: string; name: string; planType: number }>('POST', '/api/organizations', {
            name: input.name,
            billingEmail: input.billingEmail,
            planType: 0,
            ...founding,
          });
    const collections = await session.request<{ data: { id: string }[] }>('GET', `/api/organizations/${org.id}/collections`);
    const collectionId = collections.data[0]?.id ?? null;
    print(`Created the organization "${org.name}" (${org.id}), owned by ${input.owner}, with the collection "${input.collection}"${collectionId ? ` (${collectionId})` : ''}.`, {
      id: org.id,
      name: org.name,
      planType: org.planType,
      owner: input.owner,
      collection: { id: collectionId, name: input.collection },
    });
    return ExitCode.Ok;
  },
};
