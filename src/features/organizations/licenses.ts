import { generateKeyPairSync, createPrivateKey, createPublicKey, sign, verify, type KeyObject, type JsonWebKey } from 'node:crypto';
import { calculateJwkThumbprint } from 'jose';
import { Type, type Static } from 'typebox';
import Value from 'typebox/value';
import type { Clock } from '../../shared/clock.js';
import type { Db } from '../../db/database.js';
import { BadRequest } from '../../http/errors.js';
import { Guid, Nullable } from '../../http/schemas.js';
import { FEATURE_FLAGS, planFeatures, tierOf, type FeatureFlag} from './plans.js';
import { compareText } from '../../shared/compare-text.js';

/**
 * Organization licenses: a JSON document naming an organization, its plan, limits, features and
 * expiry, signed by an issuer key. A cloud instance signs them for its organizations; a
 * self-hosted instance applies those signed by an issuer it trusts (its own issuer key and the
 * keys in LICENSE_ISSUER_PUBLIC_KEYS). The signature covers every other field, serialised with
 * sorted keys, so the file stays readable and any edit breaks it.
 */
const PURPOSE = 'license-issuer';
const Bool = Type.Boolean();
const OptionalInt = Nullable(Type.Integer({ minimum: 0 }));
const IsoDate = Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d+)?Z$' });


export const LicenseDocument = Type.Object({
  object: Type.Literal('organizationLicense'),
  version: Type.Literal(1),
  id: Guid,
  licenseKey: Type.String({ minLength: 1, maxLength: 100 }),
  installationId: Nullable(Guid),
  name: Type.String({ minLength: 1, maxLength: 50 }),
  businessName: Nullable(Type.String({ maxLength: 50 })),
  billingEmail: Type.String({ minLength: 3, maxLength: 256 }),
  planType: Type.Integer(),
  productTierType: Type.Integer(),
  seats: OptionalInt,
  maxCollections: OptionalInt,
  maxStorageGb: OptionalInt,
  smSeats: OptionalInt,
  smServiceAccounts: OptionalInt,
  useGroups: Bool,
  useDirectory: Bool,
  useEvents: Bool,
  useTotp: Bool,
  use2fa: Bool,
  useApi: Bool,
  usePolicies: Bool,
  useSso: Bool,
  useKeyConnector: Bool,
  useScim: Bool,
  useResetPassword: Bool,
  useCustomPermissions: Bool,
  useSecretsManager: Bool,
  usersGetPremium: Bool,
  issued: IsoDate,
  expires: IsoDate,
  /** JWK thumbprint (RFC 7638) of the issuer's public key. */
  issuer: Type.String({ minLength: 1 }),
  signature: Type.String({ minLength: 1 }),
});
export type LicenseDocument = Static<typeof LicenseDocument>;
export type UnsignedLicense = Omit<LicenseDocument, 'object' | 'version' | 'issuer' | 'signature' | 'issued' | 'productTierType'>;

/** JSON with object keys sorted at every level: the bytes the signature covers. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => compareText(a, b));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

function signedBytes(license: Omit<LicenseDocument, 'signature'>): Buffer {
  return Buffer.from(canonicalJson(license), 'utf8');
}

/** Ed25519 signs the message itself; RSA (PKCS #1 v1.5) and ECDSA sign its SHA-256. */
function digestFor(key: KeyObject): string | null {
  return key.asymmetricKeyType === 'ed25519' ? null : 'sha256';
}

export async function keyIdOf(publicKey: KeyObject): Promise<string> {
  return calculateJwkThumbprint(publicKey.export({ format: 'jwk' }));
}

export function signLicense(unsigned: Omit<LicenseDocument, 'signature'>, privateKey: KeyObject): LicenseDocument {
  const signature = sign(digestFor(privateKey), signedBytes(unsigned), privateKey).toString('base64');
  return { ...unsigned, signature };
}

/** The plan's defaults for a license, with the issuer's overrides. */
export function licenseTerms(input: {
  id: string;
  licenseKey: string;
  name: string;
  billingEmail: string;
  planType: number;
  expires: string;
  businessName?: string | null;
  installationId?: string | null;
  seats?: number | null;
  maxCollections?: number | null;
  maxStorageGb?: number | null;
  smSeats?: number | null;
  smServiceAccounts?: number | null;
  features?: Partial<Record<FeatureFlag, boolean>>;
}): UnsignedLicense {
  const plan = planFeatures(input.planType);
  if (!plan) throw new Error(`Unknown plan type ${input.planType}.`);
  const features = Object.fromEntries(FEATURE_FLAGS.map((flag) => [flag, input.features?.[flag] ?? plan[flag]])) as Record<
    FeatureFlag,
    boolean
  >;
  return {
    id: input.id.toLowerCase(),
    licenseKey: input.licenseKey,
    installationId: input.installationId?.toLowerCase() ?? null,
    name: input.name,
    businessName: input.businessName ?? null,
    billingEmail: input.billingEmail,
    planType: input.planType,
    seats: input.seats === undefined ? plan.seats : input.seats,
    maxCollections: input.maxCollections === undefined ? plan.maxCollections : input.maxCollections,
    maxStorageGb: input.maxStorageGb === undefined ? plan.maxStorageGb : input.maxStorageGb,
    smSeats: input.smSeats ?? null,
    smServiceAccounts: input.smServiceAccounts ?? null,
    ...features,
    expires: input.expires,
  };
}

