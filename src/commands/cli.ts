import { defaultDatabaseUrl, loadProcessConfig, processSettingsEnv, type Config } from '../config/config.js';
import type { Database } from '../db/database.js';
import { DatabaseNotReady, openReadyDatabase, type ReadyDatabase } from '../db/open.js';
import type { Tracing } from '../features/operations/tracing-setup.js';
import { systemClock } from '../shared/clock.js';
import { causeOf, StartupError, UsageError } from '../shared/startup-error.js';
import type { CommandHelp } from './help.js';

/** The operator commands besides `serve`, as `strongroom <command>` takes them. */
export const COMMAND_NAMES = ['migrate', 'license', 'users', 'signing-key', 'backup', 'restore', 'admin-token', 'orgs', 'sm', 'web-vault'] as const;

/**
 * `strongroom --help`, one row per command in the order listed. A command in COMMAND_NAMES
 * without a row here does not type-check. `usage` imports the command's module only when asked.
 */
export const COMMAND_HELP: Record<'serve' | (typeof COMMAND_NAMES)[number], CommandHelp> = {
  serve: { summary: 'Runs the server (the default when no command is given)', usage: async () => (await import('./help.js')).SERVE_USAGE },
  migrate: { summary: 'Brings the database schema up to date, then exits', usage: async () => (await import('./help.js')).MIGRATE_USAGE },
  license: { summary: 'Signs organization licenses with this instance\'s key', usage: async () => (await import('./license.js')).LICENSE_USAGE },
  users: { summary: 'Creates, lists, invites, disables and deletes accounts', usage: async () => (await import('./users.js')).USERS_USAGE },
  'signing-key': { summary: 'Rotates or lists the token signing keys', usage: async () => (await import('./signing-key.js')).SIGNING_KEY_USAGE },
  backup: { summary: 'Writes a backup archive of the database and DATA_DIR', usage: async () => (await import('./backup.js')).BACKUP_USAGE },
  restore: { summary: 'Restores a backup archive into DATA_DIR', usage: async () => (await import('./backup.js')).BACKUP_USAGE },
  'admin-token': { summary: 'Makes the admin console\'s token and its ADMIN_TOKEN hash', usage: async () => (await import('./admin-token.js')).ADMIN_TOKEN_USAGE },
  orgs: { summary: 'Creates organizations; invites, accepts, confirms members', usage: async () => (await import('./orgs.js')).ORGS_USAGE },
  sm: { summary: 'Projects, machine accounts, grants, tokens and secrets', usage: async () => (await import('./sm.js')).SM_USAGE },
  'web-vault': { summary: 'Checks and installs an official web vault release', usage: async () => (await import('./web-vault.js')).WEB_VAULT_USAGE },
};

/**
 * Runs an operator command and answers its exit code: 0 done, 2 a problem the operator can fix
 * (docs/command-line.md); anything else is thrown. Each command's code is loaded when it runs,
 * so that serving loads none of it (nor tar, hash-wasm). Answers null for a name it does not know.
 */
export async function runOperatorCommand(command: string, args: string[]): Promise<number | null> {
  // Needs no settings: the operator runs it to make the setting.
  if (command === 'admin-token') {
    const { runAdminTokenCommand } = await import('./admin-token.js');
    return operatorCommand(() => runAdminTokenCommand(args));
  }
  // Reads the settings without the web vault folder's check: it is run to fix that folder.
  if (command === 'web-vault') {
    const { runWebVaultCommand } = await import('./web-vault.js');
    return runWebVaultCommand(args, { env: processSettingsEnv(), io: process });
  }
  if (!(COMMAND_NAMES as readonly string[]).includes(command)) return null;
  const config = loadProcessConfig();
  switch (command) {
    case 'migrate': {
      const { database, newerMigrations } = await openMigratedDatabase(config, 2);
      await database.close();
      process.stdout.write(
        newerMigrations.length > 0
          ? `The database is ahead of this release: it has ${newerMigrations.length} migration(s) of a newer release (${newerMigrations.join(', ')}); nothing was changed.\n`
          : 'The schema is up to date.\n',
      );
      return 0;
    }
    case 'license': {
      const { runLicenseCommand } = await import('./license.js');
      return printCommand(config, (db) => runLicenseCommand(args, { db, clock: systemClock }));
    }
    case 'users': {
      const { runUsersCommand } = await import('./users.js');
      return runUsersCommand(args, { config, io: process });
    }
    case 'signing-key': {
      const { runSigningKeyCommand } = await import('./signing-key.js');
      return printCommand(config, (db) => runSigningKeyCommand(args, { db, clock: systemClock, issuer: config.identityUrl }));
    }
    case 'backup': {
      const { runBackup } = await import('./backup.js');
      return operatorCommand(() => runBackup(args, config));
    }
    case 'orgs': {
      const { runOrgsCommand } = await import('./orgs.js');
      return runOrgsCommand(args, { config, io: process });
    }
    case 'sm': {
      const { runSmCommand } = await import('./sm.js');
      return runSmCommand(args, { config, io: process });
    }
    default: {
      const { runRestore } = await import('./backup.js');
      return operatorCommand(() => runRestore(args, config));
    }
  }
}

/** Opens the database for a command or the server, naming the setting behind it when it cannot be made ready. */
export async function openMigratedDatabase(config: Config, poolSize: number, tracing?: Tracing | null): Promise<ReadyDatabase> {
  try {
    return await openReadyDatabase(config.databaseUrl, { poolSize, sqliteSynchronous: config.sqliteSynchronous, sqliteCacheMegabytes: config.sqliteCacheMegabytes, postgresPreparedStatements: config.postgresPreparedStatements, ...(tracing ? { queryObserver: tracing.queries } : {}) });
  } catch (error) {
    if (!(error instanceof DatabaseNotReady)) throw error;
    const setting = config.databaseUrl === defaultDatabaseUrl(config.dataDir) ? 'DATA_DIR' : 'DATABASE_URL';
    throw new StartupError(setting, `${error.message}: ${causeOf(error.reason)}`);
  }
}

/** A command that prints what `run` answers on the migrated database; a usage error is exit code 2. */
async function printCommand(config: Config, run: (db: Database['db']) => Promise<string>): Promise<number> {
  const { database } = await openMigratedDatabase(config, 2);
  try {
    return await operatorCommand(() => run(database.db));
  } finally {
    await database.close();
  }
}

/** A command that needs no database opened for it; a usage error is exit code 2. */
async function operatorCommand(run: () => Promise<string>): Promise<number> {
  try {
    process.stdout.write(await run());
    return 0;
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    console.error(error.message);
    return 2;
  }
}
