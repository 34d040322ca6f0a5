import type { Config } from '../config/config.js';
import { BadRequest } from './errors.js';

/**
 * Operations that exist on one deployment variant only answer the same 400 on the other,
 * with the official server's wording.
 */
export function requireVariant(config: Pick<Config, 'selfHosted'>, variant: 'cloud' | 'selfhosted'): void {
  if (variant === 'cloud' && config.selfHosted) throw new BadRequest('Only allowed when not self hosted.');
  if (variant === 'selfhosted' && !config.selfHosted) throw new BadRequest('Only allowed when self hosted.');
}
