import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadProcessConfig, processSettingsEnv } from './config.js';
import { checkProcessEnvNames } from './env-names.js';

function envFile(text: string): string {
  const path = join(mkdtempSync(join(tmpdir(), 'strongroom-env-')), '.env');
  writeFileSync(path, text);
  return path;
}

function load(text: string, processEnv: NodeJS.ProcessEnv = {}): { problems: string[]; warnings: string[]; port?: number } {
  const warnings: string[] = [];
  try {
    const config = loadProcessConfig(processEnv, envFile(text), (line) => warnings.push(line));
    return { problems: [], warnings, port: config.port };
  } catch (error) {
    if (error instanceof ConfigError) return { problems: error.problems, warnings };
    throw error;
  }
}

describe('names in .env and the environment', () => {
  it('refuses an unknown name in .env with the setting it most likely meant', () => {
    expect(load('TLS_MOD=self-signed\n').problems).toEqual(['.env: TLS_MOD is not a setting; did you mean TLS_MODE?']);
    expect(load('PROT=18080\n').problems).toEqual(['.env: PROT is not a setting; did you mean PORT?']);
    expect(load('tlsMode=off\n').problems).toEqual(['.env: tlsMode is not a setting; did you mean TLS_MODE?']);
    expect(load('WIDGETS=3\n').problems).toEqual(['.env: WIDGETS is not a setting; see .env.example for the settings']);
  });

  it('reports the unknown names together with the invalid values', () => {
    expect(load('PROT=1\nPORT=eighty\n').problems).toEqual(['.env: PROT is not a setting; did you mean PORT?', 'PORT: must be an integer (got "eighty")']);
  });

  it('reads the settings and CONFIG_FILE from .env, the environment winning', () => {
    const config = join(mkdtempSync(join(tmpdir(), 'strongroom-env-')), 'config.json');
    writeFileSync(config, '{}');
    expect(load(`PORT=18080\nCONFIG_FILE=${config}\n`)).toEqual({ problems: [], warnings: [], port: 18080 });
    expect(load('PORT=18080\n', { PORT: '9090' }).port).toBe(9090);
  });

  it("warns about Node's names in .env, which Node reads only at start, unless the process has them already", () => {
    const { problems, warnings } = load('NODE_EXTRA_CA_CERTS=/etc/ca.pem\n');
    expect(problems).toEqual([]);
    expect(warnings).toEqual(['.env: NODE_EXTRA_CA_CERTS is not a Strongroom setting and takes effect only in the environment the server starts in, not in .env']);
    expect(load('NODE_EXTRA_CA_CERTS=/etc/ca.pem\n', { NODE_EXTRA_CA_CERTS: '/etc/ca.pem' }).warnings).toEqual([]);
  });

  it('warns, without refusing, about environment names with a STRONGROOM_ prefix or one edit from a setting', () => {
    const { problems, warnings } = load('', { STRONGROOM_PORT: '1', TLS_MOD: 'files', HOME: '/root', PWD: '/', LOGNAME: 'root', PATH: '/bin' });
    expect(problems).toEqual([]);
    expect(warnings).toEqual([
      'environment: STRONGROOM_PORT is not a setting (settings have no STRONGROOM_ prefix); did you mean PORT?',
      'environment: TLS_MOD is not a setting; did you mean TLS_MODE?',
    ]);
    expect(checkProcessEnvNames({ STRONGROOM_TEST_DATABASE: 'x', NODE_OPTIONS: '--x', SSL_CERT_FILE: '/x' }, [])).toEqual([]);
  });

  it('checks the names of .env alike for the commands that read only some settings (web-vault)', () => {
    const warnings: string[] = [];
    expect(() => processSettingsEnv({}, envFile('PROT=18932\n'), (line) => warnings.push(line))).toThrow(
      new ConfigError(['.env: PROT is not a setting; did you mean PORT?']),
    );
    const env = processSettingsEnv({ DATA_DIR: '/srv/a', STRONGROOM_PORT: '1' }, envFile('DATA_DIR=/srv/b\nPORT=eighty\n'), (line) => warnings.push(line));
    // Only the names: the values are for the command to check, as it reads only the ones it needs.
    expect(env).toEqual({ DATA_DIR: '/srv/a', PORT: 'eighty', STRONGROOM_PORT: '1' });
    expect(warnings).toEqual(['environment: STRONGROOM_PORT is not a setting (settings have no STRONGROOM_ prefix); did you mean PORT?']);
  });
});
