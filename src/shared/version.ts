import packageJson from '../../package.json' with { type: 'json' };

/**
 * This release of Strongroom, as package.json names it. Compiled into the build rather than read
 * at run time: the bundle's chunks sit at other depths than src/, and package.json is already an
 * input of the build (scripts/build-if-stale.mjs), so a version bump builds again.
 */
export const STRONGROOM_VERSION: string = packageJson.version;
