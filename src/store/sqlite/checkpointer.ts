/**
 * WAL checkpoints on a thread of their own. SQLite checkpoints in the connection whose commit took the
 * WAL past its limit (1,000 frames): that commit then copied the pages into the database file and
 * waited for two fsyncs, on the event loop; draining a backlog of deliveries, once every dozen
 * commits. Here a worker thread, with its own connection to the file, checkpoints at each tick what
 * has been committed, as SQLite's own checkpoints do (PASSIVE: it never blocks the writer, and the
 * writer starts the WAL over once a checkpoint has caught up), and the store's connection does not
 * checkpoint at all.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

export interface CheckpointerSettings {
  filename: string;
  /** How often the worker checkpoints what was committed. */
  intervalMs: number;
}

/** The worker's code: CommonJS in an eval'd worker, the driver's path passed in. */
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.filename);
db.pragma('busy_timeout = 5000');
const timer = setInterval(() => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch (error) {
    parentPort.postMessage({ error: String((error && error.message) || error) });
  }
}, workerData.intervalMs);
parentPort.on('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

export interface Checkpointer {
  /** Stops the worker and closes its connection. */
  stop(): Promise<void>;
}

export function startCheckpointer(settings: CheckpointerSettings, onError: (message: string) => void): Checkpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(WORKER, { eval: true, workerData: { ...settings, driver } });
  worker.on('message', (message: { error?: string }) => {
    if (message.error) onError(message.error);
  });
  worker.on('error', (error) => onError(error.message));
  // The worker alone must not keep the process alive.
  worker.unref();
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  return {
    async stop() {
      // Held until it has closed its connection: the store's own close checkpoints last.
      worker.ref();
      worker.postMessage('stop');
      await exited;
    },
  };
}
