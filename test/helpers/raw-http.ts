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

/** Parses the first answer in `bytes` once it is whole (its head and content-length bytes of body). */
function parseAnswer(bytes: Buffer): RawAnswer | undefined {
  const headEnd = bytes.indexOf(HEAD_END);
  if (headEnd < 0) return undefined;
  const [statusLine = '', ...lines] = bytes.subarray(0, headEnd).toString('latin1').split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const body = bytes.subarray(headEnd + HEAD_END.length);
  const length = Number(headers['content-length'] ?? 0);
  if (body.length < length) return undefined;
  return { status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? NaN), headers, body: body.subarray(0, length).toString('utf8') };
}

/**
 * Writes `request` to a new connection to `port` and resolves with the first answer, or with status
 * null if the server closes (or `timeoutMs` pass) before one is whole. Write errors are expected:
 * a server that refuses a head may close while the rest is still being sent.
 */
export function rawExchange(port: number, request: string | Buffer, timeoutMs = 5_000): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(parseAnswer(Buffer.concat(chunks)) ?? { status: null, headers: {}, body: '' });
    };
    const timer = setTimeout(done, timeoutMs);
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      if (parseAnswer(Buffer.concat(chunks))) done();
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
