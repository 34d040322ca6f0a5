#!/usr/bin/env node
import { buildApp } from './app.js';
import { ConfigError, loadConfig, type Config } from './config/config.js';
import { openDatabase } from './db/database.js';
import { migrateToLatest } from './db/migrate.js';
import { runLicenseCommand, UsageError } from './features/organizations/license-command.js';
import { runUsersCommand } from './features/accounts/users-command.js';
import { systemClock } from './clock.js';

/**
 * `strongroom [serve]` runs the server; `strongroom migrate` only brings the schema up to date;
 * `strongroom license issue|issuer-key` signs organization licenses with this instance's key;
 * `strongroom users …` manages accounts (docs/command-line.md).
 */
async function main(argv: string[]): Promise<number> {
  const command = argv[0] ?? 'serve';
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      return 2;
    }
    throw error;
  }

  switch (command) {
    case 'migrate': {
      const database = openDatabase(config.databaseUrl, { poolSize: 2 });
      try {
        const { applied } = await migrateToLatest(database);
        process.stdout.write(applied.length ? `Applied: ${applied.join(', ')}\n` : 'The schema is up to date.\n');
      } finally {
        await database.close();
      }
      return 0;
    }
    case 'license': {
      const database = openDatabase(config.databaseUrl, { poolSize: 2 });
      try {
        await migrateToLatest(database);
        process.stdout.write(await runLicenseCommand(argv.slice(1), { db: database.db, clock: systemClock }));
      } catch (error) {
        if (!(error instanceof UsageError)) throw error;
        console.error(error.message);
        return 2;
      } finally {
        await database.close();
      }
      return 0;
    }
    case 'users':
      return runUsersCommand(argv.slice(1), { config, io: process });
    case 'serve':
      await serve(config);
      return -1;
    default:
      console.error(`Unknown command "${command}". Commands: serve (default), migrate, license, users.`);
      return 2;
  }
}

async function serve(config: Config): Promise<void> {
  const database = openDatabase(config.databaseUrl, { poolSize: config.databasePoolSize });
  await migrateToLatest(database);
  const app = await buildApp({ config, database });
  await app.listen({ host: config.host, port: config.port });
  app.log.info({ services: config.services, deployment: config.deployment, engine: database.engine }, 'Strongroom is ready');

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'shutting down: no new connections; draining in-flight requests');
    const force = setTimeout(() => {
      app.log.error('in-flight requests did not finish in time; exiting');
      process.exit(1);
    }, config.shutdownTimeoutSeconds * 1000);
    force.unref();
    app
      .close()
      .then(() => database.close())
      .then(() => {
        app.log.info('stopped');
        process.exit(0);
      })
      .catch((error: unknown) => {
        app.log.error({ err: error }, 'error while shutting down');
        process.exit(1);
      });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
