/**
 * Runs before each test file. Test files share their worker process and its loaded modules
 * (vitest.config.ts, `isolate: false`), so the test helpers' per-process memory is reset here to
 * what a fresh process would have.
 */
import { forgetTestAccounts } from './support/accounts.js';
import { rewindKeyPool } from './support/key-pool.js';
import { forgetSecrets } from './support/log-audit.js';

forgetTestAccounts();
rewindKeyPool();
forgetSecrets();
