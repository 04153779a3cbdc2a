/**
 * The answers to GETs of one turn of the event loop reach their sockets together, at the turn's end,
 * one write after another.
 *
 * A write to a socket whose reader sleeps pays for waking it (on these virtual machines an interrupt
 * to another core), inside the write. Written as each was ready, the reads of a turn were answered
 * one at a time with a request's work between two writes, long enough for the client to take the
 * last answer and sleep again, so most writes woke it. Written back to back, one wake-up serves many.
 * Status read, on a Xeon with two cores: 0.59 → 0.69 × raw node:http, 35 → 30 µs of CPU per request
 * (issue 16, BENCHMARKS.md). A write waits at most for the next check phase (setImmediate's).
 */
import type { IncomingMessage, Server } from 'node:http';
import { Socket } from 'node:net';

/** Set on a connection while it serves a GET: its answer waits for the end of the turn. */
const deferred = Symbol('writes at the end of the turn');
/** The connection's write that waits (the stream has at most one under way). */
const held = Symbol('the write held to the end of the turn');

type Connection = Socket & { [deferred]?: boolean; [held]?: (() => void) | undefined };

let due: Connection[] = [];

function write(socket: Connection): void {
  const pending = socket[held];
  socket[held] = undefined;
  pending?.();
}

function writeDue(): void {
  const sockets = due;
  due = [];
  for (const socket of sockets) write(socket);
}

function hold(socket: Connection, pending: () => void): void {
  if (due.length === 0) setImmediate(writeDue);
  socket[held] = pending;
  due.push(socket);
}

/**
 * The connection's writes wait for the end of the turn while it answers a GET (from the start when
 * `holding`). Through the stream's own extension points (`_write`, `_writev`, `_destroy`), so that
 * its buffering, order and backpressure stay the stream's: it takes the next write only once this
 * one is done. A write held when the connection is destroyed goes first, as it would have gone
 * before (a refusal written, then the connection closed).
 */
export function writeAtTurnEnd(socket: Connection, holding = false): void {
  socket[deferred] = holding;
  // A write not held goes straight on, without a closure made for it (every control's answer).
  socket._write = (chunk, encoding, callback) => {
    if (!socket[deferred]) return Socket.prototype._write.call(socket, chunk, encoding, callback);
    hold(socket, () => Socket.prototype._write.call(socket, chunk, encoding, callback));
  };
  socket._writev = (chunks, callback) => {
    if (!socket[deferred]) return Socket.prototype._writev!.call(socket, chunks, callback);
    hold(socket, () => Socket.prototype._writev!.call(socket, chunks, callback));
  };
  socket._destroy = (error, callback) => {
    write(socket);
    Socket.prototype._destroy.call(socket, error, callback);
  };
}

/**
 * The server's answers to GETs are written at the turn's end. A read is answered in the turn that
 * read it, one at a time, so its writes are spread out. A write (a control) is answered when its group
 * commit does, with the group's other answers, already back to back; held a turn longer, the control
 * did 7–10 % fewer requests a second (two pairs).
 */
export function writeResponsesAtTurnEnd(server: Server): void {
  server.on('connection', (socket: Socket) => writeAtTurnEnd(socket));
  // Before the app's own listener, which may answer at once (a status read served from memory).
  server.prependListener('request', (request: IncomingMessage) => {
    (request.socket as Connection)[deferred] = request.method === 'GET';
  });
}
