import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../config/config.js';
import { StartupError } from '../shared/startup-error.js';
import { openMigratedDatabase } from './cli.js';

// Loading the add-on of another Node's ABI cannot happen on one Node: better-sqlite3's constructor,
// where it loads the add-on, throws here what Node throws then.
vi.mock('better-sqlite3', () => ({
  default: class {
    constructor() {
      throw Object.assign(
        new Error(
          "The module '/usr/lib/node_modules/strongroom/node_modules/better-sqlite3/build/Release/better_sqlite3.node'\nwas compiled against a different Node.js version using\nNODE_MODULE_VERSION 115. This version of Node.js requires\nNODE_MODULE_VERSION 137. Please try re-compiling or re-installing\nthe module (for instance, using `npm rebuild` or `npm install`).",
        ),
        { code: 'ERR_DLOPEN_FAILED' },
      );
    }
  },
}));

describe('starting on a better-sqlite3 built for another Node.js', () => {
  it('says to rebuild it, and blames neither DATA_DIR nor the database', async () => {
    const config = loadConfig({ DATA_DIR: mkdtempSync(join(tmpdir(), 'strongroom-abi-')) });
    const error = await openMigratedDatabase(config, 1).then(
      () => null,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(StartupError);
    expect((error as StartupError).setting).toBe('better-sqlite3');
    expect((error as StartupError).message).toBe(
      'better-sqlite3 was built for another Node.js (module version 115, this Node needs 137): run `npm rebuild better-sqlite3` in /usr/lib/node_modules/strongroom',
    );
    expect((error as StartupError).message).not.toMatch(/DATA_DIR|DATABASE_URL|cannot open/);
  });
});
