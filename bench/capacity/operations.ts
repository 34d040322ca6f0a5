/**
 * What each kind of client does, as the generator plays it: one function per operation of
 * docs/capacity.md's model, each sending what the official clients send (items encrypted with
 * the person's keys), reading only what the caller may, and checking the answer: a wrong status
 * or an answer without what it must hold throws, and the scheduler counts it as an error.
 */
import { randomUUID } from 'node:crypto';
import { WebSocket } from 'ws';
import { itemBody } from '../items.js';
import type { Arrivals, Outcome } from './arrivals.js';
import { Shed, type Client } from './client.js';
import { BUSY_HOUR_PER_1000, type OperationName } from './model.js';
import type { Person, Population } from './population.js';

const pick = <T>(list: readonly T[]): T => list[Math.floor(Math.random() * list.length)]!;

function expect(condition: unknown, what: string): void {
  if (!condition) throw new Error(what);
}

/** A shed password login (429 with Retry-After from the hash queue) is an answer, not an error. */
async function shedding(work: () => Promise<unknown>): Promise<Outcome> {
  try {
    await work();
    return {};
  } catch (error) {
    if (error instanceof Shed) return { shed: true };
    throw error;
  }
}

export interface PlayOptions {
  /** People the rates are for (the seeded population, or a multiple of it past the knee). */
  people: number;
  /** Only these operations (all unless given), e.g. one at a time to measure its CPU. */
  only?: OperationName[];
  /** wss:// address of the notifications hub. */
  hubUrl: string;
  ca?: string;
}

export function modelArrivals(client: Client, population: Population, options: PlayOptions): Arrivals[] {
  const { people } = population;
  const withItems = people.filter((p) => p.visibleOrgItems.length > 0);
  /** People with an item the generator wrote, whose other clients fetch it. */
  const writers = new Set<Person>();
  const op: Record<OperationName, () => Promise<Outcome | void>> = {
    login: () =>
      shedding(async () => {
        const answer = await client.send<{ access_token?: string }>('POST', '/identity/connect/token', { form: pick(population.fullCostLogins), mayShed: true });
        expect(answer.access_token, 'login: no access token');
      }),
    refresh: async () => {
      const person = pick(people);
      if (person.refreshing) return;
      person.refreshing = true;
      try {
        const answer = await client.send<{ access_token: string; refresh_token: string }>('POST', '/identity/connect/token', {
          form: { grant_type: 'refresh_token', client_id: 'cli', refresh_token: person.refreshToken },
        });
        expect(answer.access_token && answer.refresh_token, 'refresh: no tokens');
        person.token = answer.access_token;
        person.refreshToken = answer.refresh_token;
      } finally {
        person.refreshing = false;
      }
    },
    sync: async () => {
      const person = pick(people);
      // Checked on the text: parsing megabytes per sync would make the generator the bottleneck.
      const text = await client.send<string>('GET', `/api/sync${Math.random() < 0.5 ? '?excludeDomains=true' : ''}`, { token: person.token, raw: true });
      expect(text.startsWith(`{"object":"sync","profile":{`) && text.includes(`"id":"${person.userId}"`) && text.includes('"ciphers":[{') && text.endsWith('}'), "sync: not this person's vault");
    },
    config: async () => {
      const answer = await client.send<{ version?: string }>('GET', '/api/config', { token: pick(people).token });
      expect(answer.version, 'config: no version');
    },
    write: async () => {
      const person = pick(people);
      await write(client, population, person);
      if (person.written.length > 0) writers.add(person);
      else writers.delete(person);
    },
    fetch: async () => {
      const person = writers.size > 0 ? pick([...writers].slice(-200)) : pick(withItems);
      const id = person.written[0] ?? pick(person.visibleOrgItems);
      const answer = await client.send<{ id: string }>('GET', `/api/ciphers/${id}`, { token: person.token });
      expect(answer.id === id, 'fetch: another item');
    },
    events: async () => {
      const person = pick(withItems);
      const date = new Date().toISOString();
      const events = [0, 1].map(() => ({ type: 1107, cipherId: pick(person.visibleOrgItems), organizationId: person.org.id, date }));
      await client.send('POST', '/events/collect', { token: person.token, json: events });
    },
    hubConnect: () => hubConnect(options.hubUrl, pick(people).token, options.ca),
    smSync: async () => {
      const org = pick(population.organizations.filter((o) => o.machines.length > 0));
      const answer = await client.send<{ hasChanges?: boolean }>('GET', `/api/organizations/${org.id}/secrets/sync`, { token: pick(org.machines).token });
      expect(answer.hasChanges === true, 'secrets sync: no secrets');
    },
    smLogin: async () => {
      const machine = pick(population.machines);
      const answer = await client.send<{ access_token: string }>('POST', '/identity/connect/token', { form: machine.form });
      machine.token = answer.access_token;
    },
    directorySync: async () => {
      const org = pick(population.organizations);
      const step = Math.floor(Math.random() * 3);
      if (step === 0) {
        const members = await client.send<{ data: unknown[] }>('GET', '/api/public/members', { token: org.apiToken });
        expect(members.data.length === org.members.length, `directory: ${members.data.length} members, not ${org.members.length}`);
      } else if (step === 1) {
        await client.send('GET', '/api/public/groups', { token: org.apiToken });
      } else {
        await client.send('POST', '/api/public/organization/import', {
          token: org.apiToken,
          json: { groups: [], members: org.members.slice(0, 50).map((m) => ({ email: m.email, externalId: `ext-${m.index}`, deleted: false })), overwriteExisting: false },
        });
      }
    },
  };
  const chosen = (Object.keys(op) as OperationName[]).filter((name) => !options.only || options.only.includes(name));
  return chosen.map((name) => ({ name, rate: () => (BUSY_HOUR_PER_1000[name] * options.people) / 1000, spacing: 'poisson', run: op[name] }));
}

