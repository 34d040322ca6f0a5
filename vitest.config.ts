import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
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
