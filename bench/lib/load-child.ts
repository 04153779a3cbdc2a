/**
 * The load generator, in a process of its own (the server under test must not share its CPU time):
 * receives a LoadSpec over IPC, runs autocannon, sends back a LoadResult and exits.
 */
import autocannon from 'autocannon';
import type { LoadResult, LoadSpec } from './load.js';

function run(spec: LoadSpec): Promise<LoadResult> {
  let next = 0;
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url: spec.url,
        connections: spec.connections,
        duration: spec.seconds,
        // Connection i replays the i-th list of requests (modulo their number), in a loop.
        setupClient: (client) => client.setRequests(spec.perConnection[next++ % spec.perConnection.length]!),
      },
      (error, result) => {
        if (error) return reject(error);
        resolve({
          requestsPerSecond: result['2xx'] / result.duration,
          p50Ms: result.latency.p50,
          p99Ms: result.latency.p99,
          maxMs: result.latency.max,
          ok: result['2xx'],
          non2xx: result.non2xx,
          errors: result.errors + result.timeouts,
          seconds: result.duration,
        });
      },
    );
  });
}

process.once('message', (spec: LoadSpec) => {
  run(spec).then(
    (result) => process.send!(result, () => process.exit(0)),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
});
