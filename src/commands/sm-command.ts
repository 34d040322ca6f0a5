import type { UserSession } from './client/session.js';
import type { CommandIo } from './users.js';
import { CommandFailure, ExitCode, type OptionSpecs, type OptionValues } from './options.js';

/** One `strongroom sm <noun> <verb>`: its options, its checks before login, and its work as the user. */
export interface SmCommand<Prepared = unknown> {
  options: OptionSpecs;
  /** The command reads a secret's value after the password (standard input or a second prompt). */
  readsValue?: boolean;
  /** Checks the command line before the password is asked; answers what `run` needs from it. */
  prepare(values: OptionValues, now: Date): Prepared;
  run(context: { session: UserSession; values: OptionValues; io: CommandIo; value?: string }, prepared: Prepared): Promise<number>;
}

/** A command's own definition, typed by what its `prepare` answers, for the table of commands. */
export function smCommand<Prepared>(command: SmCommand<Prepared>): SmCommand {
  return command;
}

export interface MachineAccount {
  id: string;
  organizationId: string;
  name: string;
}

export interface Project {
  id: string;
  organizationId: string;
  name: string;
  read: boolean;
  write: boolean;
}

/**
 * Reads one thing by id as the user, or refuses naming it: the server answers 404 alike for
 * what does not exist and what the user may not see, and says so in words of its own.
 */
async function readNamed<T>(session: UserSession, path: string, what: string, id: string): Promise<T> {
  try {
    return await session.request<T>('GET', path);
  } catch (error) {
    if (!(error instanceof CommandFailure) || error.exitCode !== ExitCode.Refused) throw error;
    throw new CommandFailure(`There is no ${what} ${id} that ${session.email} can reach (${error.message}).`, ExitCode.Refused);
  }
}

export function readMachineAccount(session: UserSession, id: string): Promise<MachineAccount> {
  return readNamed(session, `/api/service-accounts/${id}`, 'machine account', id);
}

export function readProject(session: UserSession, id: string): Promise<Project> {
  return readNamed(session, `/api/projects/${id}`, 'project', id);
}
