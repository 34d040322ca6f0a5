import { createTwoFactorLogin } from './two-factor-login.service.js';
import { createTwoFactorSetup } from './two-factor-setup.service.js';

/**
 * Two-step login as the app wires it: setting providers up and checking them at login, each in
 * its own module, answered by one object for the routes, the admin console and the identity
 * service (which reads only the login half).
 */
export function createTwoFactorService(deps: Parameters<typeof createTwoFactorSetup>[0] & Parameters<typeof createTwoFactorLogin>[0]) {
  return { ...createTwoFactorSetup(deps), ...createTwoFactorLogin(deps) };
}

export type TwoFactorService = ReturnType<typeof createTwoFactorService>;
