import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { configDefaults, defineConfig } from 'vitest/config';

// The official-client suites (test/e2e) prove what the clients send and read, which does not
// depend on the engine under the repositories: they run in the SQLite pass, and the PostgreSQL
// pass runs everything else (docs/architecture-tests.md). They are half of a pass's test time.
const onPostgres = process.env.DATABASE_URL?.startsWith('postgres') ?? false;
const INCLUDE = ['src/**/*.test.ts', 'test/**/*.test.ts'];
const EXCLUDE = onPostgres ? [...configDefaults.exclude, 'test/e2e/**'] : configDefaults.exclude;
// Files that replace a module with vi.mock need a module graph of their own: found by reading
// them, so that a new one cannot leave its mock in a shared worker for the files after it.
const NEED_OWN_MODULES = ['src', 'test'].flatMap((dir) =>
  readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.test.ts'))
    .map((file) => join(dir, file))
    .filter((file) => /\bvi\.(do)?mock\(/.test(readFileSync(file, 'utf8'))),
);

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Three on the 2-core machines we run on: the official-client suites spend about half of
    // each `bw` command idle (the CLI lingers a second after its output), so a third worker
    // fills that time. The longest of them (bw-vault) is then the run's critical path.
    maxWorkers: 3,
    reporters: ['default'],
    globalSetup: ['test/global-setup.ts'],
    setupFiles: ['test/per-file-setup.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'shared',
          include: INCLUDE,
          exclude: [...EXCLUDE, ...NEED_OWN_MODULES],
          // Test files share their worker's loaded modules instead of importing the server's
          // 400 again for each file: that import was a quarter of a pass's CPU
          // (docs/benchmarks.md, "What the suite costs"). test/per-file-setup.ts resets the test
          // helpers' memory between files.
          isolate: false,
        },
      },
      { extends: true, test: { name: 'own-modules', include: NEED_OWN_MODULES, exclude: EXCLUDE } },
    ],
  },
});
