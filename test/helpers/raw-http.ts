/**
 * HTTP/1.1 over a real socket, byte for byte: for requests `inject()` and fetch cannot send (malformed
 * request lines, control characters, heads over the limit) and answers written straight to the socket.
 */
import { connect } from 'node:net';

export interface RawAnswer {
  /** The status of the answer's status line; null when the server closed without answering. */
  status: number | null;
  /** Header names in lower case. */
  headers: Record<string, string>;
  body: string;
}

const HEAD_END = Buffer.from('\r\n\r\n');

/**
 * Parses the first final answer in `bytes` once it is whole: its head, and content-length bytes of
 * body unless `bodyless`. Interim answers (100 Continue) are skipped.
 */
function parseAnswer(bytes: Buffer, bodyless: boolean): RawAnswer | undefined {
  const headEnd = bytes.indexOf(HEAD_END);
  if (headEnd < 0) return undefined;
  const [statusLine = '', ...lines] = bytes.subarray(0, headEnd).toString('latin1').split('\r\n');
  if (/^HTTP\/1\.[01] 1\d\d /.test(statusLine)) return parseAnswer(bytes.subarray(headEnd + HEAD_END.length), bodyless);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const body = bytes.subarray(headEnd + HEAD_END.length);
  const length = bodyless ? 0 : Number(headers['content-length'] ?? 0);
  if (body.length < length) return undefined;
  return { status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? NaN), headers, body: body.subarray(0, length).toString('utf8') };
}

export interface RawOptions {
  /** The answer has no body whatever its content-length says (an answer to HEAD). */
  bodyless?: boolean;
  /** With no answer after this long, half-close: a server waiting for more of the request then sees its end. */
  quietMs?: number;
  /** Give up after this long, with status null. */
  timeoutMs?: number;
}

/**
 * Writes `request` to a new connection to `port` and resolves with the first answer, or with status
 * null if the server closes (or time runs out) before one is whole. Write errors are expected: a
 * server that refuses a head may close while the rest is still being sent.
 */
export function rawExchange(port: number, request: string | Buffer, options: RawOptions = {}): Promise<RawAnswer> {
  const { bodyless = false, quietMs = 1_000, timeoutMs = 5_000 } = options;
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const done = () => {
      clearTimeout(quiet);
      clearTimeout(timer);
      socket.destroy();
      resolve(parseAnswer(Buffer.concat(chunks), bodyless) ?? { status: null, headers: {}, body: '' });
    };
    const quiet = setTimeout(() => socket.end(), quietMs);
    const timer = setTimeout(done, timeoutMs);
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      if (parseAnswer(Buffer.concat(chunks), bodyless)) done();
    });
    socket.on('error', () => {});
    socket.on('close', done);
    socket.write(typeof request === 'string' ? Buffer.from(request, 'latin1') : request);
  });
}

/** A request as raw text: the request line, `Host` unless `headers` gives it as '' (left out), the headers, the body. */
export function rawRequest(requestLine: string, headers: Record<string, string> = {}, body = ''): string {
  const all = { host: '127.0.0.1', ...headers };
  const lines = Object.entries(all).filter(([, value]) => value !== '').map(([name, value]) => `${name}: ${value}\r\n`);
  return `${requestLine}\r\n${lines.join('')}\r\n${body}`;
}

/** Writes `request` to a new connection to `port` and resolves with all the server wrote until it closed (or `timeoutMs` passed). */
export function rawTranscript(port: number, request: string, timeoutMs = 5_000): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(Buffer.concat(chunks).toString('latin1'));
    };
    const timer = setTimeout(done, timeoutMs);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => {});
    socket.on('close', done);
    socket.write(Buffer.from(request, 'latin1'));
  });
}
