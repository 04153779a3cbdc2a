import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors.js';
import { checkRedirectUri } from '../../src/oauth/clients.js';

function refusal(uri: string, phase: 'QA' | 'OP'): string | null {
  try {
    checkRedirectUri(uri, phase);
    return null;
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    return `${error.code} ${error.message}`;
  }
}

describe('redirect URIs (DESIGN G: exact match; loopback only in phase QA)', () => {
  it('takes https anywhere, and loopback over http or https in phase QA', () => {
    for (const uri of ['https://partner.example/cb', 'http://127.0.0.1:9000/cb', 'http://localhost/cb', 'http://[::1]:8080/cb', 'https://localhost/cb']) {
      expect(refusal(uri, 'QA')).toBeNull();
    }
    expect(refusal('https://partner.example/cb', 'OP')).toBeNull();
  });

  it('refuses loopback in phase OP, over https too', () => {
    expect(refusal('https://localhost/cb', 'OP')).toBe('1102 Redirect URIs to localhost are allowed in phase QA only; got "https://localhost/cb".');
    for (const uri of ['http://127.0.0.1:9000/cb', 'https://127.0.0.1/cb', 'https://[::1]/cb']) expect(refusal(uri, 'OP')).toMatch(/^1102 /);
  });

  it('knows every name and address of loopback, not only 127.0.0.1, localhost and ::1', () => {
    const loopback = ['https://127.0.0.2/cb', 'https://127.1/cb', 'https://2130706433/cb', 'https://app.localhost/cb', 'https://localhost./cb', 'https://[::ffff:127.0.0.1]/cb', 'https://[0:0:0:0:0:0:0:1]/cb'];
    for (const uri of loopback) expect([uri, refusal(uri, 'OP')]).toEqual([uri, expect.stringMatching(/^1102 Redirect URIs to .* are allowed in phase QA only/)]);
    for (const uri of loopback) expect([uri, refusal(uri.replace('https:', 'http:'), 'QA')]).toEqual([uri, null]);
    for (const uri of ['https://127.partner.example/cb', 'https://localhost.partner.example/cb', 'https://[::ffff:10.0.0.1]/cb']) expect([uri, refusal(uri, 'OP')]).toEqual([uri, null]);
  });

  it('refuses http elsewhere, fragments and what is not a URL', () => {
    expect(refusal('http://partner.example/cb', 'QA')).toBe('1102 A redirect URI must be https (or http to 127.0.0.1 or localhost); got "http://partner.example/cb".');
    expect(refusal('https://partner.example/cb#x', 'OP')).toMatch(/^1102 A redirect URI has no fragment/);
    expect(refusal('/cb', 'OP')).toMatch(/^1102 redirectUris must hold absolute URLs/);
  });
});
