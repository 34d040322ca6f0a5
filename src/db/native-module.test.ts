import { describe, expect, it } from 'vitest';
import { StartupError } from '../shared/startup-error.js';
import { nativeModuleMismatch } from './native-module.js';

/** The error Node throws (code ERR_DLOPEN_FAILED) when an add-on was built for another Node's ABI. */
function dlopenFailure(file: string, builtFor: number, needs: number): Error {
  const error = new Error(
    `The module '${file}'\nwas compiled against a different Node.js version using\nNODE_MODULE_VERSION ${builtFor}. This version of Node.js requires\nNODE_MODULE_VERSION ${needs}. Please try re-compiling or re-installing\nthe module (for instance, using \`npm rebuild\` or \`npm install\`).`,
  );
  return Object.assign(error, { code: 'ERR_DLOPEN_FAILED' });
}

describe('nativeModuleMismatch', () => {
  it('names both module versions and the folder of a global install to rebuild in', () => {
    const error = dlopenFailure('/usr/lib/node_modules/strongroom/node_modules/better-sqlite3/build/Release/better_sqlite3.node', 115, 137);
    const mismatch = nativeModuleMismatch(error);
    expect(mismatch).toBeInstanceOf(StartupError);
    expect(mismatch?.message).toBe(
      'better-sqlite3 was built for another Node.js (module version 115, this Node needs 137): run `npm rebuild better-sqlite3` in /usr/lib/node_modules/strongroom',
    );
    expect(mismatch?.message).not.toContain('DATA_DIR');
  });

  it('names a checkout as the folder holding node_modules', () => {
    const mismatch = nativeModuleMismatch(dlopenFailure('/srv/strongroom/node_modules/better-sqlite3/build/Release/better_sqlite3.node', 127, 115));
    expect([mismatch?.builtFor, mismatch?.nodeNeeds, mismatch?.folder]).toEqual(['127', '115', '/srv/strongroom']);
  });

  it('finds the folder from the installed package when Node names no file', () => {
    const error = new Error('was compiled against a different Node.js version using\nNODE_MODULE_VERSION 115. This version of Node.js requires\nNODE_MODULE_VERSION 127.');
    expect(nativeModuleMismatch(error, () => '/opt/app/node_modules/better-sqlite3/lib/index.js')?.folder).toBe('/opt/app');
    expect(nativeModuleMismatch(error, () => null)?.folder).toBe('the folder Strongroom is installed in');
  });

  it('leaves other errors alone, a failed dlopen of another kind too', () => {
    expect(nativeModuleMismatch(Object.assign(new Error('unable to open database file'), { code: 'SQLITE_CANTOPEN' }))).toBeNull();
    expect(nativeModuleMismatch(Object.assign(new Error("Module did not self-register: '/x/better_sqlite3.node'."), { code: 'ERR_DLOPEN_FAILED' }))).toBeNull();
    expect(nativeModuleMismatch('NODE_MODULE_VERSION 1. This version of Node.js requires NODE_MODULE_VERSION 2')).toBeNull();
  });
});
