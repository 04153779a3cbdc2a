import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkContentType, checkHeaders, CredentialHashes, repeatedHeaders } from '../../src/api/checks.js';
import { hashSecret } from '../../src/ids.js';
import { ApiError } from '../../src/errors.js';
import { createWorld, testApp, type TestApp, type World } from '../helpers/app.js';
import { rawExchange, rawRequest } from '../helpers/raw-http.js';

const valid = {
  authorization: 'Bearer token-1',
  'x-country-code': 'KR',
  'x-message-id': 'kVuV69kGTS25FUs1wrkECQ',
  'x-service-id': 'svc_1',
  'x-service-key': 'key-1',
};

function refusal(headers: Record<string, string | string[] | undefined>, isControl = false, rawHeaders: string[] = []): { code: string; message: string } | null {
  try {
    checkHeaders(headers, { region: 'KIC' }, isControl, rawHeaders);
    return null;
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    return { code: error.code, message: error.message };
  }
}

describe('the mandatory headers of DESIGN A.2', () => {
  it('accept a well-formed request and read the token bare or as Bearer', () => {
    expect(checkHeaders(valid, { region: 'KIC' }, false).token).toBe('token-1');
    expect(checkHeaders({ ...valid, authorization: 'token-2' }, { region: 'KIC' }, false).token).toBe('token-2');
  });

  it.each([
    ['authorization', '1101', 'Header Authorization is missing.'],
    ['x-country-code', '1101', 'Header x-country-code is missing.'],
    ['x-message-id', '1101', 'Header x-message-id is missing.'],
    ['x-service-id', '1101', 'Header x-service-id is missing.'],
    ['x-service-key', '1101', 'Header x-service-key is missing.'],
  ])('missing %s answers %s', (header, code, message) => {
    expect(refusal({ ...valid, [header]: undefined })).toEqual({ code, message });
  });

  it('an empty Bearer counts as missing', () => {
    expect(refusal({ ...valid, authorization: 'Bearer ' })?.code).toBe('1101');
  });

  it.each([['kr'], ['KOR'], ['K1'], ['XX']])('a malformed or unknown country %s answers 1216', (country) => {
    expect(refusal({ ...valid, 'x-country-code': country })?.code).toBe('1216');
  });

  // Codes ICU names as regions though ISO 3166-1 assigns them to no country: reserved (UK, EU, AC),
  // withdrawn (SU, YU) and private (XA, ZZ).
  it.each([['UK'], ['EU'], ['AC'], ['SU'], ['YU'], ['XA'], ['ZZ']])('%s, a code that names no country, answers 1216', (country) => {
    expect(refusal({ ...valid, 'x-country-code': country })?.code).toBe('1216');
  });

  it('a country of another region answers 1307 naming it', () => {
    expect(refusal({ ...valid, 'x-country-code': 'US' })).toEqual({ code: '1307', message: 'Country US is not served by this deployment (region KIC).' });
  });

  it('a country that belongs to no region answers 1307', () => {
    expect(refusal({ ...valid, 'x-country-code': 'AQ' })?.code).toBe('1307');
  });

  it.each([['short'], ['kVuV69kGTS25FUs1wrkECQ=='], ['kVuV69kGTS25FUs1wrkEC+'], ['kVuV69kGTS25FUs1wrkECQx']])(
    'a malformed x-message-id %s answers 1104',
    (messageId) => {
      expect(refusal({ ...valid, 'x-message-id': messageId })?.code).toBe('1104');
    },
  );

  it('checks the headers in the order of the table', () => {
    expect(refusal({ ...valid, authorization: undefined, 'x-message-id': 'bad' })?.code).toBe('1101');
    expect(refusal({ ...valid, 'x-country-code': 'us', 'x-message-id': 'bad' })?.code).toBe('1216');
    expect(refusal({ ...valid, 'x-message-id': 'bad', 'x-service-key': undefined })?.code).toBe('1104');
  });

  it('x-conditional-control must be true or false on control, and is ignored elsewhere', () => {
    expect(refusal({ ...valid, 'x-conditional-control': 'yes' }, true)).toEqual({
      code: '1216',
      message: 'Header x-conditional-control must be true or false; got "yes".',
    });
    expect(checkHeaders({ ...valid, 'x-conditional-control': 'true' }, { region: 'KIC' }, true).conditional).toBe(true);
    expect(refusal({ ...valid, 'x-conditional-control': 'yes' }, false)).toBeNull();
  });

  it('an empty x-conditional-control is another value than true or false, not a missing header', () => {
    expect(refusal({ ...valid, 'x-conditional-control': '' }, true)).toEqual({
      code: '1216',
      message: 'Header x-conditional-control must be true or false; got "".',
    });
    expect(checkHeaders(valid, { region: 'KIC' }, true).conditional).toBe(false);
  });

  it('a repeated header is not correct', () => {
    expect(refusal({ ...valid, 'x-service-id': ['a', 'b'] })?.code).toBe('1216');
    // Node keeps the first of two Authorization lines and joins other repeats: only the raw headers tell.
    expect(refusal(valid, false, ['Authorization', 'Bearer token-1', 'authorization', 'Bearer token-2'])).toEqual({
      code: '1216',
      message: 'Header authorization must be given once.',
    });
    expect(repeatedHeaders(['Host', 'h', 'X-Message-Id', 'a', 'x-message-id', 'a', 'accept', '*/*'])).toEqual(new Set(['x-message-id']));
  });
});

