/** The wrk load generator of the HTTP scenarios: its script and its report, read as the scenarios read them. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseWrk, wrkAvailable, wrkLoad, wrkScript } from '../../bench/lib/wrk.js';

const REPORT = `Running 3s test @ http://127.0.0.1:33863
  1 threads and 50 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     2.91ms  655.00us  88.55ms   76.33%
    Req/Sec    17.24k     1.33k   19.18k    85.71%
  Latency Distribution
     50%  812.00us
     75%    2.69ms
     90%    3.12ms
     99%    9.19ms
  51712 requests in 3.08s, 7.66MB read
  Non-2xx or 3xx responses: 12
  Socket errors: connect 0, read 1, write 0, timeout 2
Requests/sec:  16789.61
Transfer/sec:      2.49MB
`;

describe('wrk', () => {
  it("reads wrk's report: successes per second, latency percentiles in ms, refusals and socket errors", () => {
    expect(parseWrk(REPORT)).toEqual({
      requestsPerSecond: (51712 - 12) / 3.08,
      p50Ms: 0.812,
      p99Ms: 9.19,
      maxMs: 88.55,
      ok: 51700,
      non2xx: 12,
      errors: 3,
      seconds: 3.08,
    });
  });

  it('sends the requests in turn, each with its host, headers and body', () => {
    const script = wrkScript('127.0.0.1:8080', [
      { method: 'GET', path: '/devices/a', headers: { 'x-api-key': 'k' } },
      { method: 'POST', path: '/devices/b', headers: {}, body: '{"x":"1"}' },
    ]);
    expect(script).toContain('wrk.format("GET", "/devices/a", { ["host"] = "127.0.0.1:8080", ["x-api-key"] = "k" }, nil)');
    expect(script).toContain('wrk.format("POST", "/devices/b", { ["host"] = "127.0.0.1:8080" }, "{\\"x\\":\\"1\\"}")');
  });

  describe.skipIf(!wrkAvailable())('against a node:http server', () => {
    const seen = new Set<string>();
    let server: Server;
    let url: string;
    beforeAll(async () => {
      server = createServer((request, response) => {
        seen.add(`${request.method} ${request.url} ${request.headers['x-api-key']}`);
        response.end('ok');
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(() => server.close());

    it('is answered 2xx to every request of every connection list', async () => {
      const perConnection = [[{ method: 'GET' as const, path: '/a', headers: { 'x-api-key': '1' } }], [{ method: 'GET' as const, path: '/b', headers: { 'x-api-key': '2' } }]];
      const result = await wrkLoad({ url, connections: 2, seconds: 1, perConnection });
      expect(result.ok).toBeGreaterThan(0);
      expect([...seen].sort()).toEqual(['GET /a 1', 'GET /b 2']);
    });
  });
});
