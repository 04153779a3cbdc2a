import { createConnection } from 'node:net';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/** The PostgreSQL the suite also runs on: DATABASE_URL when it names one, else the local server. */
const POSTGRES_URL = process.env.DATABASE_URL?.startsWith('postgres') ? process.env.DATABASE_URL : 'postgres://postgres@127.0.0.1:5432/postgres';

function reachable(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = createConnection({ host: hostname, port: Number(port || 5432), timeout: 1000 });
    const done = (up: boolean) => {
      socket.destroy();
      resolve(up);
    };
    socket.once('connect', () => done(true)).once('error', () => done(false)).once('timeout', () => done(false));
  });
}

const postgres = await reachable(POSTGRES_URL);
if (!postgres) console.warn(`PostgreSQL is not reachable at ${new URL(POSTGRES_URL).host}: the suite runs on SQLite only.`);

/** Two-node and restart tests: PostgreSQL only, as DESIGN F has it. */
const POSTGRES_ONLY = ['test/cluster/**/*.test.ts'];

/**
 * The files whose stores come from test/helpers/app.ts (testApp, testStore), which honours
 * TEST_DATABASE_URL with a database of each file's own: they run once more on PostgreSQL. The
 * store's own contract runs there from test/store; a file that opens `sqlite::memory:` itself is not
 * listed, as it would only run the same SQLite twice.
 */
const postgresProject = {
  extends: true as const,
  test: {
    name: 'postgres',
    include: [
      'test/api/**/*.test.ts',
      'test/context.test.ts',
      'test/console/routes.test.ts',
      'test/console/live.test.ts',
      'test/admin/**/*.test.ts',
      'test/oauth/**/*.test.ts',
      'test/core/devices-*.test.ts',
      'test/core/subscriptions.test.ts',
      'test/delivery/dispatcher.test.ts',
      'test/delivery/endpoints.test.ts',
      'test/delivery/messages.test.ts',
      'test/fuzz/admin.test.ts',
      'test/fuzz/http.test.ts',
      'test/delivery/retention.test.ts',
      'test/gateway/gateway.test.ts',
      'test/ops/**/*.test.ts',
      'test/sim/**/*.test.ts',
      ...POSTGRES_ONLY,
    ],
    env: { TEST_DATABASE_URL: POSTGRES_URL },
  },
};

/**
 * The partner SDK (packages/client) and its examples, against real server processes; the package's
 * name resolves to its source, so no build is needed.
 */
const clientProject = {
  extends: true as const,
  resolve: { alias: { '@appliance-cloud/client': fileURLToPath(new URL('./packages/client/src/index.ts', import.meta.url)) } },
  test: { name: 'client', include: ['packages/client/test/**/*.test.ts', 'examples/**/*.test.ts'] },
};

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      { extends: true, test: { name: 'sqlite', include: ['test/**/*.test.ts'], exclude: POSTGRES_ONLY } },
      clientProject,
      ...(postgres ? [postgresProject] : []),
    ],
  },
});
