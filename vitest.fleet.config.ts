import { defineConfig } from 'vitest/config';

/** The fleet test (test/fleet): its own run and CI step, `npm run test:fleet`. */
export default defineConfig({
  test: {
    include: ['test/fleet/**/*.fleet.ts'],
    testTimeout: 600_000,
    hookTimeout: 600_000,
    pool: 'forks',
    maxWorkers: 1,
    reporters: ['default'],
  },
});
