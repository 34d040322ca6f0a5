/**
 * The container image, the compose file and the systemd unit, checked without a container
 * engine or a running systemd (docs/install.md, "What was verified"): every file the Dockerfile
 * copies exists and is not left out of the build context; its program and the unit's are the
 * package's `strongroom` program with `serve`; every setting they and compose.yaml name is a
 * real one; the profile `full` wires real services; and the health check, run as the image runs
 * it, passes against the built server with the image's settings and fails when nothing answers.
 * The unit's syntax and hardening are checked by systemd itself (deploy/verify-unit.sh, in CI).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { loadConfig } from '../src/config/config.js';
import { ConfigSchema, envName } from '../src/config/settings.js';
import { freePort, killPrograms, PROJECT_ROOT, startProgram } from './support/program.js';

const read = (path: string): string => readFileSync(join(PROJECT_ROOT, path), 'utf8');
const SETTINGS = new Set(Object.keys(ConfigSchema.properties).map(envName));
const packageJson = JSON.parse(read('package.json')) as { bin: Record<string, string> };

interface Instruction {
  stage: number;
  keyword: string;
  args: string;
}

/** The Dockerfile's instructions, continuation lines joined, comments dropped, each with its stage. */
function dockerfile(): Instruction[] {
  const lines = read('Dockerfile').replace(/\\\n/g, ' ').split('\n');
  const instructions: Instruction[] = [];
  let stage = -1;
  for (const line of lines.map((l) => l.trim())) {
    if (line === '' || line.startsWith('#')) continue;
    const [keyword = '', ...rest] = line.split(/\s+/);
    if (keyword.toUpperCase() === 'FROM') stage += 1;
    instructions.push({ stage, keyword: keyword.toUpperCase(), args: rest.join(' ') });
  }
  return instructions;
}

const instructions = dockerfile();
const runtimeStage = Math.max(...instructions.map((i) => i.stage));
const runtime = (keyword: string): Instruction[] => instructions.filter((i) => i.stage === runtimeStage && i.keyword === keyword);
/** The exec form (`["node", "..."]`) of an instruction's arguments, after any options before it. */
const json = (instruction: Instruction | undefined): string[] => JSON.parse(instruction?.args.replace(/^[^[]*/, '') ?? 'null') as string[];

/** ENV's names and values (`ENV A=1 B=2`). */
function imageEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const { args } of runtime('ENV')) for (const [, name = '', value = ''] of args.matchAll(/(\w+)=(\S+)/g)) env[name] = value;
  return env;
}

afterAll(() => killPrograms());

describe('the Dockerfile', () => {
  it('copies only files that exist and that .dockerignore keeps in the build context', () => {
    const ignored = read('.dockerignore')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '' && !l.startsWith('#') && !l.startsWith('!') && !l.includes('*'));
    const sources = instructions
      .filter((i) => i.keyword === 'COPY' && !i.args.startsWith('--from'))
      .flatMap((i) => i.args.split(/\s+/).slice(0, -1));
    expect(sources).toEqual(expect.arrayContaining(['package.json', 'package-lock.json', 'src', 'scripts']));
    for (const source of sources) {
      expect(existsSync(join(PROJECT_ROOT, source)), source).toBe(true);
      expect(ignored.filter((pattern) => source === pattern || source.startsWith(`${pattern}/`)), source).toEqual([]);
    }
  });

  it('runs the package`s strongroom program with serve, as an unprivileged user', () => {
    const entrypoint = json(runtime('ENTRYPOINT')[0]);
    const program = entrypoint.find((arg) => arg.startsWith('/app/'));
    expect(entrypoint[0]).toBe('node');
    expect(program).toBe(`/app/${packageJson.bin.strongroom}`);
    expect(json(runtime('CMD')[0])).toEqual(['serve']);
    // The runtime stage takes the build's dist/ at /app/dist, where the program is.
    expect(runtime('COPY').map((i) => i.args)).toContain('--from=build /build/dist ./dist');
    expect(runtime('WORKDIR')[0]?.args).toBe('/app');
    expect(runtime('RUN').some((i) => i.args.includes(`ln -s /app/${packageJson.bin.strongroom} /usr/local/bin/strongroom`))).toBe(true);
    const user = runtime('USER')[0]?.args;
    expect(user).toBeDefined();
    expect(user).not.toMatch(/^(root|0)(:|$)/);
  });

  it('sets only real settings, keeps DATA_DIR in the one volume and listens on every address', () => {
    const env = imageEnv();
    for (const name of Object.keys(env)) expect(SETTINGS.has(name), name).toBe(true);
    expect(env.DATA_DIR).toBe('/data');
    expect(env.HOST).toBe('0.0.0.0');
    expect(runtime('VOLUME').map((i) => i.args)).toEqual(['["/data"]']);
    expect(runtime('EXPOSE').map((i) => i.args)).toEqual([env.PORT]);
    expect(() => loadConfig(env)).not.toThrow();
  });

  it('labels the image with its source, version and licence (OCI)', () => {
    const labels = runtime('LABEL').map((i) => i.args).join(' ');
    for (const key of ['source', 'version', 'licenses']) expect(labels).toContain(`org.opencontainers.image.${key}=`);
    expect(labels).toContain(`org.opencontainers.image.licenses="${(JSON.parse(read('package.json')) as { license: string }).license}"`);
  });
});

