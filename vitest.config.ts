import { configDefaults, defineConfig } from 'vitest/config';

// The official-client suites (test/e2e) prove what the clients send and read, which does not
// depend on the engine under the repositories: they run in the SQLite pass, and the PostgreSQL
// pass runs everything else (docs/architecture-tests.md). They are half of a pass's test time.
const onPostgres = process.env.DATABASE_URL?.startsWith('postgres') ?? false;

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    exclude: onPostgres ? [...configDefaults.exclude, 'test/e2e/**'] : configDefaults.exclude,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Three on the 2-core machines we run on: the official-client suites spend about half of
    // each `bw` command idle (the CLI lingers a second after its output), so a third worker
    // fills that time. The longest of them (bw-vault) is then the run's critical path.
    maxWorkers: 3,
    reporters: ['default'],
    globalSetup: ['test/global-setup.ts'],
  },
});
