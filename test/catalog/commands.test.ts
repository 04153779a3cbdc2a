/**
 * Commands mutated from every writable and read-only property of every profile (the reference's and
 * the catalog's) are refused with the code DESIGN A.4 gives; legal ones are accepted.
 */
import { describe, expect, it } from 'vitest';
import { commandFor, legalValues, listModels, listProperties, parseProfile, validateCommand } from '../../src/catalog/index.js';
import type { ListedProperty } from '../../src/catalog/index.js';
import type { JsonObject, ParsedProfile, Property } from '../../src/catalog/types.js';
import { devicesOf, FOLDERS, hasFile } from './fixtures.js';

const PROFILES: [string, ParsedProfile][] = [
  ...FOLDERS.flatMap((folder) =>
    ['profile.json', 'lgdoc_profile.json']
      .filter((file) => hasFile(folder, file))
      .flatMap((file) => devicesOf(folder, file).map(({ name, document }): [string, ParsedProfile] => [`${name}/${file}`, parseProfile(document as JsonObject)])),
  ),
  ...listModels().map((m): [string, ParsedProfile] => [`catalog ${m.deviceType} ${m.modelName}`, parseProfile(m.profile)]),
];

/** Values a property must refuse on its writable side, each with what it tries. */
function illegalValues(property: Property): [string, unknown][] {
  switch (property.type) {
    case 'enum':
      return [['a value not in the enum', 'NOT_A_VALUE'], ['a number', 1]];
    case 'range': {
      const range = property.write;
      if (!range) return [];
      return [
        ['above max', range.max + range.step],
        ['below min', range.min - range.step],
        ['off-step', range.min + range.step / 2],
        ['a string', String(range.min)],
        ...range.except.map((x): [string, unknown] => [`the excepted ${x}`, x]),
      ];
    }
    case 'boolean':
      return [['a string', 'true'], ['a number', 1]];
    case 'number':
      return [['a string', '1'], ['null', null]];
    case 'string':
      return [['a number', 1]];
    case 'list':
      return [['a bare string', 'x'], ['an unknown member', ['NOT_A_VALUE']]];
    case 'fixed':
      return [];
  }
}

/** Read-only properties a command may not set; an entry's `unit`/`locationName` qualifier is accepted instead. */
const readOnly = (p: ListedProperty): boolean => !p.property.writable && !(p.address.entry && ['unit', 'locationName'].includes(p.name));

describe.each(PROFILES)('%s', (_name, profile) => {
  const properties = listProperties(profile);
  const writable = properties.filter((p) => p.property.writable);
  const readonly = properties.filter(readOnly);

  it.runIf(writable.length > 0).each(writable.map((p) => [p.path, p] as const))('%s accepts each legal value', (_path, item) => {
    for (const value of legalValues(item.property)) expect(validateCommand(profile, commandFor(item, value)), JSON.stringify(value)).toMatchObject({ ok: true });
  });

  it.runIf(writable.length > 0).each(writable.map((p) => [p.path, p] as const))('%s refuses illegal values with 1102', (_path, item) => {
    for (const [what, value] of illegalValues(item.property)) {
      const result = validateCommand(profile, commandFor(item, value));
      expect(result, what).toMatchObject({ ok: false, refusal: { code: '1102' } });
      if (!result.ok) expect(result.refusal.message, what).toContain(item.name);
    }
  });

  it.runIf(readonly.length > 0 && writable.length > 0).each(readonly.map((p) => [p.path, p] as const))('%s is read-only: 2201', (_path, item) => {
    const value = legalValues(item.property, 'r')[0] ?? 0;
    expect(validateCommand(profile, commandFor(item, value))).toEqual({
      ok: false,
      refusal: { code: '2201', message: `${item.resource}.${item.name} is read-only` },
    });
  });

  it.runIf(writable.length > 0)('an unknown property or resource is refused with 2207', () => {
    const [first] = writable as [ListedProperty];
    const unknownProperty = commandFor({ ...first, name: 'noSuchProperty' }, 1);
    expect(validateCommand(profile, unknownProperty)).toEqual({
      ok: false,
      refusal: { code: '2207', message: `Property "${first.resource}.noSuchProperty" is not in the profile of this device` },
    });
    const unknownResource = commandFor({ ...first, resource: 'noSuchResource', address: { location: first.address.location } }, 1);
    expect(validateCommand(profile, unknownResource)).toEqual({
      ok: false,
      refusal: { code: '2207', message: 'Resource "noSuchResource" is not in the profile of this device' },
    });
  });

  it.runIf(writable.length > 0)('{} is refused with 1101, a non-object with 1000', () => {
    expect(validateCommand(profile, {})).toMatchObject({ ok: false, refusal: { code: '1101' } });
    for (const command of [[], 'START', null, 3]) expect(validateCommand(profile, command)).toMatchObject({ ok: false, refusal: { code: '1000' } });
  });

  it.runIf(writable.length === 0)('has no writable property: every command is refused with 2207', () => {
    for (const command of [{}, { runState: { cockState: 'NORMAL' } }, { operation: { anything: 'START' } }]) {
      expect(validateCommand(profile, command)).toEqual({
        ok: false,
        refusal: { code: '2207', message: 'This device cannot be controlled: its profile has no writable property' },
      });
    }
  });
});
