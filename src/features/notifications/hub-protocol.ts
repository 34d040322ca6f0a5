import { decode, encode } from '@msgpack/msgpack';

/**
 * The SignalR hub protocols the hub speaks over its WebSockets (../shared/reference/
 * notifications.md §2): the JSON handshake ended by a record separator, then MessagePack
 * (`VarInt(length) ‖ msgpack(array)`, binary frames; what the apps use) or JSON (`json ‖ 0x1E`,
 * text frames), version 1.
 */

export const RECORD_SEPARATOR = 0x1e;

/** SignalR message types (HubProtocol.md). */
export const MessageType = { Invocation: 1, StreamItem: 2, Completion: 3, StreamInvocation: 4, CancelInvocation: 5, Ping: 6, Close: 7 } as const;

export type ProtocolName = 'messagepack' | 'json';

/** What goes out on a connection: bytes for a binary frame, or text for a text frame. */
export type Frame = { binary: true; data: Uint8Array } | { binary: false; data: string };

export interface HandshakeResult {
  /** The protocol asked for, when it is one the hub speaks. */
  protocol?: ProtocolName;
  /** The reply to send: `{}` on success, `{"error": …}` otherwise. */
  error?: string;
  /** Bytes after the handshake's separator in the same frame: ordinary hub messages. */
  rest: Uint8Array;
}

/**
 * Reads the handshake request, the first message on a connection. Returns undefined while the
 * separator has not arrived yet (a handshake split over frames); the caller keeps the bytes.
 */
export function parseHandshake(buffer: Uint8Array): HandshakeResult | undefined {
  const end = buffer.indexOf(RECORD_SEPARATOR);
  if (end < 0) return undefined;
  const rest = buffer.subarray(end + 1);
  let request: unknown;
  try {
    request = JSON.parse(Buffer.from(buffer.subarray(0, end)).toString('utf8'));
  } catch {
    return { error: 'An unexpected error occurred during connection handshake: the handshake request is not JSON.', rest };
  }
  if (typeof request !== 'object' || request === null) {
    return { error: 'An unexpected error occurred during connection handshake: the handshake request is not an object.', rest };
  }
  const { protocol, version } = request as { protocol?: unknown; version?: unknown };
  if (typeof protocol !== 'string' || typeof version !== 'number') {
    return { error: 'An unexpected error occurred during connection handshake: missing "protocol" or "version".', rest };
  }
  if (protocol !== 'messagepack' && protocol !== 'json') return { error: `Requested protocol '${protocol}' is not available.`, rest };
  if (version !== 1) return { error: `The server does not support version ${version} of the '${protocol}' protocol.`, rest };
  return { protocol, rest };
}

const HANDSHAKE_OK = Uint8Array.of(0x7b, 0x7d, RECORD_SEPARATOR);

/** `{}␞`, as a binary frame on MessagePack connections (as ASP.NET Core sends it) and text on JSON ones. */
export function handshakeOk(protocol: ProtocolName): Frame {
  return protocol === 'messagepack' ? { binary: true, data: HANDSHAKE_OK } : { binary: false, data: '{}\u001e' };
}

/** `{"error":"…"}␞`: the handshake failed; the connection is closed after it. */
export function handshakeError(error: string): Frame {
  return { binary: false, data: `${JSON.stringify({ error })}\u001e` };
}

/** The VarInt length prefix: 7 bits a byte, least significant first, high bit on all but the last. */
export function varint(length: number): Uint8Array {
  const bytes: number[] = [];
  let rest = length;
  do {
    let byte = rest & 0x7f;
    rest = Math.floor(rest / 128);
    if (rest > 0) byte |= 0x80;
    bytes.push(byte);
  } while (rest > 0);
  return Uint8Array.from(bytes);
}

function framed(body: Uint8Array): Uint8Array {
  const prefix = varint(body.length);
  const out = new Uint8Array(prefix.length + body.length);
  out.set(prefix, 0);
  out.set(body, prefix.length);
  return out;
}

function jsonFrame(message: unknown): string {
  return `${JSON.stringify(message)}\u001e`;
}

/** One message for both protocols; each connection takes the bytes of its own protocol. */
export interface EncodedMessage {
  messagepack: Frame;
  json: Frame;
}

