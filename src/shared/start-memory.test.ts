import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../test/support/program.js';

const run = promisify(execFile);

describe('giveBackStartMemory', () => {
  // In a process of its own: the collection is the whole process's, and --trace-gc says which kind ran.
  it('runs a memory-reducing collection and leaves the event loop running', async () => {
    const module = pathToFileURL(join(PROJECT_ROOT, 'src/shared/start-memory.ts')).href;
    const script = [
      `import { giveBackStartMemory } from ${JSON.stringify(module)};`,
      // What a start leaves: garbage in both generations.
      'let kept = []; for (let i = 0; i < 200000; i++) kept.push({ i, s: String(i) }); kept = null;',
      'giveBackStartMemory(50);',
      // Answered only if the loop is awake after the collection (disconnecting the inspector
      // session inside its callback left it asleep on Node 20).
      "setTimeout(() => { console.log('still running'); process.exit(0); }, 1500);",
    ].join('\n');
    const loader = pathToFileURL(join(PROJECT_ROOT, 'node_modules/tsx/dist/loader.mjs')).href;
    const { stdout } = await run(process.execPath, ['--trace-gc', '--import', loader, '--input-type=module', '--eval', script], { cwd: PROJECT_ROOT, timeout: 20_000, killSignal: 'SIGKILL' });
    expect(stdout).toMatch(/Mark-Compact \(reduce\).*low memory notification/);
    expect(stdout).toContain('still running');
  });
});
