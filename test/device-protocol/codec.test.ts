import { describe, expect, it } from 'vitest';
import {
  decodeCommand,
  decodeCommandResult,
  decodeConnection,
  decodePush,
  decodeReport,
  encodeCommand,
  encodeCommandResult,
  MAX_PAYLOAD_BYTES,
} from '../../src/device-protocol/codec.js';

const bytes = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value));

describe('device protocol codec (DESIGN B)', () => {
  it('reads a report as an object or an array of location entries', () => {
    expect(decodeReport(bytes({ humidity: { currentHumidity: 50 } }))).toEqual({ ok: true, value: { humidity: { currentHumidity: 50 } } });
    const entries = [{ location: { locationName: 'MAIN' }, runState: { currentState: 'RUNNING' } }];
    expect(decodeReport(bytes(entries))).toEqual({ ok: true, value: entries });
  });

  it.each([
    ['not JSON', '{', 'payload is not valid JSON'],
    ['a number', '12', 'a report must be a JSON object or an array of objects; got 12'],
    ['an array of numbers', '[1]', 'a report must be a JSON object or an array of objects; got [1]'],
    ['holding U+0000, which no store keeps', '{"x\\u0000":{"on":true}}', 'payload holds the character U+0000, which no name or value may contain'],
  ])('refuses a report that is %s', (_what, text, problem) => {
    expect(decodeReport(bytes(text))).toEqual({ ok: false, problem });
  });

  it.each([
    ['a lone byte FF in a key', [0xff]],
    ['an overlong encoding of "/"', [0xc0, 0xaf]],
    ['a UTF-16 surrogate', [0xed, 0xa0, 0x80]],
    ['a sequence cut short', [0xe2, 0x82]],
  ])('refuses a payload that is not UTF-8: %s', (_what, bad) => {
    const payload = Buffer.concat([Buffer.from('{"x'), Buffer.from(bad), Buffer.from('":{"on":true}}')]);
    expect(decodeReport(payload)).toEqual({ ok: false, problem: 'payload is not valid UTF-8' });
  });

  it('refuses a payload over the size bound', () => {
    const big = Buffer.alloc(MAX_PAYLOAD_BYTES + 1, 0x20);
    expect(decodeReport(big)).toEqual({ ok: false, problem: `payload is ${MAX_PAYLOAD_BYTES + 1} bytes; at most ${MAX_PAYLOAD_BYTES} are accepted` });
  });

  it('reads push codes and connection flags', () => {
    expect(decodePush(bytes({ pushCode: 'WATER_IS_FULL' }))).toEqual({ ok: true, value: { pushCode: 'WATER_IS_FULL' } });
    expect(decodePush(bytes({ pushCode: 3 }))).toEqual({ ok: false, problem: 'pushCode must be a non-empty string; got 3' });
    expect(decodePush(bytes(['WATER_IS_FULL']))).toEqual({ ok: false, problem: 'payload must be a JSON object; got ["WATER_IS_FULL"]' });
    expect(decodeConnection(bytes({ online: false }))).toEqual({ ok: true, value: { online: false } });
    expect(decodeConnection(bytes({ online: 'yes' }))).toEqual({ ok: false, problem: 'online must be true or false; got "yes"' });
    expect(decodeConnection(bytes({}))).toEqual({ ok: false, problem: 'online must be true or false; got nothing' });
  });

  it('reads command results: success with a status, refusal with or without code and message', () => {
    expect(decodeCommandResult(bytes({ commandId: 'c1', ok: true, status: { a: { b: 1 } } }))).toEqual({
      ok: true,
      value: { commandId: 'c1', ok: true, status: { a: { b: 1 } } },
    });
    expect(decodeCommandResult(bytes({ commandId: 'c1', ok: false, code: '2302', message: 'running' }))).toEqual({
      ok: true,
      value: { commandId: 'c1', ok: false, code: '2302', message: 'running' },
    });
    expect(decodeCommandResult(bytes({ commandId: 'c1', ok: false }))).toEqual({ ok: true, value: { commandId: 'c1', ok: false, code: null, message: null } });
  });

  it.each([
    [{ ok: true, status: {} }, 'commandId must be 1 to 128 of A-Z, a-z, 0-9, _ and -; got nothing'],
    [{ commandId: 'c/1', ok: true, status: {} }, 'commandId must be 1 to 128 of A-Z, a-z, 0-9, _ and -; got "c/1"'],
  ])('refuses the command result %j, which answers no command', (result, problem) => {
    expect(decodeCommandResult(bytes(result))).toEqual({ ok: false, problem });
  });

  it.each([
    [{ commandId: 'c1', ok: 'yes' }, 'ok must be true or false; got "yes"'],
    [{ commandId: 'c1', ok: true }, 'status must be a JSON object or an array of objects; got nothing'],
    [{ commandId: 'c1', ok: false, code: 2302 }, 'code must be a 4-digit string; got 2302'],
    [{ commandId: 'c1', ok: false, code: '23020' }, 'code must be a 4-digit string; got "23020"'],
    [{ commandId: 'c1', ok: false, message: 5 }, 'message must be a string; got 5'],
  ])('refuses the command result %j, naming the command it answers', (result, problem) => {
    expect(decodeCommandResult(bytes(result))).toEqual({ ok: false, problem, commandId: 'c1' });
  });

  it('encodes commands and results that decode to themselves', () => {
    const command = { commandId: 'c1', command: { airFlow: { windStrengthLevel: 'LOW' } } };
    expect(decodeCommand(Buffer.from(encodeCommand(command)))).toEqual({ ok: true, value: command });
    const refusal = { commandId: 'c1', ok: false as const, code: '2302', message: null };
    expect(JSON.parse(encodeCommandResult(refusal))).toEqual({ commandId: 'c1', ok: false, code: '2302' });
    expect(decodeCommandResult(Buffer.from(encodeCommandResult(refusal)))).toEqual({ ok: true, value: refusal });
    expect(decodeCommand(bytes({ commandId: 'c1', command: [] }))).toEqual({ ok: false, problem: 'command must be a JSON object; got []' });
  });
});
