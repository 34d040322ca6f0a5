#!/usr/bin/env node
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import { COMMAND_HELP, COMMAND_NAMES, openMigratedDatabase, runOperatorCommand } from './commands/cli.js';
import { ConfigError, loadProcessConfig, type Config } from './config/config.js';
import { startTracing } from './features/operations/tracing-setup.js';
import { stdoutLogStream } from './logging.js';
import { stopOnSignals } from './shutdown.js';
import { giveBackStartMemory } from './shared/start-memory.js';
import { causeOf, StartupError } from './shared/startup-error.js';
import { STRONGROOM_VERSION } from './shared/version.js';
import { keepSelfSignedFresh, prepareHttps, selfSignedLogFields, trustInstructions } from './tls/https-options.js';

/**
 * `strongroom [serve]` runs the server; `strongroom migrate` only brings the schema up to date;
 * `strongroom license issue|issuer-key` signs organization licenses with this instance's key;
 * `strongroom users …` manages accounts, with exit codes of its own (docs/command-line.md);
 * `strongroom signing-key rotate|list` rotates the token signing key;
 * `strongroom backup <file>` / `strongroom restore <file>` copy the database and DATA_DIR (docs/operations.md).
 * `strongroom admin-token` makes the admin console's token and its ADMIN_TOKEN hash.
 * `strongroom orgs create|list|invite|accept|confirm` manages organizations as a user who types their master password.
 * `strongroom sm …` makes Secrets Manager projects, machine accounts, grants and access tokens as a user.
 * `strongroom help [<command>]`, `<command> --help` and `--version` print and exit 0.
 * `strongroom web-vault install <zip-or-folder>` checks and unpacks a web vault release (docs/web-vault.md).
 * Exit codes: 0 done, 1 an unexpected error, 2 a problem the operator can fix (settings, usage,
 * a file, the database or the port), printed as one line per problem.
 */
async function main(argv: string[]): Promise<number> {
  const command = argv[0] ?? 'serve';
  const helped = await help(command, argv.slice(1));
  if (helped !== null) return helped;
  if (command === 'serve') {
    await serve(loadProcessConfig());
    return -1;
  }
  const code = await runOperatorCommand(command, argv.slice(1));
  if (code !== null) return code;
  return unknownCommand(command);
}

async function unknownCommand(command: string): Promise<number> {
  const { nearestName } = await import('./commands/help.js');
  const nearest = nearestName(command, Object.keys(COMMAND_HELP));
  console.error(`Unknown command "${command}".${nearest ? ` Did you mean "${nearest}"?` : ''} Commands: serve (default), ${COMMAND_NAMES.join(', ')}; "strongroom --help" lists them.`);
  return 2;
}

/** Answers the exit code when argv asks for help or the version (printed), or null to run the command. */
async function help(command: string, args: string[]): Promise<number | null> {
  if (command === '--version' || command === '-v' || command === 'version') {
    process.stdout.write(`${STRONGROOM_VERSION}\n`);
    return 0;
  }
  const asked = command === 'help' || command === '--help' || command === '-h' ? args[0] : args[0] === '--help' || args[0] === '-h' ? command : null;
  if (asked === null) return null;
  const { overview } = await import('./commands/help.js');
  if (asked === undefined) {
    process.stdout.write(overview(COMMAND_HELP, STRONGROOM_VERSION));
    return 0;
  }
  const row = Object.hasOwn(COMMAND_HELP, asked) ? COMMAND_HELP[asked as keyof typeof COMMAND_HELP] : undefined;
  if (row === undefined) return unknownCommand(asked);
  process.stdout.write(`${await row.usage()}\n`);
  return 0;
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
  giveBackStartMemory();
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
