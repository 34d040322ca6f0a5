import { ConfigError } from '../../src/config/config.js';

/** The problems of the ConfigError `load` throws, or none when it loads; any other error is thrown. */
export function configProblems(load: () => unknown): string[] {
  try {
    load();
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}
