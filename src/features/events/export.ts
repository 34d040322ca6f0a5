import type { EventRow } from './events.repository.js';
import { toEventResponse } from './events.schemas.js';

type Shown = ReturnType<typeof toEventResponse>;

/** The export's columns: the fields of the event list, in its order. */
const COLUMNS: readonly (keyof Shown)[] = [
  'date',
  'type',
  'userId',
  'actingUserId',
  'organizationId',
  'organizationUserId',
  'cipherId',
  'collectionId',
  'groupId',
  'policyId',
  'secretId',
  'projectId',
  'serviceAccountId',
  'grantedServiceAccountId',
  'deviceType',
  'ipAddress',
  'systemUser',
];

/** RFC 4180 quoting; a leading = + - @ is prefixed with ' so spreadsheets do not run it as a formula. */
function cell(value: string | number | null | undefined): string {
  if (value === null || value === undefined) return '';
  let text = String(value);
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** Events as CSV: a header row, then one line per event, streamed. */
export async function* eventsCsv(rows: AsyncIterable<EventRow>): AsyncGenerator<string> {
  yield `${COLUMNS.join(',')}\r\n`;
  for await (const row of rows) {
    const shown = toEventResponse(row);
    yield `${COLUMNS.map((column) => cell(shown[column])).join(',')}\r\n`;
  }
}

/** Events as one JSON array of event objects (the list's shape), streamed. */
export async function* eventsJson(rows: AsyncIterable<EventRow>): AsyncGenerator<string> {
  yield '[';
  let first = true;
  for await (const row of rows) {
    yield `${first ? '' : ','}${JSON.stringify(toEventResponse(row))}`;
    first = false;
  }
  yield ']';
}
