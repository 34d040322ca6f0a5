import { describe, expect, it } from 'vitest';
import { createAudience } from './audience.js';

describe('a push channel audience', () => {
  it('reaches everyone until it has read who it reaches, then only them and those added since', async () => {
    let users = ['u1'];
    const audience = createAudience({ load: async () => users, log: { warn() {} }, refreshMs: 20 });
    expect(audience.reaches('anyone')).toBe(true);
    await audience.start();
    expect(audience.reaches('u1')).toBe(true);
    expect(audience.reaches('u2')).toBe(false);
    audience.add('u2');
    expect(audience.reaches('u2')).toBe(true);
    // A device registered on another instance is reached at the next read.
    users = ['u1', 'u3'];
    await new Promise((r) => setTimeout(r, 60));
    expect(audience.reaches('u3')).toBe(true);
    audience.stop();
  });

  it('reaches everyone again while it cannot read, and says so once', async () => {
    let fail = false;
    const warnings: string[] = [];
    const audience = createAudience({
      load: async () => {
        if (fail) throw new Error('database gone');
        return ['u1'];
      },
      log: { warn: (_obj, msg) => warnings.push(msg) },
      refreshMs: 10,
    });
    await audience.start();
    expect(audience.reaches('u2')).toBe(false);
    fail = true;
    await new Promise((r) => setTimeout(r, 50));
    expect(audience.reaches('u2')).toBe(true);
    expect(warnings).toHaveLength(1);
    audience.stop();
  });
});
