import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultHashingConcurrency, loadConfig } from './config.js';
import { renderEnvExample } from './env-example.js';
import { configProblems } from '../../test/support/config-problems.js';

/** The problems loadConfig reports for `env`; a test of a refusal fails when there is none. */
function problemsOf(env: Record<string, string>): string[] {
  const problems = configProblems(() => loadConfig(env));
  if (problems.length === 0) throw new Error('expected a ConfigError');
  return problems;
}

describe('configuration', () => {
  it('starts from safe defaults: self-hosted, SQLite under ./data, plain HTTP on loopback', () => {
    const config = loadConfig({});
    expect(config.host).toBe('127.0.0.1');
    expect(config.port).toBe(8080);
    expect(config.deployment).toBe('selfhosted');
    expect(config.selfHosted).toBe(true);
    expect(config.databaseUrl).toBe('sqlite:./data/strongroom.sqlite');
    expect(config.services).toEqual(['api', 'identity', 'events', 'notifications']);
    expect(config.servicePrefixes).toBe(true);
    expect(config.healthEnabled).toBe(false);
    expect(config.apiDocsEnabled).toBe(true);
    expect(config.tlsCertFile).toBeUndefined();
    expect(config.publicUrl).toBe('http://127.0.0.1:8080');
  });

  it('derives variant defaults for cloud: health on, API documentation off', () => {
    const config = loadConfig({ DEPLOYMENT: 'cloud' });
    expect(config.healthEnabled).toBe(true);
    expect(config.apiDocsEnabled).toBe(false);
    expect(loadConfig({ DEPLOYMENT: 'cloud', ENVIRONMENT: 'development' }).apiDocsEnabled).toBe(true);
    expect(loadConfig({ DEPLOYMENT: 'cloud', HEALTH_ENABLED: 'false' }).healthEnabled).toBe(false);
    expect(loadConfig({ HEALTH_ENABLED: 'true' }).healthEnabled).toBe(true);
  });

  it('hashes passwords on one fewer thread than the cores, at most two, unless PASSWORD_HASHING_CONCURRENCY says', () => {
    expect([1, 2, 3, 4, 16].map((cores) => defaultHashingConcurrency(cores))).toEqual([1, 1, 2, 2, 2]);
    expect(loadConfig({}).passwordHashingConcurrency).toBe(defaultHashingConcurrency());
    expect(loadConfig({ PASSWORD_HASHING_CONCURRENCY: '6' }).passwordHashingConcurrency).toBe(6);
  });

  it('reports every invalid setting at once, naming each variable', () => {
    const problems = problemsOf({
      PORT: 'eighty',
      DEPLOYMENT: 'moon',
      DATABASE_URL: 'mysql://db',
      SECRETS_MANAGER: 'perhaps',
      SERVICES: 'api,billing',
      REDIS_URL: 'http://cache',
    });
    const text = problems.join('\n');
    for (const name of ['PORT', 'DEPLOYMENT', 'DATABASE_URL', 'SECRETS_MANAGER', 'SERVICES', 'REDIS_URL']) {
      expect(text).toContain(`${name}:`);
    }
    expect(text).toContain('"eighty"');
  });

  it('names the expected type with its article', () => {
    const problems = problemsOf({ PORT: 'abc', OTEL_ENABLED: 'maybe', OTEL_TRACES_SAMPLER_ARG: 'half' });
    expect(problems).toContain('PORT: must be an integer (got "abc")');
    expect(problems).toContain('OTEL_ENABLED: must be a boolean (got "maybe")');
    expect(problems).toContain('OTEL_TRACES_SAMPLER_ARG: must be a number (got "half")');
  });

  it('never repeats the password of a rejected URL', () => {
    const text = problemsOf({ DATABASE_URL: 'postgress://strongroom:s3cret@db:5432/vault', REDIS_URL: 'http://:s3cret@cache' }).join('\n');
    expect(text).toContain('DATABASE_URL: must be sqlite:<path> or postgres://user:pass@host:port/db (got "postgress://strongroom:(hidden)@db:5432/vault")');
    expect(text).toContain('REDIS_URL:');
    expect(text).not.toContain('s3cret');
  });

  it('refuses a certificate without its key', () => {
    expect(problemsOf({ TLS_CERT_FILE: '/etc/cert.pem' }).join()).toContain('TLS_CERT_FILE and TLS_KEY_FILE');
  });

  it('serves HTTPS from certificate files without TLS_MODE, as before TLS_MODE existed', () => {
    const config = loadConfig({ TLS_CERT_FILE: '/etc/cert.pem', TLS_KEY_FILE: '/etc/key.pem' });
    expect(config.tlsMode).toBe('files');
    expect(config.publicUrl).toBe('https://127.0.0.1:8080');
    expect(loadConfig({ TLS_MODE: 'files', TLS_CERT_FILE: '/etc/cert.pem', TLS_KEY_FILE: '/etc/key.pem' }).tlsMode).toBe('files');
    expect(loadConfig({}).tlsMode).toBe('off');
  });

  it('defaults PUBLIC_URL to https in self-signed mode', () => {
    const config = loadConfig({ TLS_MODE: 'self-signed', PORT: '8443' });
    expect(config.tlsMode).toBe('self-signed');
    expect(config.publicUrl).toBe('https://127.0.0.1:8443');
    expect(config.identityUrl).toBe('https://127.0.0.1:8443/identity');
  });

  it('refuses contradictory TLS settings, saying what to change', () => {
    const files = { TLS_CERT_FILE: '/etc/cert.pem', TLS_KEY_FILE: '/etc/key.pem' };
    expect(problemsOf({ TLS_MODE: 'self-signed', ...files }).join()).toContain('TLS_MODE: "self-signed" makes its own certificate');
    expect(problemsOf({ TLS_MODE: 'off', ...files }).join()).toContain('TLS_MODE: "off" contradicts TLS_CERT_FILE');
    expect(problemsOf({ TLS_MODE: 'files' }).join()).toContain('TLS_MODE: "files" needs TLS_CERT_FILE and TLS_KEY_FILE');
    expect(problemsOf({ TLS_HOSTNAMES: 'vault.lan' }).join()).toContain('TLS_HOSTNAMES: only used with TLS_MODE=self-signed');
    expect(problemsOf({ TLS_MODE: 'plain' }).join()).toContain('TLS_MODE:');
  });

  it('makes the self-signed certificate for loopback, the PUBLIC_URL host and a specific HOST by default', () => {
    expect(loadConfig({ TLS_MODE: 'self-signed' }).tlsHostnames).toEqual(['localhost', '127.0.0.1', '::1']);
    expect(loadConfig({ TLS_MODE: 'self-signed', HOST: '192.168.1.20', PUBLIC_URL: 'https://Vault.Home.Arpa:8443' }).tlsHostnames).toEqual([
      'localhost',
      '127.0.0.1',
      '::1',
      'vault.home.arpa',
      '192.168.1.20',
    ]);
    expect(loadConfig({ TLS_MODE: 'self-signed', HOST: '0.0.0.0' }).tlsHostnames).toEqual(['localhost', '127.0.0.1', '::1']);
    expect(loadConfig({ TLS_MODE: 'self-signed', HOST: '::1' }).publicUrl).toBe('https://[::1]:8080');
    expect(loadConfig({}).tlsHostnames).toEqual([]);
  });

  it('takes TLS_HOSTNAMES as the whole list, checking each name', () => {
    expect(loadConfig({ TLS_MODE: 'self-signed', TLS_HOSTNAMES: ' vault.lan, 10.0.0.5 ,[fd00::5]' }).tlsHostnames).toEqual([
      'vault.lan',
      '10.0.0.5',
      'fd00::5',
    ]);
    const problems = problemsOf({ TLS_MODE: 'self-signed', TLS_HOSTNAMES: 'vault.lan,*.lan,bad name' }).join('\n');
    expect(problems).toContain('TLS_HOSTNAMES: "*.lan" is neither a host name nor an IP address');
    expect(problems).toContain('"bad name"');
    expect(problemsOf({ TLS_MODE: 'self-signed', TLS_HOSTNAMES: ' , ' }).join()).toContain('TLS_HOSTNAMES: lists no host name');
    expect(problemsOf({ TLS_MODE: 'self-signed', PUBLIC_URL: 'https://[vault' }).join()).toContain('PUBLIC_URL: not a valid URL');
    expect(problemsOf({ TLS_MODE: 'self-signed', TLS_HOSTNAMES: 'vault.lan', PUBLIC_URL: 'https://vault.example.com' }).join()).toContain(
      'TLS_HOSTNAMES: does not include "vault.example.com", the host of PUBLIC_URL',
    );
  });

  it('mounts a single service at the root and several under their prefixes', () => {
    expect(loadConfig({ SERVICES: 'identity' })).toMatchObject({ services: ['identity'], servicePrefixes: false });
    expect(loadConfig({ SERVICES: 'events, api' })).toMatchObject({ services: ['api', 'events'], servicePrefixes: true });
  });

  it('reads a JSON config file, with the environment taking precedence', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sr-config-'));
    const file = join(dir, 'config.json');
    writeFileSync(file, JSON.stringify({ port: 9000, deployment: 'cloud', logLevel: 'debug' }));
    const config = loadConfig({ CONFIG_FILE: file, LOG_LEVEL: 'error' });
    expect(config.port).toBe(9000);
    expect(config.deployment).toBe('cloud');
    expect(config.logLevel).toBe('error');
  });

  it('names unknown settings and bad values in the config file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sr-config-'));
    const file = join(dir, 'config.json');
    writeFileSync(file, JSON.stringify({ prot: 9000, port: 'x' }));
    const text = problemsOf({ CONFIG_FILE: file }).join('\n');
    expect(text).toContain('unknown setting "prot"; did you mean "port"?');
    expect(text).toContain('PORT:');
    expect(problemsOf({ CONFIG_FILE: join(dir, 'missing.json') }).join()).toContain('cannot read');
  });

  it('runs the emergency access jobs hourly unless EMERGENCY_ACCESS_JOB_INTERVAL_SECONDS says, from 1 s to a day', () => {
    expect(loadConfig({}).emergencyAccessJobIntervalSeconds).toBe(3600);
    expect(loadConfig({ EMERGENCY_ACCESS_JOB_INTERVAL_SECONDS: '2' }).emergencyAccessJobIntervalSeconds).toBe(2);
    for (const bad of ['0', '86401', 'hourly']) expect(problemsOf({ EMERGENCY_ACCESS_JOB_INTERVAL_SECONDS: bad }).join('\n')).toContain('EMERGENCY_ACCESS_JOB_INTERVAL_SECONDS:');
  });

  it('keeps .env.example in step with the schema', () => {
    const committed = readFileSync(new URL('../../.env.example', import.meta.url), 'utf8');
    expect(committed, 'run `npm run config:doc`').toBe(renderEnvExample());
  });
});
