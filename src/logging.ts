/**
 * The process's log: JSON lines on stdout (DESIGN E), one per request at `info`.
 *
 * Two things make a line per request affordable at tens of thousands of requests a second (issue 16):
 * the lines written during one event-loop turn leave in one write at the turn's end, and the request
 * line is built by hand in the shape pino gives every other line. Measured in one process, a line cost
 * ~6 µs through pino and a write of its own, ~1.5 µs this way.
 */
import { hostname } from 'node:os';
import pino, { type Logger } from 'pino';
// CommonJS: its class is a property of the module object (the default import) as well as the object itself.
import sonicBoom from 'sonic-boom';

/** Where the turn's lines go: sonic-boom, which handles short writes and EAGAIN. */
interface Sink {
  write(chunk: string): boolean;
  flushSync(): void;
}

/** A pino destination that joins the lines of one event-loop turn into one write. */
export class TurnBatchedStream {
  private pending = '';

  constructor(private readonly sink: Sink) {}

  write(line: string): boolean {
    if (this.pending === '') setImmediate(this.flush);
    this.pending += line;
    return true;
  }

  readonly flush = (): void => {
    if (this.pending === '') return;
    const chunk = this.pending;
    this.pending = '';
    this.sink.write(chunk);
  };

  /** Everything written so far, on its way out before this returns: at exit. */
  flushSync(): void {
    this.flush();
    this.sink.flushSync();
  }
}

let stdout: TurnBatchedStream | undefined;

/** The one stream on stdout of this process, flushed at exit. */
function stdoutStream(): TurnBatchedStream {
  if (!stdout) {
    // Written at once, as pino's own stdout is: a turn's lines are one write either way, and handing it
    // to libuv's threads cost more than the write (1.9 against 1.4 µs of CPU per line, measured alone).
    const sink = new sonicBoom.SonicBoom({ fd: process.stdout.fd ?? 1, sync: true });
    // A reader that went away (EPIPE) ends logging, not the process, as pino's own stdout does; sonic-boom's
    // flushSync would retry the write forever at exit.
    sink.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') throw error;
      sink.write = () => true;
      sink.flushSync = () => {};
    });
    const stream = new TurnBatchedStream(sink);
    process.once('exit', () => stream.flushSync());
    stdout = stream;
  }
  return stdout;
}

/** What one request's line says (DESIGN E). */
export interface RequestLogFields {
  /** The x-message-id the caller sent, as sent. */
  messageId: string | string[] | undefined;
  serviceId: string | undefined;
  /** Method and route pattern, e.g. `GET /devices/:deviceId`. */
  route: string;
  status: number;
  durationMs: number;
}

export interface ProcessLog {
  logger: Logger;
  /** Writes one request's line; a no-op unless `info` is logged. */
  request(fields: RequestLogFields): void;
}

/** The logger at `level` on `stream` (stdout by default), with the request line written to the same stream. */
export function createLog(level: string, stream: { write(line: string): boolean } = stdoutStream()): ProcessLog {
  const logger = pino({ level }, stream);
  if (!logger.isLevelEnabled('info')) return { logger, request: () => {} };
  // pino's default base, as it writes it; a test holds the two shapes together.
  const bindings = `,"pid":${process.pid},"hostname":${JSON.stringify(hostname())}`;
  return {
    logger,
    request: (fields) => stream.write(requestLine(Date.now(), bindings, fields)),
  };
}

/** pino's line for `logger.info(fields, 'request')`: fields that are undefined are left out, as pino leaves them. */
export function requestLine(time: number, bindings: string, { messageId, serviceId, route, status, durationMs }: RequestLogFields): string {
  return `{"level":30,"time":${time}${bindings}${messageId === undefined ? '' : `,"messageId":${JSON.stringify(messageId)}`}${serviceId === undefined ? '' : `,"serviceId":${JSON.stringify(serviceId)}`},"route":${JSON.stringify(route)},"status":${status},"durationMs":${durationMs},"msg":"request"}\n`;
}
