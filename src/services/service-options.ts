import type { Config } from '../config/config.js';
import type { Clock } from '../shared/clock.js';
import type { Authenticator } from '../http/access.js';
import type { Features } from '../wiring.js';

/** What every service plugin receives: the configuration and the wired features. */
export interface ServiceOptions {
  config: Config;
  clock: Clock;
  authenticate: Authenticator;
  features: Features;
}