describe('a mandatory header sent twice, on the wire', () => {
  let t: TestApp;
  let world: World;
  let port: number;

  beforeAll(async () => {
    t = await testApp();
    world = await createWorld(t.ctx, { deviceTypes: ['DEVICE_WASHER'] });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as AddressInfo).port;
  });
  afterAll(() => t?.close());

  it.each(['authorization', 'x-service-id', 'x-message-id'])('%s: 1216, whichever value came first', async (name) => {
    const headers = world.headers();
    const again = name === 'authorization' ? 'Bearer someone-else' : headers[name]!;
    const request = rawRequest('GET /users HTTP/1.1', headers).replace(/\r\n\r\n$/, `\r\n${name}: ${again}\r\n\r\n`);
    const answer = await rawExchange(port, request);
    expect([answer.status, JSON.parse(answer.body).error]).toEqual([400, { code: '1216', message: `Header ${name} must be given once.` }]);
  });
});

describe('content-type', () => {
  it('must be application/json on a request with a body', () => {
    expect(() => checkContentType({ 'content-length': '2', 'content-type': 'application/json; charset=utf-8' })).not.toThrow();
    expect(() => checkContentType({ 'content-length': '2', 'content-type': 'text/plain' })).toThrow(ApiError);
    expect(() => checkContentType({ 'transfer-encoding': 'chunked' })).toThrow(/got none/);
  });

  it('is not needed without a body', () => {
    expect(() => checkContentType({})).not.toThrow();
    expect(() => checkContentType({ 'content-length': '0', 'content-type': 'text/plain' })).not.toThrow();
  });
});

describe('the hashes of presented credentials', () => {
  it('are the SHA-256 the store keeps, whether remembered or not', () => {
    const hashes = new CredentialHashes(2);
    for (const secret of ['key-1', 'key-2', 'key-1', 'key-3', 'key-1']) expect(hashes.of(secret)).toBe(hashSecret(secret));
  });

  it('remember none longer than any credential issued: a header of up to 64 KiB that anyone may send is not kept', () => {
    const hashes = new CredentialHashes();
    const long = 'k'.repeat(60_000);
    expect(hashes.of(long)).toBe(hashSecret(long));
    expect(hashes.size).toBe(0);
    const issued = 'x'.repeat(43);
    expect(hashes.of(issued)).toBe(hashSecret(issued));
    expect(hashes.size).toBe(1);
  });
});