/** An invocation without an id (fire and forget: the client answers nothing). */
export function invocation(target: string, args: unknown[]): EncodedMessage {
  return {
    // ASP.NET Core writes all six elements, the last an empty list of stream ids.
    messagepack: { binary: true, data: framed(encode([MessageType.Invocation, {}, null, target, args, []])) },
    json: { binary: false, data: jsonFrame({ type: MessageType.Invocation, target, arguments: args.map(toJsonValue) }) },
  };
}

export const PING: EncodedMessage = {
  messagepack: { binary: true, data: Uint8Array.of(0x02, 0x91, MessageType.Ping) },
  json: { binary: false, data: jsonFrame({ type: MessageType.Ping }) },
};

/** A Close message: `error` shows in the client's onclose; `allowReconnect` is for clients with automatic reconnect. */
export function closeMessage(error: string | null, allowReconnect?: boolean): EncodedMessage {
  const array: unknown[] = [MessageType.Close, error];
  if (allowReconnect !== undefined) array.push(allowReconnect);
  return {
    messagepack: { binary: true, data: framed(encode(array)) },
    json: {
      binary: false,
      data: jsonFrame({ type: MessageType.Close, ...(error !== null ? { error } : {}), ...(allowReconnect !== undefined ? { allowReconnect } : {}) }),
    },
  };
}

/** The answer to a client's invocation that asked for one: the hub has no methods to call. */
export function completionError(protocol: ProtocolName, invocationId: string, error: string): Frame {
  return protocol === 'messagepack'
    ? { binary: true, data: framed(encode([MessageType.Completion, {}, invocationId, 1, error])) }
    : { binary: false, data: jsonFrame({ type: MessageType.Completion, invocationId, error }) };
}

/**
 * The JSON protocol's value shape, as ASP.NET Core's JSON protocol writes objects: property
 * names with a lower-case first letter (`Type` → `type`), dates as ISO strings.
 */
export function toJsonValue(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(toJsonValue);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(value)) out[key.charAt(0).toLowerCase() + key.slice(1)] = toJsonValue(inner);
    return out;
  }
  return value;
}

/** A message the client sent after the handshake, reduced to what the hub acts on. */
export type InboundMessage =
  | { type: 'ping' }
  | { type: 'close' }
  | { type: 'invocation'; invocationId: string | null }
  | { type: 'other' };

export class ProtocolError extends Error {}

function classify(type: unknown, invocationId: unknown): InboundMessage {
  switch (type) {
    case MessageType.Ping:
      return { type: 'ping' };
    case MessageType.Close:
      return { type: 'close' };
    case MessageType.Invocation:
    case MessageType.StreamInvocation:
      return { type: 'invocation', invocationId: typeof invocationId === 'string' ? invocationId : null };
    case undefined:
      throw new ProtocolError('a message without a type');
    default:
      return { type: 'other' };
  }
}

/** Splits a binary frame into its VarInt-prefixed MessagePack messages. */
export function parseMessagePack(data: Uint8Array): InboundMessage[] {
  const messages: InboundMessage[] = [];
  let offset = 0;
  while (offset < data.length) {
    let length = 0;
    let shift = 0;
    let byte: number;
    let prefixBytes = 0;
    do {
      if (offset >= data.length || prefixBytes >= 5) throw new ProtocolError('a malformed length prefix');
      byte = data[offset++] ?? 0;
      length += (byte & 0x7f) * 2 ** shift;
      shift += 7;
      prefixBytes++;
    } while (byte & 0x80);
    if (offset + length > data.length) throw new ProtocolError('a message longer than its frame');
    let array: unknown;
    try {
      array = decode(data.subarray(offset, offset + length));
    } catch {
      throw new ProtocolError('a message that is not MessagePack');
    }
    offset += length;
    if (!Array.isArray(array)) throw new ProtocolError('a message that is not an array');
    // Invocation: [1, headers, invocationId, target, arguments, streamIds?]
    messages.push(classify(array[0], array[2]));
  }
  return messages;
}

/** Splits a text frame into its separator-ended JSON messages. */
export function parseJson(text: string): InboundMessage[] {
  const parts = text.split('\u001e');
  if (parts.pop() !== '') throw new ProtocolError('a message without its record separator');
  return parts.map((part) => {
    let message: unknown;
    try {
      message = JSON.parse(part);
    } catch {
      throw new ProtocolError('a message that is not JSON');
    }
    if (typeof message !== 'object' || message === null) throw new ProtocolError('a message that is not an object');
    const { type, invocationId } = message as { type?: unknown; invocationId?: unknown };
    return classify(type, invocationId);
  });
}