describe('the image health check', () => {
  const folder = mkdtempSync(join(tmpdir(), 'sr-packaging-'));
  afterAll(() => rmSync(folder, { recursive: true, force: true }));
  // HEALTHCHECK --interval=... CMD ["node", "/app/..."]
  const check = json(runtime('HEALTHCHECK')[0]);
  const script = join(PROJECT_ROOT, (check[1] ?? '').replace(/^\/app\//, ''));

  function runCheck(env: Record<string, string>): { status: number | null; output: string } {
    const result = spawnSync(process.execPath, [script], { env: { PATH: process.env.PATH, ...env }, encoding: 'utf8', timeout: 10_000 });
    return { status: result.status, output: result.stderr + result.stdout };
  }

  it('is the copied script, run by node (the slim image has no curl)', () => {
    expect(check[0]).toBe('node');
    expect(runtime('COPY').map((i) => i.args)).toContain(`${check[1]?.replace(/^\/app\//, '')} .${check[1]?.replace(/^\/app/, '')}`);
    expect(existsSync(script)).toBe(true);
  });

  it('passes against the built server started with the image`s settings and compose`s HTTPS, and fails when nothing answers', async () => {
    const port = String(await freePort());
    // The image's settings, on loopback rather than every address, with compose's default TLS.
    const env = { ...imageEnv(), HOST: '127.0.0.1', PORT: port, DATA_DIR: join(folder, 'data'), TLS_MODE: 'self-signed', PASSWORD_ITERATIONS: '100000', LOG_LEVEL: 'warn' };
    const server = startProgram(env, { args: json(runtime('CMD')[0]) });
    const deadline = Date.now() + 60_000;
    let result = runCheck(env);
    while (result.status !== 0) {
      if (Date.now() > deadline || server.proc.exitCode !== null) throw new Error(`no healthy server: ${result.output}\n${server.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
      result = runCheck(env);
    }
    // The database probe when the health endpoints are on (the image turns them on)...
    expect(result.output).toContain('/api/healthz: 200');
    // ...and liveness when an operator turns them off.
    expect(runCheck({ ...env, HEALTH_ENABLED: 'false' })).toMatchObject({ status: 0, output: expect.stringContaining('/api/alive: 200') });
    // Plain HTTP against an HTTPS server gets no healthy answer.
    expect(runCheck({ ...env, TLS_MODE: 'off' }).status).toBe(1);
    server.proc.kill('SIGTERM');
    await server.exited;
    expect(runCheck(env)).toMatchObject({ status: 1, output: expect.stringContaining('ECONNREFUSED') });
  }, 90_000);
});

type ComposeService = {
  profiles?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string; required?: boolean }>;
  healthcheck?: { test: string[] };
  volumes?: string[];
};

describe('compose.yaml', () => {
  const compose = parseYaml(read('compose.yaml')) as { services: Record<string, ComposeService>; volumes: Record<string, unknown> };
  const strongroom = compose.services.strongroom!;
  /** compose's `${NAME:-default}` with the given variables, as `docker compose` fills it in. */
  const interpolate = (value: string, vars: Record<string, string>): string =>
    value.replace(/\$\{(\w+)(?::-([^}]*))?\}/g, (_match, name: string, fallback: string | undefined) => vars[name] || (fallback ?? ''));
  const fullEnv = (): Record<string, string> => {
    const vars: Record<string, string> = {};
    for (const line of read('deploy/compose-full.env').split('\n')) {
      const match = /^(\w+)=(.*)$/.exec(line.trim());
      if (match) vars[match[1]!] = interpolate(match[2]!, vars);
    }
    return vars;
  };
  const serverEnv = (vars: Record<string, string>): Record<string, string> =>
    Object.fromEntries(Object.entries(strongroom.environment ?? {}).map(([name, value]) => [name, interpolate(value, vars)]));

  it('names only real settings, and by default runs on SQLite in the volume with HTTPS', () => {
    for (const name of Object.keys(strongroom.environment ?? {})) expect(SETTINGS.has(name), name).toBe(true);
    expect(strongroom.profiles).toBeUndefined();
    expect(strongroom.volumes).toEqual(['strongroom-data:/data']);
    const config = loadConfig({ ...imageEnv(), ...serverEnv({}) });
    expect(config.databaseUrl).toBe('sqlite:/data/strongroom.sqlite');
    expect(config.tlsMode).toBe('self-signed');
    expect(config.redisUrl).toBeUndefined();
  });

  it('the profile full wires PostgreSQL, Redis and RabbitMQ through real settings, each waited for healthy', () => {
    const vars = fullEnv();
    expect(vars.COMPOSE_PROFILES).toBe('full');
    const config = loadConfig({ ...imageEnv(), ...serverEnv(vars) });
    const postgres = compose.services.postgres!;
    const rabbitmq = compose.services.rabbitmq!;
    // The URLs reach the compose services by name, with the accounts those services create.
    expect(new URL(config.databaseUrl)).toMatchObject({ protocol: 'postgres:', hostname: 'postgres', port: '5432', pathname: `/${postgres.environment?.POSTGRES_DB}` });
    expect(new URL(config.databaseUrl).username).toBe(postgres.environment?.POSTGRES_USER);
    expect(new URL(config.databaseUrl).password).toBe(interpolate(postgres.environment?.POSTGRES_PASSWORD ?? '', vars));
    expect(new URL(config.redisUrl ?? '')).toMatchObject({ protocol: 'redis:', hostname: 'redis' });
    expect(new URL(config.amqpUrl ?? '')).toMatchObject({ protocol: 'amqp:', hostname: 'rabbitmq', username: rabbitmq.environment?.RABBITMQ_DEFAULT_USER });
    expect(new URL(config.amqpUrl ?? '').password).toBe(interpolate(rabbitmq.environment?.RABBITMQ_DEFAULT_PASS ?? '', vars));
    for (const name of ['postgres', 'redis', 'rabbitmq']) {
      const service = compose.services[name]!;
      expect(service.profiles, name).toEqual(['full']);
      expect(service.healthcheck?.test[0], name).toBe('CMD');
      expect(strongroom.depends_on?.[name], name).toEqual({ condition: 'service_healthy', required: false });
    }
    for (const volume of Object.values(compose.services).flatMap((s) => s.volumes ?? [])) expect(compose.volumes).toHaveProperty(volume.split(':')[0]!);
  });
});

describe('the systemd unit', () => {
  const unit = read('deploy/strongroom.service');
  const values = (key: string): string[] => [...unit.matchAll(new RegExp(`^${key}=(.*)$`, 'gm'))].map((m) => m[1]!);

  it('runs the package`s strongroom program with serve, its DATA_DIR in the state folder', () => {
    const [program, ...args] = values('ExecStart')[0]!.split(/\s+/);
    expect(Object.keys(packageJson.bin)).toContain(program);
    expect(args).toEqual(json(runtime('CMD')[0]));
    const state = `/var/lib/${values('StateDirectory')[0]}`;
    expect(values('Environment')).toContain(`DATA_DIR=${state}`);
    expect(values('WorkingDirectory')).toEqual([state]);
    expect(values('User')).toEqual(['strongroom']);
    for (const setting of values('Environment').map((e) => e.split('=')[0]!)) expect(SETTINGS.has(setting) || setting === 'NODE_OPTIONS', setting).toBe(true);
  });

  it('has the hardening the issue asks for, and not MemoryDenyWriteExecute, which stops V8', () => {
    for (const key of ['NoNewPrivileges', 'ProtectHome', 'PrivateTmp', 'PrivateDevices', 'ProtectKernelTunables', 'ProtectKernelModules', 'ProtectKernelLogs', 'ProtectControlGroups', 'RestrictNamespaces', 'LockPersonality']) {
      expect(values(key), key).toEqual(['yes']);
    }
    expect(values('ProtectSystem')).toEqual(['strict']);
    expect(values('RestrictAddressFamilies')).toEqual(['AF_INET AF_INET6 AF_UNIX']);
    expect(values('SystemCallFilter')[0]).toBe('@system-service');
    expect(values('CapabilityBoundingSet')).toEqual(['']);
    expect(values('MemoryDenyWriteExecute')).toEqual([]);
  });
});
