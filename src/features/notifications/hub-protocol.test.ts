import { describe, expect, it } from 'vitest';
import { closeMessage, handshakeOk, invocation, parseHandshake, parseJson, parseMessagePack, PING, ProtocolError, varint } from './hub-protocol.js';

const hex = (frame: { data: Uint8Array | string }) => Buffer.from(frame.data).toString('hex');

/** Byte sequences seen on the wire with the real client (../shared/reference/notifications.md §2). */
describe('SignalR hub protocol bytes', () => {
  it('prefixes MessagePack messages with a VarInt length', () => {
    expect(Buffer.from(varint(101)).toString('hex')).toBe('65');
    expect(Buffer.from(varint(200)).toString('hex')).toBe('c801');
    expect(Buffer.from(varint(196)).toString('hex')).toBe('c401');
    expect(Buffer.from(varint(16384)).toString('hex')).toBe('808001');
  });

  it('writes Ping, Heartbeat, Close and the handshake reply as the official server does', () => {
    expect(hex(PING.messagepack)).toBe('029106');
    expect(PING.json.data).toBe('{"type":6}\u001e');
    expect(hex(invocation('Heartbeat', []).messagepack)).toBe(`109601 80c0a9${Buffer.from('Heartbeat').toString('hex')}9090`.replace(/ /g, ''));
    expect(invocation('Heartbeat', []).json.data).toBe('{"type":1,"target":"Heartbeat","arguments":[]}\u001e');
    expect(hex(closeMessage('Server is shutting down', true).messagepack)).toBe(`1b9307b7${Buffer.from('Server is shutting down').toString('hex')}c3`);
    expect(hex(closeMessage(null).messagepack)).toBe('039207c0');
    expect(handshakeOk('messagepack')).toEqual({ binary: true, data: Uint8Array.of(0x7b, 0x7d, 0x1e) });
  });

  it('writes a ReceiveMessage with dates as MessagePack timestamps (the 202-byte SyncCipherUpdate)', () => {
    const bytes = invocation('ReceiveMessage', [
      {
        Type: 0,
        Payload: {
          Id: 'c1c1c1c1-0000-0000-0000-0000000000c1',
          UserId: '11111111-1111-1111-1111-111111111111',
          OrganizationId: null,
          CollectionIds: null,
          RevisionDate: new Date('2026-08-21T10:00:00.123Z'),
        },
        ContextId: 'device-other',
      },
    ]).messagepack.data as Uint8Array;
    expect(bytes.length).toBe(202);
    expect(Buffer.from(bytes.subarray(0, 3)).toString('hex')).toBe('c80196');
    expect(Buffer.from(bytes).toString('hex')).toContain('d7ff1d5353006a8821a0');
  });

  it('reads the handshake, also with messages after it in the same frame', () => {
    const frame = Buffer.concat([Buffer.from('{"protocol":"messagepack","version":1}\u001e'), Buffer.from('029106', 'hex')]);
    const result = parseHandshake(frame)!;
    expect(result.protocol).toBe('messagepack');
    expect(parseMessagePack(result.rest)).toEqual([{ type: 'ping' }]);
    expect(parseHandshake(Buffer.from('{"protocol":"json"'))).toBeUndefined();
  });

  it('reads several messages in one frame and refuses malformed ones', () => {
    expect(parseMessagePack(Buffer.from('029106039207c0', 'hex'))).toEqual([{ type: 'ping' }, { type: 'close' }]);
    expect(parseJson('{"type":6}\u001e{"type":1,"invocationId":"7","target":"x","arguments":[]}\u001e')).toEqual([
      { type: 'ping' },
      { type: 'invocation', invocationId: '7' },
    ]);
    expect(() => parseMessagePack(Buffer.from('059106', 'hex'))).toThrow(ProtocolError);
    expect(() => parseJson('{"type":6}')).toThrow(ProtocolError);
    expect(() => parseJson('nope\u001e')).toThrow(ProtocolError);
  });
});
