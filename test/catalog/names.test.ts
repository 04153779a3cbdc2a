/**
 * DESIGN J: `hasOwnProperty`, `constructor`, `__proto__` and every other name all JS objects have are
 * just unknown names. At every level of a command or a report, for every model of the catalog, such a
 * name earns exactly what an ordinary unknown name earns: 2207 or 1102 for a command, 1102 or kept
 * (an undeclared property) for a report.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkConditions, diffStatus, listModels, mergeStatus, parsedProfile, validateCommand, validateReport } from '../../src/catalog/index.js';
import { applyCommand } from '../../src/sim/virtual.js';
import { holdsKey, INHERITED_NAMES, isUnknownTo, outsideName, positionsOf, unknownNameRefusal, type Position } from './names.js';

const POSITIONS = listModels().flatMap(positionsOf);
const inSide = (side: Position['side']) => POSITIONS.filter((p) => p.side === side);
/** Every inherited name is tried first, then random names. */
const EXAMPLES: [string][] = INHERITED_NAMES.map((name) => [name]);

const refusalFor = (position: Position, name: string) => ({ ok: false, refusal: unknownNameRefusal(position, name) });

describe('names from outside are just unknown names (DESIGN J)', () => {
  it('covers every level on both sides', () => {
    const levels = (side: Position['side']) => new Set(inSide(side).map((p) => p.level));
    expect([...levels('command')].sort()).toEqual(['entry', 'enum value', 'location', 'property', 'resource']);
    expect([...levels('report')].sort()).toEqual(['entry', 'enum value', 'location', 'property', 'resource']);
    expect(INHERITED_NAMES).toEqual(expect.arrayContaining(['__proto__', 'constructor', 'hasOwnProperty', 'toString', 'valueOf', '__defineGetter__', 'isPrototypeOf']));
  });

  it('a command refuses them with 2207 (resource, property) or 1102 (enum value, location, entry), as any unknown name', () => {
    fc.assert(
      fc.property(outsideName, (name) => {
        for (const position of inSide('command').filter((p) => isUnknownTo(p.model, name))) {
          const refusal = refusalFor(position, name);
          expect(refusal.refusal.code).toBe(position.expected);
          expect(validateCommand(parsedProfile(position.model), position.body(name))).toEqual(refusal);
          // The virtual appliance validates the same way before it applies anything.
          expect(applyCommand(position.model, position.model.defaultStatus, position.body(name))).toEqual(refusal);
        }
      }),
      { examples: EXAMPLES, numRuns: 60 },
    );
  });

  it('a report refuses them as a value or an address (1102) and keeps them as an undeclared resource or property', () => {
    fc.assert(
      fc.property(outsideName, (name) => {
        for (const position of inSide('report').filter((p) => isUnknownTo(p.model, name))) {
          const profile = parsedProfile(position.model);
          const checked = validateReport(profile, position.body(name));
          if (position.expected !== 'kept') {
            expect(checked).toEqual(refusalFor(position, name));
            expect(position.expected).toBe('1102');
            continue;
          }
          if (!checked.ok) throw new Error(`${position.model.modelName} ${position.level} ${name}: ${checked.refusal.message}`);
          const before = position.model.defaultStatus;
          const merged = mergeStatus(profile, before, checked.value);
          // Kept as an own key, through JSON as it is stored, and named in the change; no prototype is touched.
          expect(holdsKey(before, name)).toBe(false);
          expect(holdsKey(JSON.parse(JSON.stringify(merged)), name)).toBe(true);
          expect(holdsKey(diffStatus(profile, before, merged), name)).toBe(true);
          expect(Object.getPrototypeOf(merged)).toBe(Array.isArray(merged) ? Array.prototype : Object.prototype);
          const command = inSide('command').find((p) => p.model === position.model && p.level === 'enum value');
          if (command) expect(() => checkConditions(position.model.deviceType, profile, merged, command.body('x'))).not.toThrow();
        }
      }),
      { examples: EXAMPLES, numRuns: 60 },
    );
  });

  it('a profile may declare them: declared, they are found, and no behaviour table mistakes one for a row of its own', () => {
    const enumOf = (values: string[], mode: string[]) => ({ type: 'enum', mode, value: { r: values, w: values } });
    const profile = {
      property: {
        operation: { washerOperationMode: enumOf(['START', 'constructor'], ['w']) },
        toString: { valueOf: enumOf(['hasOwnProperty', 'OFF'], ['r', 'w']) },
      },
    };
    const model = { deviceType: 'DEVICE_WASHER', modelName: 'INHERITED_NAMES', profile, defaultStatus: { toString: { valueOf: 'OFF' } } };
    const command = { toString: { valueOf: 'hasOwnProperty' }, operation: { washerOperationMode: 'constructor' } };
    expect(validateCommand(parsedProfile(model), command)).toEqual({ ok: true, value: command });
    const applied = applyCommand(model, model.defaultStatus, command);
    expect(applied).toMatchObject({ ok: true, status: { toString: { valueOf: 'hasOwnProperty' } } });
    expect(validateReport(parsedProfile(model), { toString: { valueOf: 'valueOf' } })).toEqual({
      ok: false,
      refusal: { code: '1102', message: 'valueOf must be one of hasOwnProperty, OFF; got "valueOf"' },
    });
  });

  it('a status holding an inherited name merges and diffs it like any other key', () => {
    const model = listModels('DEVICE_DEHUMIDIFIER')[0]!;
    const profile = parsedProfile(model);
    const status = JSON.parse('{"__proto__": {"a": 1}, "constructor": {"b": 2}, "humidity": {"currentHumidity": 40}}');
    const report = JSON.parse('{"__proto__": {"a": 2}, "toString": 3, "constructor": {"c": 1}}');
    const merged = mergeStatus(profile, status, report);
    expect(JSON.parse(JSON.stringify(merged))).toEqual(JSON.parse('{"__proto__": {"a": 2}, "constructor": {"b": 2, "c": 1}, "humidity": {"currentHumidity": 40}, "toString": 3}'));
    expect(JSON.stringify(diffStatus(profile, status, merged))).toBe('{"__proto__":{"a":2},"constructor":{"c":1},"toString":3}');
    // An empty `__proto__` object is a new key too, not Object.prototype compared with {}.
    expect(JSON.stringify(diffStatus(profile, {}, JSON.parse('{"__proto__": {}}')))).toBe('{"__proto__":{}}');
  });
});
