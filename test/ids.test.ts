import { describe, expect, it } from 'vitest';
import { formatTimestamp, hashSecret, isDeviceId, isMessageId, newMessageId, secretMatches } from '../src/ids.js';

describe('ids and timestamps', () => {
  it('a message id is a UUID as 22 URL-safe base64 characters', () => {
    const id = newMessageId();
    expect(isMessageId(id)).toBe(true);
    expect(Buffer.from(id, 'base64url')).toHaveLength(16);
  });

  it('is a UUIDv7: its time first, so ids of one millisecond share their first 8 characters', () => {
    const at = Date.UTC(2026, 10, 24, 7, 30, 0, 123);
    const [a, b] = [newMessageId(at), newMessageId(at)];
    const bytes = Buffer.from(a, 'base64url');
    expect(bytes.readUIntBE(0, 6)).toBe(at);
    expect(bytes[6]! >> 4).toBe(7);
    expect(bytes[8]! >> 6).toBe(0b10);
    expect(a.slice(0, 8)).toBe(b.slice(0, 8));
    expect(a).not.toBe(b);
    // Across many refills of the random bytes drawn ahead.
    expect(new Set(Array.from({ length: 10_000 }, () => newMessageId(at))).size).toBe(10_000);
  });

  it('timestamps are UTC without zone, with microseconds', () => {
    expect(formatTimestamp(Date.UTC(2025, 0, 9, 4, 24, 35, 540) + 0.658)).toBe('2025-01-09T04:24:35.540658');
    expect(formatTimestamp(Date.UTC(2025, 0, 9, 4, 24, 35, 0))).toBe('2025-01-09T04:24:35.000000');
    // The same millisecond again, then the next: its text is kept for the one, not for the other.
    expect(formatTimestamp(Date.UTC(2025, 0, 9, 4, 24, 35, 0) + 0.999)).toBe('2025-01-09T04:24:35.000999');
    expect(formatTimestamp(Date.UTC(2025, 0, 9, 4, 24, 35, 1))).toBe('2025-01-09T04:24:35.001000');
  });

  it('device ids are 1 to 128 of A-Z a-z 0-9 _ -', () => {
    expect(isDeviceId('MW2-0B530EFD-1ADF_x')).toBe(true);
    expect(isDeviceId('a'.repeat(129))).toBe(false);
    expect(isDeviceId('a b')).toBe(false);
    expect(isDeviceId('')).toBe(false);
  });

  it('secrets are compared by hash', () => {
    expect(secretMatches('s3cret', hashSecret('s3cret'))).toBe(true);
    expect(secretMatches('s3cre7', hashSecret('s3cret'))).toBe(false);
  });
});
