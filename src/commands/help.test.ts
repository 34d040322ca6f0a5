import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { killPrograms, PROJECT_ROOT, startProgram } from '../../test/support/program.js';
import { COMMAND_HELP, COMMAND_NAMES } from './cli.js';
import { nearestName, overview } from './help.js';
import { USERS_USAGE } from './users.js';

afterEach(killPrograms);

const packageVersion = (JSON.parse(readFileSync(`${PROJECT_ROOT}package.json`, 'utf8')) as { version: string }).version;

/** Runs the built `strongroom` with these arguments and no settings; its exit code and output. */
async function strongroom(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const run = startProgram({}, { args });
  const code = await run.exited;
  return { code, stdout: run.stdout(), stderr: run.stderr() };
}

describe('the command table', () => {
  it('has a summary and a usage text for serve and every operator command', async () => {
    expect(Object.keys(COMMAND_HELP).sort()).toEqual(['serve', ...COMMAND_NAMES].sort());
    for (const [name, row] of Object.entries(COMMAND_HELP)) {
      expect(row.summary.length, name).toBeLessThan(60);
      expect(await row.usage(), name).toContain(`strongroom ${name}`);
    }
  });

  it('suggests the nearest command for a slip, and none for a different word', () => {
    const names = Object.keys(COMMAND_HELP);
    expect(nearestName('srve', names)).toBe('serve');
    expect(nearestName('user', names)).toBe('users');
    expect(nearestName('usres', names)).toBe('users');
    expect(nearestName('Backpu', names)).toBe('backup');
    expect(nearestName('signingkey', names)).toBe('signing-key');
    expect(nearestName('deploy', names)).toBeUndefined();
  });

  it('lists every command in the overview', () => {
    const text = overview(COMMAND_HELP, '9.9.9');
    expect(text).toContain('Strongroom 9.9.9');
    for (const name of Object.keys(COMMAND_HELP)) expect(text).toMatch(new RegExp(`^  ${name} +\\S`, 'm'));
  });
});

describe('strongroom help and version, as an operator runs them', () => {
  it('prints the package version for --version, -v and version', async () => {
    for (const flag of ['--version', '-v', 'version']) {
      expect(await strongroom(flag)).toEqual({ code: 0, stdout: `${packageVersion}\n`, stderr: '' });
    }
  });

  it('lists the commands for --help, -h and help, without settings', async () => {
    for (const flag of ['--help', '-h', 'help']) {
      const { code, stdout } = await strongroom(flag);
      expect(code).toBe(0);
      for (const name of Object.keys(COMMAND_HELP)) expect(stdout).toContain(`  ${name} `);
    }
  });

  it("prints a command's usage for help <command> and <command> --help", async () => {
    expect(await strongroom('help', 'users')).toMatchObject({ code: 0, stdout: `${USERS_USAGE}\n` });
    const serve = await strongroom('serve', '--help');
    expect(serve.code).toBe(0);
    expect(serve.stdout).toContain('strongroom serve');
    expect((await strongroom('license', '-h')).stdout).toContain('strongroom license issue');
  });

  it('refuses an unknown command with exit 2, naming the nearest one', async () => {
    const slip = await strongroom('serv');
    expect(slip.code).toBe(2);
    expect(slip.stderr).toContain('Unknown command "serv". Did you mean "serve"?');
    const unknownHelp = await strongroom('help', 'usres');
    expect(unknownHelp.code).toBe(2);
    expect(unknownHelp.stderr).toContain('Did you mean "users"?');
  });
});
