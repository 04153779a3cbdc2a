/**
 * The server of the crash test as a process of its own, to be killed with SIGKILL:
 * `node --import tsx test/delivery/crash-server.ts <sqlite file> <retry schedule>`. Prints `{"url"}` once listening.
 */
import { loadConfig } from '../../src/config.js';
import { installSignalHandlers, startServer } from '../../src/server.js';

const [databaseFile, schedule] = process.argv.slice(2);
if (!databaseFile || !schedule) throw new Error('usage: crash-server.ts <sqlite file> <retry schedule>');
const server = await startServer(
  loadConfig('test', {
    DATABASE_URL: `sqlite:${databaseFile}`,
    HOST: '127.0.0.1',
    PORT: '0',
    ADMIN_TOKEN: 'crash-test-admin',
    DELIVERY_RETRY_SCHEDULE: schedule,
    // Short, so that a lease the killed process held expires soon after the restart.
    DELIVERY_ATTEMPT_TIMEOUT_MS: '1000',
  }),
);
installSignalHandlers(server);
process.stdout.write(`${JSON.stringify({ url: server.url })}\n`);
