import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import util from 'node:util';
import type { Clock } from '../shared/clock.js';
import type { Db } from '../db/database.js';
import { createLicenseIssuer, licenseTerms } from '../features/organizations/licenses.js';
import { PlanType, planFeatures } from '../features/organizations/plans.js';
import { UsageError } from '../shared/startup-error.js';
import { randomApiKey } from '../platform/auth/api-keys.js';

export const LICENSE_USAGE = `Usage:
  strongroom license issue --name <name> --plan <plan> --expires <date|Nd> [options]
      Signs an organization license with this instance's issuer key and prints it (or writes --out).
      --plan            a PlanType number or name (0 Free, 1 FamiliesAnnually2019, ..., 20 EnterpriseAnnually)
      --expires         an ISO-8601 date or time (2027-01-31) or a number of days from now (365d)
      --seats           seats (default: the plan's; "unlimited" for none)
      --max-collections collection limit (default: the plan's; "unlimited" for none)
      --billing-email   billing email (default billing@localhost)
      --business-name   business name
      --installation-id bind the license to one installation (its INSTALLATION_ID)
      --id              the organization id to create (default: a new GUID)
      --out             write the license to this file instead of standard output
  strongroom license issuer-key
      Prints this instance's issuer public key (PEM), for LICENSE_ISSUER_PUBLIC_KEYS elsewhere.`;

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function parsePlan(text: string): PlanType {
  const value = /^\d+$/.test(text) ? Number(text) : (PlanType as unknown as Record<string, number | undefined>)[text];
  if (value === undefined || !planFeatures(value)) throw new UsageError(`--plan: unknown plan "${text}".`);
  return value;
}

function parseLimit(option: string, text: string | undefined): number | null | undefined {
  if (text === undefined) return undefined;
  if (text === 'unlimited') return null;
  if (!/^\d+$/.test(text)) throw new UsageError(`${option}: expected a whole number or "unlimited", got "${text}".`);
  return Number(text);
}

function parseExpiry(text: string, now: Date): string {
  const days = /^(\d+)d$/.exec(text);
  const date = days ? new Date(now.getTime() + Number(days[1]) * 86_400_000) : new Date(text);
  if (Number.isNaN(date.getTime()) || !(days || /^\d{4}-\d{2}-\d{2}/.test(text))) {
    throw new UsageError(`--expires: expected an ISO-8601 date or a number of days like 365d, got "${text}".`);
  }
  if (date.getTime() <= now.getTime()) throw new UsageError('--expires: the date is in the past.');
  return date.toISOString();
}

/** `strongroom license …`: returns the text to print. */
export async function runLicenseCommand(argv: string[], deps: { db: Db; clock: Clock }): Promise<string> {
  const [sub, ...rest] = argv;
  const issuer = createLicenseIssuer(deps);
  if (sub === 'issuer-key') return issuer.publicKeyPem();
  if (sub !== 'issue') throw new UsageError(LICENSE_USAGE);
  let values: Record<string, string | undefined>;
  try {
    ({ values } = util.parseArgs({
      args: rest,
      options: {
        name: { type: 'string' },
        plan: { type: 'string' },
        seats: { type: 'string' },
        expires: { type: 'string' },
        'max-collections': { type: 'string' },
        'billing-email': { type: 'string' },
        'business-name': { type: 'string' },
        'installation-id': { type: 'string' },
        id: { type: 'string' },
        out: { type: 'string' },
      },
      strict: true,
    }));
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\n\n${LICENSE_USAGE}`);
  }
  const missing = ['name', 'plan', 'expires'].filter((o) => !values[o]);
  if (missing.length > 0) throw new UsageError(`Missing ${missing.map((o) => `--${o}`).join(', ')}.\n\n${LICENSE_USAGE}`);
  const name = values.name ?? '';
  if (name.length > 50) throw new UsageError('--name: at most 50 characters.');
  for (const option of ['id', 'installation-id']) {
    const value = values[option];
    if (value !== undefined && !GUID.test(value)) throw new UsageError(`--${option}: expected a GUID, got "${value}".`);
  }
  const license = await issuer.issue(
    licenseTerms({
      id: values.id ?? randomUUID(),
      licenseKey: randomApiKey(),
      name,
      billingEmail: values['billing-email'] ?? 'billing@localhost',
      businessName: values['business-name'] ?? null,
      installationId: values['installation-id'] ?? null,
      planType: parsePlan(values.plan ?? ''),
      seats: parseLimit('--seats', values.seats),
      maxCollections: parseLimit('--max-collections', values['max-collections']),
      expires: parseExpiry(values.expires ?? '', deps.clock.now()),
    }),
  );
  const text = `${JSON.stringify(license, null, 2)}\n`;
  if (values.out) {
    writeFileSync(values.out, text);
    return `Wrote the license for "${license.name}" (${license.id}) to ${values.out}.\n`;
  }
  return text;
}