/**
 * A create, an edit or a delete of one of the person's items, encrypted with their key. The
 * first item a person wrote is never deleted, so an edit or fetch of it never races a delete.
 */
async function write(client: Client, population: Population, person: Person): Promise<void> {
  const roll = Math.random();
  const body = itemBody(population.account, Math.floor(Math.random() * 1e6));
  if (person.written.length === 0 || roll < 0.5) {
    const made = await client.send<{ id: string }>('POST', '/api/ciphers', { token: person.token, json: body });
    expect(made.id, 'create: no id');
    person.written.push(made.id);
  } else if (roll < 0.9 || person.written.length < 2) {
    const id = person.written[0]!;
    const edited = await client.send<{ id: string }>('PUT', `/api/ciphers/${id}`, { token: person.token, json: body });
    expect(edited.id === id, 'edit: another item');
  } else {
    const id = person.written.pop()!;
    await client.send('DELETE', `/api/ciphers/${id}`, { token: person.token });
  }
}

/** A client coming online: the SignalR handshake over a WebSocket, then gone again. */
function hubConnect(url: string, token: string, ca: string | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${url}?access_token=${encodeURIComponent(token)}&id=${randomUUID()}`, { perMessageDeflate: false, ...(ca ? { ca } : {}) });
    const timer = setTimeout(() => {
      ws.terminate();
      reject(new Error('hub: no handshake answer in 10 s'));
    }, 10_000);
    ws.on('open', () => ws.send('{"protocol":"messagepack","version":1}\u001e'));
    ws.on('message', (data: Buffer) => {
      clearTimeout(timer);
      const text = data.subarray(0, data.indexOf(0x1e)).toString();
      ws.close();
      if (text === '{}') resolve();
      else reject(new Error(`hub: handshake answered ${text.slice(0, 80)}`));
    });
    ws.on('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`hub: ${error.message}`));
    });
  });
}