/**
 * This instance's license issuer key (Ed25519): made by whichever instance needs it first and
 * kept in server_keys, like the token signing key.
 */
export function createLicenseIssuer({ db, clock }: { db: Db; clock: Clock }) {
  let material: Promise<{ privateKey: KeyObject; publicKey: KeyObject; keyId: string }> | undefined;

  async function load() {
    let row = await db.selectFrom('server_keys').selectAll().where('purpose', '=', PURPOSE).executeTakeFirst();
    if (!row) {
      const { privateKey, publicKey } = generateKeyPairSync('ed25519');
      const kid = await keyIdOf(publicKey);
      await db
        .insertInto('server_keys')
        .values({
          purpose: PURPOSE,
          kid,
          private_jwk: JSON.stringify(privateKey.export({ format: 'jwk' })),
          public_jwk: JSON.stringify(publicKey.export({ format: 'jwk' })),
          creation_date: clock.now().toISOString(),
        })
        .onConflict((oc) => oc.column('purpose').doNothing())
        .execute();
      row = await db.selectFrom('server_keys').selectAll().where('purpose', '=', PURPOSE).executeTakeFirstOrThrow();
    }
    return {
      privateKey: createPrivateKey({ key: JSON.parse(row.private_jwk) as JsonWebKey, format: 'jwk' }),
      publicKey: createPublicKey({ key: JSON.parse(row.public_jwk) as JsonWebKey, format: 'jwk' }),
      keyId: row.kid,
    };
  }

  function keys() {
    material ??= load().catch((error: unknown) => {
      material = undefined;
      throw error;
    });
    return material;
  }

  return {
    async publicKey(): Promise<KeyObject> {
      return (await keys()).publicKey;
    },
    async publicKeyPem(): Promise<string> {
      return (await keys()).publicKey.export({ format: 'pem', type: 'spki' }).toString();
    },
    async issue(terms: UnsignedLicense): Promise<LicenseDocument> {
      const { privateKey, keyId } = await keys();
      const tier = tierOf(terms.planType);
      if (tier === null) throw new Error(`Unknown plan type ${terms.planType}.`);
      return signLicense(
        { object: 'organizationLicense', version: 1, ...terms, productTierType: tier, issued: clock.now().toISOString(), issuer: keyId },
        privateKey,
      );
    },
  };
}

export type LicenseIssuer = ReturnType<typeof createLicenseIssuer>;

const refuse = (message: string) => BadRequest.field('license', message);

/**
 * Checks a license file: shape, a trusted issuer, an intact signature, not expired, for this
 * installation. Returns the license, or throws a 400 naming the `license` field.
 */
export async function verifyLicense(
  text: string,
  options: { trusted: readonly KeyObject[]; now: Date; installationId?: string | undefined },
): Promise<LicenseDocument> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw refuse('The license file is not valid JSON.');
  }
  if (!Value.Check(LicenseDocument, parsed)) throw refuse('The license file is not an organization license of this server.');
  const license = parsed;
  let issuerKey: KeyObject | undefined;
  for (const key of options.trusted) {
    if ((await keyIdOf(key)) === license.issuer) issuerKey = key;
  }
  if (!issuerKey) throw refuse('The license was signed by an issuer this server does not trust.');
  const { signature, ...unsigned } = license;
  let intact = false;
  try {
    intact = verify(digestFor(issuerKey), signedBytes(unsigned), issuerKey, Buffer.from(signature, 'base64'));
  } catch {
    intact = false;
  }
  if (!intact) throw refuse('The license signature is not valid: the file was changed after it was signed.');
  if (!(Date.parse(license.expires) > options.now.getTime())) throw refuse(`The license expired on ${license.expires}.`);
  if (options.installationId && license.installationId && license.installationId !== options.installationId) {
    throw refuse('The license was issued for another installation.');
  }
  if (tierOf(license.planType) === null) throw refuse('The license names an unknown plan type.');
  return license;
}
