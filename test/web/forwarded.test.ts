import type { FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { firstForwarded, overTls, proxiedProtocol } from '../../src/web/forwarded.js';

const request = (headers: Record<string, string | string[]>, protocol: 'http' | 'https' = 'http') => ({ headers, protocol }) as unknown as FastifyRequest;

describe('what the TLS proxy says (DESIGN A.1)', () => {
  it('reads the first value of a proxy chain', () => {
    expect(firstForwarded('https, http')).toBe('https');
    expect(firstForwarded(['https', 'http'])).toBe('https');
    expect(firstForwarded(undefined)).toBeUndefined();
    expect(firstForwarded('')).toBeUndefined();
  });

  it('takes the scheme from X-Forwarded-Proto, else the connection', () => {
    expect(proxiedProtocol(request({ 'x-forwarded-proto': 'https,http' }))).toBe('https');
    expect(proxiedProtocol(request({}, 'https'))).toBe('https');
    expect(proxiedProtocol(request({}))).toBe('http');
  });

  it('is TLS when the proxy says so or PUBLIC_URL is https', () => {
    expect(overTls(request({ 'x-forwarded-proto': 'https, http' }), null)).toBe(true);
    expect(overTls(request({}), 'https://kic-ext.example.com')).toBe(true);
    expect(overTls(request({}), 'http://localhost:8080')).toBe(false);
    expect(overTls(request({ 'x-forwarded-proto': 'http' }), null)).toBe(false);
  });
});
