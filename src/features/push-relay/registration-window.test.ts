import { describe, expect, it } from 'vitest';
import { recordingOutbox } from '../../../test/support/outbox.js';
import { createRelayRegistrations } from './relay-channel.js';

describe("a device's relay registrations", () => {
  it('go once at the first change and once more at the end of the window, however many changes came', async () => {
    const outbox = recordingOutbox();
    const registrations = createRelayRegistrations({ outbox, enabled: true, windowMs: 50 });
    for (let i = 0; i < 1000; i++) registrations.deviceTokenSet('d1', 'u1');
    registrations.deviceTokenCleared('d1');
    registrations.deviceTokenSet('d2', 'u2');
    expect(outbox.of('relay')).toEqual([
      { kind: 'register', deviceId: 'd1' },
      { kind: 'register', deviceId: 'd2' },
    ]);
    await new Promise((r) => setTimeout(r, 80));
    // The last change in the window was a clear: it goes, as it stands then.
    expect(outbox.of('relay').slice(2)).toEqual([{ kind: 'delete', deviceId: 'd1' }]);
    registrations.deviceTokenSet('d1', 'u1');
    expect(outbox.of('relay').slice(3)).toEqual([{ kind: 'register', deviceId: 'd1' }]);
  });
});
