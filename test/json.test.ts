import { describe, expect, it } from 'vitest';
import { JsonTextError, MAX_JSON_DEPTH, jsonDepthExceeds, parseJsonText } from '../src/json.js';

const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

describe('parseJsonText (DESIGN J)', () => {
  it('parses JSON nested up to the limit', () => {
    expect(parseJsonText(nested(MAX_JSON_DEPTH))).toBeInstanceOf(Array);
    expect(parseJsonText('{"a":{"b":[1,{"c":"[[[["}]}}')).toEqual({ a: { b: [1, { c: '[[[[' }] } });
  });

  it('refuses deeper nesting in one pass, before anything is built', () => {
    const error = (() => {
      try {
        parseJsonText(nested(20_000));
      } catch (thrown) {
        return thrown;
      }
    })();
    expect(error).toBeInstanceOf(JsonTextError);
    expect((error as JsonTextError).byRule).toBe(true);
    expect((error as Error).message).toBe(`nests deeper than ${MAX_JSON_DEPTH} levels`);
  });

  it('counts no brackets inside strings, escaped quotes included', () => {
    expect(jsonDepthExceeds(JSON.stringify({ a: '\\"[[[[[[' }), 2)).toBe(false);
    expect(jsonDepthExceeds('{"a":"\\"","b":[[[]]]}', 3)).toBe(true);
  });

  it('refuses U+0000 in a name or a value, which PostgreSQL text cannot keep, but not an escaped backslash before u0000', () => {
    expect(() => parseJsonText(String.raw`{"a":"x\u0000"}`)).toThrow(new JsonTextError('holds the character U+0000, which no name or value may contain', true));
    expect(() => parseJsonText(String.raw`{"\\\u0000":1}`)).toThrow(JsonTextError);
    expect(parseJsonText(String.raw`{"a":"\\u0000"}`)).toEqual({ a: String.raw`\u0000` });
  });

  it('refuses malformed text', () => {
    expect(() => parseJsonText('{"a":')).toThrow(JsonTextError);
  });

  it('keeps __proto__ and constructor as plain own keys, which DESIGN J makes unknown names', () => {
    const parsed = parseJsonText('{"__proto__":{"x":1},"constructor":{"prototype":{"x":1}}}') as Record<string, unknown>;
    expect(Object.keys(parsed)).toEqual(['__proto__', 'constructor']);
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });
});
