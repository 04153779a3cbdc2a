import { createServer, type IncomingHttpHeaders, type RequestListener } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Server } from 'node:net';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

export interface LoopbackServer {
  url: string;
  port: number;
  /** TCP connections accepted so far. */
  connections(): number;
  received: Received[];
  close(): Promise<void>;
}

/** A real HTTP server on 127.0.0.1 and a free port, recording every request it receives. */
export async function startHttpServer(respond: RequestListener): Promise<LoopbackServer> {
  const received: Received[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({ headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
      respond(request, response);
    });
  });
  const counted = await listen(server);
  return {
    ...counted,
    url: `http://127.0.0.1:${counted.port}/hook`,
    received,
    close: async () => {
      server.closeAllConnections();
      await counted.close();
    },
  };
}

/** A bare TCP server that only counts connections: proof that nothing connected at all. */
export async function startTcpServer(): Promise<Omit<LoopbackServer, 'url' | 'received'>> {
  return listen(createTcpServer((socket) => socket.destroy()));
}

async function listen(server: Server): Promise<Omit<LoopbackServer, 'url' | 'received'>> {
  let connections = 0;
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => connections,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
