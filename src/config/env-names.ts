import type { TSchema } from 'typebox';
import { editDistance } from '../shared/edit-distance.js';
import { ConfigSchema, envName } from './settings.js';

/** Names the server reads besides its settings: CONFIG_FILE is read before the settings it names. */
const OTHER_STRONGROOM_NAMES = new Set(['CONFIG_FILE']);

/**
 * Names of Node and the system that people put beside settings. Node reads them only from the
 * environment it starts in, so in `.env` (read after start) they change nothing; that is worth a
 * warning, not a refusal, since the same file may also be handed to systemd or compose.
 */
const TOOL_NAMES = new Set([
  'NODE_OPTIONS',
  'NODE_EXTRA_CA_CERTS',
  'NODE_ENV',
  'UV_THREADPOOL_SIZE',
  'MALLOC_MMAP_THRESHOLD_',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'TZ',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'NO_PROXY',
]);

/**
 * Every setting's environment name, and the same squashed for matching; made once, since the
 * process environment is checked name by name at every start.
 */
interface SettingNames {
  all: ReadonlySet<string>;
  squashed: readonly { name: string; squashed: string }[];
}
let settingNames: SettingNames | undefined;
function known(): SettingNames {
  if (settingNames === undefined) {
    const all = Object.keys(ConfigSchema.properties as Record<string, TSchema>).map(envName);
    settingNames = { all: new Set(all), squashed: all.map((name) => ({ name, squashed: squashed(name) })) };
  }
  return settingNames;
}

/** Whether a name is read by Strongroom itself: a setting, or CONFIG_FILE. */
export function isStrongroomName(name: string): boolean {
  return OTHER_STRONGROOM_NAMES.has(name) || known().all.has(name);
}

/** Case and underscores aside, so that `tlsMode` and `TLSMODE` find TLS_MODE. */
function squashed(name: string): string {
  return name.replace(/_/g, '').toUpperCase();
}

/**
 * The setting a mistyped name most likely meant, or undefined when none is close: at most one
 * edit for short names, two from eight letters on, so that unrelated names are not matched.
 */
export function nearestSetting(name: string, within?: number): string | undefined {
  const wanted = squashed(name.replace(/^STRONGROOM_/i, ''));
  const allowed = within ?? (wanted.length >= 8 ? 2 : 1);
  let best: { name: string; distance: number } | undefined;
  for (const candidate of known().squashed) {
    // Names whose lengths differ by more than the edits allowed can never be near enough.
    if (Math.abs(candidate.squashed.length - wanted.length) > allowed) continue;
    const d = editDistance(wanted, candidate.squashed);
    if (d <= allowed && (best === undefined || d < best.distance)) best = { name: candidate.name, distance: d };
  }
  return best?.name;
}

function unknownText(name: string, source: string): string {
  const near = nearestSetting(name);
  const hint = near ? `; did you mean ${near}?` : '; see .env.example for the settings';
  return `${source}: ${name} is not a setting${hint}`;
}

/**
 * Checks the names of a `.env` file: an unknown one is a problem (a typo would otherwise leave
 * its setting at the default, silently), a name of Node's or the system's a warning, unless the
 * process was started with it already (systemd or compose read the same file).
 */
export function checkEnvFileNames(
  fileEnv: Record<string, string | undefined>,
  processEnv: NodeJS.ProcessEnv,
): { problems: string[]; warnings: string[] } {
  const problems: string[] = [];
  const warnings: string[] = [];
  for (const name of Object.keys(fileEnv)) {
    if (isStrongroomName(name)) continue;
    if (TOOL_NAMES.has(name)) {
      if (processEnv[name] !== fileEnv[name]) {
        warnings.push(`.env: ${name} is not a Strongroom setting and takes effect only in the environment the server starts in, not in .env`);
      }
      continue;
    }
    problems.push(unknownText(name, '.env'));
  }
  return { problems, warnings };
}

/**
 * Warnings for the process environment, which holds many names of other programs and so is not
 * refused: only a STRONGROOM_ name (settings have no prefix) or a name one edit from a setting.
 */
export function checkProcessEnvNames(processEnv: NodeJS.ProcessEnv, fileNames: readonly string[]): string[] {
  const warnings: string[] = [];
  for (const name of Object.keys(processEnv)) {
    if (fileNames.includes(name) || isStrongroomName(name) || TOOL_NAMES.has(name) || name.startsWith('STRONGROOM_TEST_')) continue;
    if (name.startsWith('STRONGROOM_')) {
      const near = nearestSetting(name);
      warnings.push(`environment: ${name} is not a setting (settings have no STRONGROOM_ prefix)${near ? `; did you mean ${near}?` : ''}`);
      continue;
    }
    // Short names (HOME, PWD) are one edit from too much to guess at.
    if (name.length < 6 || name !== name.toUpperCase()) continue;
    const near = nearestSetting(name, 1);
    if (near) warnings.push(`environment: ${name} is not a setting; did you mean ${near}?`);
  }
  return warnings;
}
