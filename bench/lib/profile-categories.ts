/**
 * Where a server's CPU goes, from a `.cpuprofile` (`BENCH_SERVER_NODE_OPTIONS='--cpu-prof
 * --cpu-prof-dir=…'`): busy time after start-up by category, each sample given to the innermost frame
 * of its stack that a category claims.
 *
 *   node --import tsx bench/lib/profile-categories.ts <file.cpuprofile> [CPU µs per request]
 *
 * With the CPU per request measured in the same run, each share is also shown in µs per request.
 */
import { readFileSync } from 'node:fs';

interface CallFrame {
  functionName: string;
  url: string;
}
interface Profile {
  nodes: { id: number; callFrame: CallFrame; children?: number[] }[];
  samples: number[];
  timeDeltas: number[];
}

const START_UP = 'start-up';
/** In order of precedence for one frame; the stack is walked from its leaf. */
const CATEGORIES: [string, (frame: CallFrame) => boolean][] = [
  ['writing to the socket (writev; the raw server pays it too)', (f) => ['writev', 'writevGeneric', 'writeUtf8String', 'writeLatin1String', 'writeBuffer'].includes(f.functionName)],
  ['JSON.parse of stored rows', (f) => /\/store\/.*rows\.js$/.test(f.url) && /parse/i.test(f.functionName)],
  ['SQLite BEGIN/COMMIT (WAL write, fsync)', (f) => f.functionName === 'sqliteTransaction'],
  ['SQLite statements', (f) => /\/store\/sqlite\/database\.js$/.test(f.url) || f.url.includes('better-sqlite3')],
  ['PostgreSQL client', (f) => f.url.includes('node_modules/pg')],
  ['envelope (timestamp, ids)', (f) => /\/dist\/(ids|api\/envelope)\.js$/.test(f.url)],
  ['metrics (prom-client)', (f) => f.url.includes('prom-client') || f.url.endsWith('/dist/metrics.js')],
  ['lookup cache', (f) => f.url.endsWith('/dist/core/cache.js')],
  ['partner checks', (f) => /\/dist\/api\/(checks|plugins\/partner)\.js$/.test(f.url)],
  ['simulator, catalog, gateway', (f) => /\/dist\/(sim|catalog|gateway|device-protocol)\//.test(f.url)],
  ['store (our code)', (f) => f.url.includes('/dist/store/')],
  ['routes, domain, app (our code)', (f) => f.url.includes('/dist/')],
  // Compiled serializers are `new Function`s: no URL, named `anonymous…`.
  ['response serialization (fast-json-stringify)', (f) => f.url.includes('fast-json-stringify') || (f.url === '' && f.functionName.startsWith('anonymous'))],
  ['Fastify: routing, hooks, reply', (f) => /node_modules\/(fastify|find-my-way)\//.test(f.url)],
  ['node:http: request parsing, response head', (f) => /^node:(_http|net|internal\/streams|internal\/stream_base)/.test(f.url)],
];

function isStartUp(frame: CallFrame): boolean {
  return /modules\/(cjs|esm)/.test(frame.url) || frame.url.includes('node_modules/avvio') || ['compileSourceTextModule', 'buildApp', 'startServer'].includes(frame.functionName);
}

function categorize(profile: Profile): Map<string, number> {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n.id);
  const times = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const leaf = nodes.get(id)!.callFrame;
    if (leaf.functionName === '(idle)') return;
    const stack: CallFrame[] = [];
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) stack.push(nodes.get(cur)!.callFrame);
    let category = stack.some(isStartUp) ? START_UP : undefined;
    for (const frame of stack) {
      if (category) break;
      category = CATEGORIES.find(([, claims]) => claims(frame))?.[0];
    }
    category ??= `V8 and the rest: ${['(garbage collector)', '(program)'].includes(leaf.functionName) ? leaf.functionName : 'microtasks, node internals'}`;
    times.set(category, (times.get(category) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  return times;
}

const [file, perRequest] = process.argv.slice(2);
if (!file) throw new Error('usage: profile-categories.ts <file.cpuprofile> [CPU µs per request]');
const times = categorize(JSON.parse(readFileSync(file, 'utf8')) as Profile);
const startUp = times.get(START_UP) ?? 0;
times.delete(START_UP);
const busy = [...times.values()].reduce((a, b) => a + b, 0);
for (const [category, time] of [...times].sort((a, b) => b[1] - a[1])) {
  const micros = perRequest ? `${((Number(perRequest) * time) / busy).toFixed(0).padStart(5)} µs  ` : '';
  console.log(`${((100 * time) / busy).toFixed(1).padStart(5)} %  ${micros}${category}`);
}
console.log(`busy ${(busy / 1e6).toFixed(2)} s after a start-up of ${(startUp / 1e6).toFixed(2)} s`);
