import { createDeleteRecoverService } from './delete-recover.service.js';
import { createOperatorService } from './operator.service.js';
import { createPasswordService } from './password.service.js';
import { createProfileService } from './profile.service.js';
import { createRegistrationService } from './registration.service.js';

/**
 * The accounts feature as the app wires it: registration, the user's own profile and the
 * operator's use cases, each in its own module, answered by one object so the routes, the
 * operator commands and the admin console reach them through `features.accounts`.
 */
export function createAccountService(
  deps: Parameters<typeof createRegistrationService>[0] & Parameters<typeof createProfileService>[0] & Parameters<typeof createOperatorService>[0] &
    Parameters<typeof createDeleteRecoverService>[0],
) {
  return {
    ...createRegistrationService(deps),
    ...createProfileService(deps),
    ...createPasswordService(deps),
    ...createDeleteRecoverService(deps),
    ...createOperatorService(deps),
  };
}

export type AccountService = ReturnType<typeof createAccountService>;
