/** DESIGN J: a device's stored status is at most 32 KiB and 8 levels deep; no legitimate status comes near. */
import { describe, expect, it } from 'vitest';
import { commandFor, legalValues, listModels, listReadable, mergeStatus, parsedProfile } from '../../src/catalog/index.js';
import { MAX_STATUS_BYTES, MAX_STATUS_DEPTH, nestsDeeperThan, statusOverBound } from '../../src/catalog/limits.js';
import type { DeviceStatus } from '../../src/catalog/types.js';
import { FOLDERS, hasFile, readJson } from './fixtures.js';

/** A JSON value of objects nested `levels` deep. */
const nested = (levels: number): unknown => (levels === 0 ? 'bottom' : { a: nested(levels - 1) });
const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));
const depth = (value: unknown): number => (typeof value === 'object' && value !== null ? 1 + Math.max(0, ...Object.values(value).map(depth)) : 0);

/** A status of exactly `size` bytes of JSON: {"pad":"xxx…"} is 10 bytes around the padding. */
const ofSize = (size: number, fill = 'x') => ({ pad: fill.repeat((size - 10) / Buffer.byteLength(fill)) });

describe('the status bound (DESIGN J)', () => {
  it('measures nesting of objects and arrays, the status itself being the first level', () => {
    expect(nestsDeeperThan('text', 0)).toBe(false);
    expect(nestsDeeperThan({}, 0)).toBe(true);
    expect(nestsDeeperThan({}, 1)).toBe(false);
    expect(nestsDeeperThan([{ a: [1] }], 2)).toBe(true);
    expect(nestsDeeperThan([{ a: [1] }], 3)).toBe(false);
    expect(nestsDeeperThan(nested(8), 8)).toBe(false);
    expect(nestsDeeperThan(nested(9), 8)).toBe(true);
  });

  it('keeps a status of 8 levels and refuses 9, naming the limit', () => {
    expect(statusOverBound(nested(8) as DeviceStatus)).toBeNull();
    expect(statusOverBound({ extra: nested(8) })).toBe("the status would nest more than 8 levels deep; a device's status is at most 8 levels deep");
    // A whole-profile location status is an array of entries: the array is the first level.
    expect(statusOverBound([{ location: { locationName: 'MAIN' }, extra: nested(6) }] as DeviceStatus)).toBeNull();
    expect(statusOverBound([{ location: { locationName: 'MAIN' }, extra: nested(7) }] as DeviceStatus)).not.toBeNull();
  });

  it('keeps a status of 32 KiB of JSON and refuses one byte more, counting UTF-8 bytes, naming the limit', () => {
    expect(bytes(ofSize(MAX_STATUS_BYTES))).toBe(MAX_STATUS_BYTES);
    expect(statusOverBound(ofSize(MAX_STATUS_BYTES))).toBeNull();
    expect(statusOverBound(ofSize(MAX_STATUS_BYTES + 1))).toBe(`the status would be 32769 bytes of JSON; a device's status is at most 32768 bytes (32 KiB)`);
    // 16,379 two-byte characters are 32,768 bytes of text though only 16,389 characters.
    expect(statusOverBound(ofSize(MAX_STATUS_BYTES, 'é'))).toBeNull();
    expect(statusOverBound(ofSize(MAX_STATUS_BYTES + 2, 'é'))).toBe(`the status would be 32770 bytes of JSON; a device's status is at most 32768 bytes (32 KiB)`);
  });

  it('a nesting of 20,000 levels is judged without walking it all', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 20_000; i++) deep = [deep];
    expect(statusOverBound({ deep } as DeviceStatus)).toMatch(/more than 8 levels/);
  });

  describe('no legitimate status comes near it', () => {
    const FAR_BYTES = MAX_STATUS_BYTES / 16;
    const FAR_DEPTH = MAX_STATUS_DEPTH / 2;

    it.each(listModels().map((m) => [`${m.deviceType} ${m.modelName}`, m] as const))(
      "%s: the default status, and every readable property at its longest legal value, stay under 2 KiB and 4 levels",
      (_name, model) => {
        const profile = parsedProfile(model);
        let fullest: DeviceStatus = model.defaultStatus;
        for (const item of listReadable(profile)) {
          const longest = legalValues(item.property, 'r').sort((a, b) => bytes(b) - bytes(a))[0];
          fullest = mergeStatus(profile, fullest, commandFor(item, longest));
        }
        for (const status of [model.defaultStatus, fullest]) {
          expect(bytes(status)).toBeLessThan(FAR_BYTES);
          expect(depth(status)).toBeLessThanOrEqual(FAR_DEPTH);
          expect(statusOverBound(status)).toBeNull();
        }
      },
    );

    const REFERENCE = FOLDERS.flatMap((folder) => ['status.json', 'lgdoc_status.json'].filter((file) => hasFile(folder, file)).map((file) => [`${folder}/${file}`, readJson(folder, file)] as const));

    it.each(REFERENCE)('%s stays under 2 KiB and 4 levels', (_file, status) => {
      expect(bytes(status)).toBeLessThan(FAR_BYTES);
      expect(depth(status)).toBeLessThanOrEqual(FAR_DEPTH);
    });
  });
});
