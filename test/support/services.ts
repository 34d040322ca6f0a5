/**
 * Outside services some tests need: Redis, RabbitMQ and Chromium. `.ci/run` installs and starts
 * them and sets these variables; a test that needs one asks here.
 *
 * - In CI (`CI` set) a missing variable throws, so the test fails instead of passing unseen.
 * - Locally the test may skip: `testService` returns undefined after a loud warning. Start the
 *   service yourself and set the variable to run it (see the README's Test section).
 */
const VARIABLES = {
  redis: 'STRONGROOM_TEST_REDIS_URL',
  amqp: 'STRONGROOM_TEST_AMQP_URL',
  /** The RabbitMQ node behind STRONGROOM_TEST_AMQP_URL (`rabbitmqctl -n`), for tests that restart it. */
  amqpNode: 'STRONGROOM_TEST_AMQP_NODE',
  chromium: 'STRONGROOM_TEST_CHROMIUM',
  /** A prefix the packed tarball was installed into (scripts/install-tarball.sh), for the README's first run. */
  installedPackage: 'STRONGROOM_TEST_PREFIX',
} as const;

export type TestService = keyof typeof VARIABLES;

const warned = new Set<TestService>();

/** The service's URL (or Chromium's path), or undefined locally when it is not configured. */
export function testService(name: TestService): string | undefined {
  const variable = VARIABLES[name];
  const value = process.env[variable];
  if (value) return value;
  if (process.env.CI) throw new Error(`${variable} is not set: CI must start ${name} for the tests that need it (see .ci/run).`);
  if (!warned.has(name)) {
    warned.add(name);
    console.warn(`\n!!! SKIPPING the tests that need ${name}: set ${variable} to run them (.ci/run sets it). !!!\n`);
  }
  return undefined;
}
