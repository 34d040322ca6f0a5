import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';

/**
 * A software FIDO2 authenticator for route tests (the Chromium test uses the browser's own):
 * ES256 keys, "none" attestation, a sign counter, and the JSON the official clients send
 * (Fido2NetLib field names, base64url). Enough CBOR for the attestation object and COSE key.
 */
function head(major: number, value: number): Buffer {
  if (value < 24) return Buffer.from([(major << 5) | value]);
  if (value < 256) return Buffer.from([(major << 5) | 24, value]);
  const b = Buffer.alloc(3);
  b[0] = (major << 5) | 25;
  b.writeUInt16BE(value, 1);
  return b;
}

type Cbor = number | string | Buffer | Map<Cbor, Cbor>;

function cbor(value: Cbor): Buffer {
  if (typeof value === 'number') return value >= 0 ? head(0, value) : head(1, -1 - value);
  if (typeof value === 'string') return Buffer.concat([head(3, Buffer.byteLength(value)), Buffer.from(value)]);
  if (Buffer.isBuffer(value)) return Buffer.concat([head(2, value.length), value]);
  return Buffer.concat([head(5, value.size), ...[...value].flatMap(([k, v]) => [cbor(k), cbor(v)])]);
}

const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest();
const b64u = (data: Buffer) => data.toString('base64url');

export interface Options {
  challenge: string;
  rp?: { id: string };
  rpId?: string;
}

export class SoftAuthenticator {
  readonly credentialId = randomBytes(32);
  private readonly privateKey: KeyObject;
  private readonly publicKey: KeyObject;
  counter = 0;

  constructor(private readonly origin: string) {
    const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.privateKey = pair.privateKey;
    this.publicKey = pair.publicKey;
  }

  get id(): string {
    return b64u(this.credentialId);
  }

  private clientData(type: string, challenge: string, origin = this.origin): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }));
  }

  private authData(rpId: string, flags: number, attested?: Buffer): Buffer {
    const count = Buffer.alloc(4);
    count.writeUInt32BE(this.counter);
    return Buffer.concat([sha256(rpId), Buffer.from([flags]), count, ...(attested ? [attested] : [])]);
  }

  /** The deviceResponse for PUT /two-factor/webauthn, answering registration options. */
  register(options: Options, overrides: { origin?: string; challenge?: string } = {}): Record<string, unknown> {
    const jwk = this.publicKey.export({ format: 'jwk' });
    const cose = cbor(
      new Map<Cbor, Cbor>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, Buffer.from(jwk.x ?? '', 'base64url')],
        [-3, Buffer.from(jwk.y ?? '', 'base64url')],
      ]),
    );
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(this.credentialId.length);
    const attested = Buffer.concat([Buffer.alloc(16), idLength, this.credentialId, cose]);
    const authData = this.authData(options.rp?.id ?? '', 0x01 | 0x04 | 0x40, attested);
    const attestationObject = cbor(new Map<Cbor, Cbor>([['fmt', 'none'], ['attStmt', new Map()], ['authData', authData]]));
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      extensions: {},
      response: { AttestationObject: b64u(attestationObject), clientDataJson: b64u(this.clientData('webauthn.create', overrides.challenge ?? options.challenge, overrides.origin)) },
    };
  }

  /**
   * The TwoFactorToken (JSON) for provider 7, answering the login challenge's assertion options;
   * the counter goes up by one. A passkey login sends the user handle the passkey was made with
   * (`userHandle`, base64url); `userVerified: false` answers as a key that only tested presence.
   */
  assert(options: Options, overrides: { origin?: string; challenge?: string; counter?: number; userHandle?: string; userVerified?: boolean } = {}): string {
    this.counter = overrides.counter ?? this.counter + 1;
    const authData = this.authData(options.rpId ?? '', overrides.userVerified === false ? 0x01 : 0x01 | 0x04);
    const clientData = this.clientData('webauthn.get', overrides.challenge ?? options.challenge, overrides.origin);
    const signature = sign('sha256', Buffer.concat([authData, sha256(clientData)]), this.privateKey);
    return JSON.stringify({
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      extensions: {},
      response: { authenticatorData: b64u(authData), signature: b64u(signature), clientDataJson: b64u(clientData), userHandle: overrides.userHandle ?? null },
    });
  }
}
