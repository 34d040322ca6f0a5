import { Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import { validatorCompiler } from './validation.js';

type Check = ((data: unknown) => boolean | Promise<boolean>) & { errors?: { instancePath: string; keyword: string }[] };

const schema = Type.Object({
  items: Type.Array(Type.Object({ n: Type.Integer() }), { maxItems: 3000 }),
  tags: Type.Array(Type.String()),
  name: Type.String(),
  level: Type.Optional(Type.Integer({ default: 1 })),
});
const compile = () => (validatorCompiler)({ schema, httpPart: 'body', method: 'POST', url: '/x' }) as unknown as Check;
const items = (n: number) => Array.from({ length: n }, (_, i) => ({ n: i }));

describe('body validation of large arrays', () => {
  it('checks a body with thousands of items in slices, answering what one pass would', async () => {
    const check = compile();
    const body: Record<string, unknown> = { items: items(2500), tags: Array(1200).fill('t'), name: 'x', extra: true };
    (body.items as Record<string, unknown>[])[1700] = { n: 'seventeen hundred', more: 1 };
    (body.tags as unknown[])[700] = 7;
    const result = check(body);
    expect(result).toBeInstanceOf(Promise);
    expect(await result).toBe(false);
    expect(check.errors?.map((e) => `${e.instancePath} ${e.keyword}`).sort()).toEqual(['/items/1700/n type', '/tags/700 type']);
  });

  it('fills defaults on the body itself, as one pass would', async () => {
    const check = compile();
    const body: Record<string, unknown> = { items: items(1200), tags: [], name: 'x' };
    expect(await check(body)).toBe(true);
    expect(body.level).toBe(1);
  });

  it('checks an array’s length against its maxItems once, and small bodies at once', async () => {
    const check = compile();
    expect(await check({ items: items(3001), tags: [], name: 'x' })).toBe(false);
    expect(check.errors).toEqual([expect.objectContaining({ instancePath: '/items', keyword: 'maxItems' })]);
    expect(check({ items: items(10), tags: [], name: 7 })).toBe(false);
    expect(check.errors?.map((e) => e.instancePath)).toEqual(['/name']);
  });
});
