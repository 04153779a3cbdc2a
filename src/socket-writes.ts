/**
 * The responses of one turn of the event loop reach their sockets together, at the turn's end,
 * one write after another.
 *
 * A write to a socket whose reader sleeps pays for waking it (on these virtual machines an interrupt
 * to another core), inside the write. Written as each was ready, the requests of a turn were
 * answered one at a time with a request's work between two writes, long enough for the client to
 * take the last answer and sleep again, so most writes woke it. Written back to back, one wake-up
 * serves many. Status read, in one run: 38 and 43 → 30 and 34 µs of CPU per request (issue 16).
 * A write waits at most for the next check phase (setImmediate's), microseconds under load.
 */
import type { IncomingMessage, Server } from 'node:http';
import { Socket } from 'node:net';

let due: (() => void)[] = [];

function writeDue(): void {
  const writes = due;
  due = [];
  for (const write of writes) write();
}

function atTurnEnd(write: () => void): void {
  if (due.length === 0) setImmediate(writeDue);
  due.push(write);
}

/** Set on a connection while it serves a GET: its answer waits for the end of the turn. */
const deferred = Symbol('writes at the end of the turn');

type Connection = Socket & { [deferred]?: boolean };

/**
 * The connection's writes wait for the end of the turn while it answers a GET. Through the stream's
 * own extension points (`_write`, `_writev`), so that its buffering, order and backpressure stay the
 * stream's: it takes the next write only once this one is done.
 */
export function writeAtTurnEnd(socket: Connection): void {
  socket[deferred] = true;
  socket._write = (chunk, encoding, callback) => {
    if (!socket[deferred]) return Socket.prototype._write.call(socket, chunk, encoding, callback);
    atTurnEnd(() => Socket.prototype._write.call(socket, chunk, encoding, callback));
  };
  socket._writev = (chunks, callback) => {
    if (!socket[deferred]) return Socket.prototype._writev!.call(socket, chunks, callback);
    atTurnEnd(() => Socket.prototype._writev!.call(socket, chunks, callback));
  };
}

/**
 * The server's answers to GETs are written at the turn's end. A read is answered in the turn that
 * read it, one at a time, so its writes are spread out. A write (a control) is answered when its group
 * commit does, with the group's other answers, already back to back; held a turn longer, the control
 * did 7–10 % fewer requests a second (two pairs).
 */
export function writeResponsesAtTurnEnd(server: Server): void {
  server.on('connection', writeAtTurnEnd);
  server.on('request', (request: IncomingMessage) => {
    (request.socket as Connection)[deferred] = request.method === 'GET';
  });
}
