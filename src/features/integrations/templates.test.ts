import { describe, expect, it } from 'vitest';
import { EventType } from '../../platform/audit/event-type.js';
import { FilterOperation, parseFilters, passes } from './rules.js';
import { dotnetDate, dotnetRoundTrip, eventMessageJson, jsonEscape, renderTemplate, type ForwardedEvent } from './templates.js';

const EVENT: ForwardedEvent = {
  date: '2026-11-24T00:42:11.123Z',
  type: EventType.Cipher_Created,
  userId: null,
  organizationId: '0f7e1e7a-5a3f-4c9b-9d0a-1b2c3d4e5f60',
  installationId: null,
  providerId: null,
  cipherId: 'c1c1c1c1-0000-4000-8000-000000000001',
  collectionId: null,
  groupId: null,
  policyId: null,
  organizationUserId: null,
  providerUserId: null,
  providerOrganizationId: null,
  actingUserId: 'a0a0a0a0-0000-4000-8000-000000000002',
  deviceType: 9,
  ipAddress: '203.0.113.7',
  idempotencyId: 'e0e0e0e0-0000-4000-8000-000000000003',
  systemUser: null,
  domainName: null,
  secretId: null,
  projectId: null,
  serviceAccountId: null,
  grantedServiceAccountId: null,
  sendId: null,
};

describe('templates, as the official IntegrationTemplateProcessor renders them', () => {
  it('replaces the event tokens: enum names, lower-case GUIDs, .NET dates, empty for null', () => {
    const rendered = renderTemplate(
      '{"type":"#Type#","typeId":#TypeId#,"user":"#UserId#","actor":"#ActingUserId#","cipher":"#CipherId#","org":"#OrganizationId#","date":"#Date#","iso":"#DateIso8601#","device":"#DeviceType#","ip":"#IpAddress#"}',
      EVENT,
    );
    expect(JSON.parse(rendered)).toEqual({
      type: 'Cipher_Created',
      typeId: 1100,
      user: '',
      actor: EVENT.actingUserId,
      cipher: EVENT.cipherId,
      org: EVENT.organizationId,
      date: '11/24/2026 00:42:11',
      iso: '2026-11-24T00:42:11.1230000Z',
      device: 'Chrome',
      ip: '203.0.113.7',
    });
  });

  it('leaves unknown tokens as they are and replaces every occurrence of known ones', () => {
    expect(renderTemplate('#Nope# #Type# #Type# #type# ##Type## #', EVENT)).toBe('#Nope# Cipher_Created Cipher_Created #type# #Cipher_Created# #');
    expect(renderTemplate('', EVENT)).toBe('');
  });

  it('escapes values as System.Text.Json does, so a JSON template stays valid JSON', () => {
    expect(jsonEscape('a"b\\c\n<&>\'+`é😀\u0001')).toBe('a\\u0022b\\\\c\\n\\u003C\\u0026\\u003E\\u0027\\u002B\\u0060\\u00E9\\uD83D\\uDE00\\u0001');
    const rendered = renderTemplate('{"who":"#ActingUserName#","org":"#OrganizationName#"}', EVENT, {
      actingUser: { name: 'Ann "the admin" <ann>', email: 'ann@example.com', type: 0 },
      organizationName: 'Acme & Co',
    });
    expect(JSON.parse(rendered)).toEqual({ who: 'Ann "the admin" <ann>', org: 'Acme & Co' });
    expect(renderTemplate('#ActingUserType# #UserEmail#', EVENT, { actingUser: { name: null, email: null, type: 0 }, user: null })).toBe('Owner ');
  });

  it('renders #EventMessage# as the official EventMessage JSON, escaped into the template', () => {
    const json = eventMessageJson(EVENT);
    expect(JSON.parse(json)).toMatchObject({ Date: '2026-11-24T00:42:11.123Z', Type: 1100, CipherId: EVENT.cipherId, DeviceType: 9, UserId: null, IdempotencyId: EVENT.idempotencyId });
    const rendered = renderTemplate('{"event":"#EventMessage#"}', EVENT);
    expect(JSON.parse(JSON.parse(rendered).event as string)).toEqual(JSON.parse(json));
    expect(rendered).toContain('\\u0022Type\\u0022:1100');
  });

  it('formats dates as .NET does', () => {
    expect(dotnetDate('2026-01-02T03:04:05.000Z')).toBe('01/02/2026 03:04:05');
    expect(dotnetRoundTrip('2026-01-02T03:04:05Z')).toBe('2026-01-02T03:04:05.0000000Z');
  });
});

describe('filters (IntegrationFilterGroup)', () => {
  const rule = (Property: string, Operation: number, Value: unknown) => ({ Property, Operation, Value });

  it('passes events by Equals, NotEquals, In and NotIn, with and/or groups', () => {
    const actor = EVENT.actingUserId!;
    const other = '11111111-1111-4111-8111-111111111111';
    const check = (group: unknown) => passes(parseFilters(JSON.stringify(group)), EVENT);
    expect(check({ Rules: [rule('ActingUserId', FilterOperation.Equals, actor.toUpperCase())] })).toBe(true);
    expect(check({ Rules: [rule('ActingUserId', FilterOperation.Equals, other)] })).toBe(false);
    expect(check({ Rules: [rule('ActingUserId', FilterOperation.NotEquals, other)] })).toBe(true);
    expect(check({ Rules: [rule('CipherId', FilterOperation.In, [other, EVENT.cipherId])] })).toBe(true);
    expect(check({ Rules: [rule('CipherId', FilterOperation.NotIn, [EVENT.cipherId])] })).toBe(false);
    expect(check({ AndOperator: true, Rules: [rule('ActingUserId', FilterOperation.Equals, actor), rule('UserId', FilterOperation.Equals, other)] })).toBe(false);
    expect(check({ AndOperator: false, Rules: [rule('ActingUserId', FilterOperation.Equals, actor), rule('UserId', FilterOperation.Equals, other)] })).toBe(true);
    expect(check({ AndOperator: true, Rules: [], Groups: [{ AndOperator: false, Rules: [rule('GroupId', FilterOperation.Equals, other)] }] })).toBe(false);
    expect(check({})).toBe(true);
  });

  it('refuses filters it cannot read, naming the problem', () => {
    const bad = (group: unknown, message: RegExp) => {
      try {
        parseFilters(typeof group === 'string' ? group : JSON.stringify(group));
        expect.unreachable();
      } catch (error) {
        expect(JSON.stringify((error as { validationErrors: unknown }).validationErrors)).toMatch(message);
      }
    };
    bad('not json', /JSON filter group/);
    bad([], /filter group object/);
    bad({ Rules: [rule('Type', 0, 'x')] }, /Property must be one of/);
    bad({ Rules: [rule('UserId', 7, EVENT.cipherId)] }, /Operation must be/);
    bad({ Rules: [rule('UserId', FilterOperation.In, EVENT.cipherId)] }, /array of GUIDs/);
    bad({ Rules: [rule('UserId', FilterOperation.Equals, 'nope')] }, /GUIDs only/);
    bad({ AndOperator: 'yes' }, /AndOperator/);
  });
});
