import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // The official-client suites start CLI processes; two at a time suits a 2-core machine.
    maxWorkers: 2,
    reporters: ['default'],
    globalSetup: ['test/global-setup.ts'],
  },
});
