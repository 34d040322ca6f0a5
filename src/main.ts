#!/usr/bin/env node
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import { ConfigError, defaultDatabaseUrl, loadProcessConfig, type Config } from './config/config.js';
import type { Database } from './db/database.js';
import { DatabaseNotReady, openReadyDatabase, type ReadyDatabase } from './db/open.js';
import { startTracing, type Tracing } from './features/operations/tracing-setup.js';
import { systemClock } from './shared/clock.js';
import { stdoutLogStream } from './logging.js';
import { stopOnSignals } from './shutdown.js';
import { causeOf, StartupError, UsageError } from './shared/startup-error.js';
import { keepSelfSignedFresh, prepareHttps, selfSignedLogFields, trustInstructions } from './tls/https-options.js';

/**
 * `strongroom [serve]` runs the server; `strongroom migrate` only brings the schema up to date;
 * `strongroom license issue|issuer-key` signs organization licenses with this instance's key;
 * `strongroom users …` manages accounts, with exit codes of its own (docs/command-line.md);
 * `strongroom signing-key rotate|list` rotates the token signing key;
 * `strongroom backup <file>` / `strongroom restore <file>` copy the database and DATA_DIR (docs/operations.md).
 * `strongroom admin-token` makes the admin console's token and its ADMIN_TOKEN hash.
 * Exit codes: 0 done, 1 an unexpected error, 2 a problem the operator can fix (settings, usage,
 * a file, the database or the port), printed as one line per problem.
 */
async function main(argv: string[]): Promise<number> {
  const command = argv[0] ?? 'serve';
  // Each command's code is loaded when it runs, so that serving loads none of it (nor tar, hash-wasm).
  // Needs no settings: the operator runs it to make the setting.
  if (command === 'admin-token') {
    const { runAdminTokenCommand } = await import('./features/admin/admin-token.js');
    return operatorCommand(() => runAdminTokenCommand(argv.slice(1)));
  }
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
      const { runLicenseCommand } = await import('./features/organizations/license-command.js');
      return printCommand(config, (db) => runLicenseCommand(argv.slice(1), { db, clock: systemClock }));
    }
    case 'users': {
      const { runUsersCommand } = await import('./features/accounts/users-command.js');
      return runUsersCommand(argv.slice(1), { config, io: process });
    }
    case 'signing-key': {
      const { runSigningKeyCommand } = await import('./features/identity/signing-key-command.js');
      return printCommand(config, (db) => runSigningKeyCommand(argv.slice(1), { db, clock: systemClock, issuer: config.identityUrl }));
    }
    case 'backup': {
      const { runBackup } = await import('./features/operations/backup.js');
      return operatorCommand(() => runBackup(argv.slice(1), config));
    }
    case 'restore': {
      const { runRestore } = await import('./features/operations/backup.js');
      return operatorCommand(() => runRestore(argv.slice(1), config));
    }
    case 'serve':
      await serve(config);
      return -1;
    default:
      console.error(`Unknown command "${command}". Commands: serve (default), migrate, license, users, signing-key, backup, restore, admin-token.`);
      return 2;
  }
}

async function serve(config: Config): Promise<void> {
  const https = await prepareHttps(config);
  // Loads OpenTelemetry only when OTEL_ENABLED is on.
  const tracing = await startTracing(config);
  const { database, newerMigrations } = await openMigratedDatabase(config, config.databasePoolSize, tracing);
  let app: FastifyInstance;
  try {
    app = await buildApp({ config, database, logStream: stdoutLogStream(), tracing, ...(https ? { https } : {}) });
  } catch (error) {
    await database.close();
    throw error;
  }
  try {
    await app.listen({ host: config.host, port: config.port });
  } catch (error) {
    await app.close();
    await database.close();
    throw listenProblem(config, error) ?? error;
  }
  let stopRenewal: (() => void) | undefined;
  if (https?.selfSigned) {
    app.log.info(selfSignedLogFields(https.selfSigned), 'serving HTTPS with the local certificate authority in DATA_DIR/tls');
    process.stderr.write(trustInstructions(https.selfSigned));
    stopRenewal = keepSelfSignedFresh(app.server, config, app.log, https.cert);
  }
  if (newerMigrations.length > 0) {
    // A rolling upgrade's older instance: it serves on the newer schema (docs/operations.md, Upgrades).
    app.log.warn({ newerMigrations }, 'the database schema is ahead of this release; finish the upgrade of this instance');
  }
  app.log.info({ services: config.services, deployment: config.deployment, engine: database.engine }, 'Strongroom is ready');
  stopOnSignals(
    app,
    async () => {
      stopRenewal?.();
      await database.close();
      await tracing?.shutdown();
    },
    config.shutdownTimeoutSeconds,
  );
}

/** Opens the database for a command, naming the setting behind it when it cannot be made ready. */
async function openMigratedDatabase(config: Config, poolSize: number, tracing?: Tracing | null): Promise<ReadyDatabase> {
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

function listenProblem(config: Config, error: unknown): StartupError | undefined {
  const where = `${config.host}:${config.port}`;
  switch ((error as NodeJS.ErrnoException).code) {
    case 'EADDRINUSE':
      return new StartupError('PORT', `${where} is already in use by another program`);
    case 'EACCES':
      return new StartupError('PORT', `not allowed to listen on ${where} (ports below 1024 need root or CAP_NET_BIND_SERVICE)`);
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new StartupError('HOST', `cannot listen on ${config.host}: ${causeOf(error)}`);
    default:
      return undefined;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (error: unknown) => {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(2);
    }
    if (error instanceof StartupError) {
      console.error(`Strongroom cannot start: ${error.message}`);
      process.exit(2);
    }
    console.error(error);
    process.exit(1);
  },
);
