/** What the fuzz suites assert of every answer: an envelope (DESIGN A.3), with a code of the table (A.4). */
import { expect } from 'vitest';
import { ERRORS, type ErrorCode } from '../../src/errors.js';

const MESSAGE_ID = /^[A-Za-z0-9_-]{22}$/;
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}$/;

/**
 * HTTP statuses a code may carry beyond its row's: 1305 is 404 or 405, an oversized body is 1102
 * with 413, a head over 64 KiB or a request too slow is 1000 with 431 or 408, an Expect other than
 * 100-continue is 1216 with 417.
 */
const EXTRA_STATUS: Partial<Record<ErrorCode, number[]>> = { '1305': [405], '1102': [413], '1000': [408, 431], '1216': [417] };

/**
 * Asserts that `body` is an envelope that fits `status` — a success with 200, or an error whose code
 * is in the table, with the code's HTTP status and a message — and returns the code (none on success).
 */
export function expectEnvelope(status: number, body: string, context = ''): ErrorCode | undefined {
  expect(status, context).toBeLessThan(500);
  const envelope = JSON.parse(body) as { messageId: string; timestamp: string; error?: { code: ErrorCode; message: string } };
  expect(envelope.messageId, context).toMatch(MESSAGE_ID);
  expect(envelope.timestamp, context).toMatch(TIMESTAMP);
  if (status === 200) {
    expect(Object.keys(envelope).sort(), context).toEqual(['messageId', 'response', 'timestamp']);
    return undefined;
  }
  expect(Object.keys(envelope).sort(), context).toEqual(['error', 'messageId', 'timestamp']);
  const { code, message } = envelope.error!;
  expect(ERRORS[code], `${context}: code ${code}`).toBeDefined();
  expect([ERRORS[code].http, ...(EXTRA_STATUS[code] ?? [])], `${context}: code ${code}`).toContain(status);
  expect(message, context).toMatch(/\S/);
  return code;
}

/** Nothing a request sent has reached Object.prototype. */
export function expectNoPollution(): void {
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  expect(Object.prototype.hasOwnProperty.call(Object.prototype, 'polluted')).toBe(false);
}
