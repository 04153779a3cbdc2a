import { once } from 'node:events';
import { createConnection, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { limitPacketSize, PacketMeter } from '../../src/gateway/packet-guard.js';

const LIMIT = 1000;

/** A packet of MQTT's framing: a type byte, the remaining length as a varint, then that many bytes. */
function packet(type: number, length: number): Buffer {
  const header = [type];
  let left = length;
  do {
    let byte = left % 128;
    left = Math.floor(left / 128);
    if (left > 0) byte |= 0x80;
    header.push(byte);
  } while (left > 0);
  return Buffer.concat([Buffer.from(header), Buffer.alloc(length, 0x7b)]);
}

/** The stream cut into pieces of `size` bytes, as TCP may deliver it. */
function pieces(stream: Buffer, size: number): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < stream.length; i += size) out.push(stream.subarray(i, i + size));
  return out;
}

describe('PacketMeter: packet boundaries by their fixed headers (DESIGN J)', () => {
  const stream = Buffer.concat([packet(0x10, 60), packet(0xc0, 0), packet(0x32, LIMIT), packet(0x30, 200), packet(0xe0, 0)]);

  it.each([1, 2, 3, 7, 64, stream.length])('admits packets up to the bound however the stream is cut (pieces of %i bytes)', (size) => {
    const meter = new PacketMeter(LIMIT);
    expect(pieces(stream, size).every((piece) => meter.admit(piece))).toBe(true);
    expect(meter.refused).toBeNull();
  });

  it.each([1, 2, 5, 1024])('refuses the first packet over the bound from its header alone (pieces of %i bytes)', (size) => {
    const meter = new PacketMeter(LIMIT);
    const over = Buffer.concat([packet(0xc0, 0), packet(0x30, LIMIT + 1).subarray(0, 3)]);
    expect(pieces(over, size).every((piece) => meter.admit(piece))).toBe(false);
    expect(meter.refused).toBe(LIMIT + 1);
  });

  it('refuses 200 MiB announced by a CONNECT at its last length byte, before any of its body', () => {
    const meter = new PacketMeter(64 * 1024);
    // 200 MiB is 0x80 0x80 0x80 0x64: seven bits a byte, least significant first.
    expect(meter.admit(Buffer.from([0x10, 0x80, 0x80, 0x80]))).toBe(true);
    expect(meter.admit(Buffer.from([0x64]))).toBe(false);
    expect(meter.refused).toBe(200 * 1024 * 1024);
  });

  it('refuses a length of more than four bytes, which MQTT does not have', () => {
    const meter = new PacketMeter(Number.MAX_SAFE_INTEGER);
    expect(meter.admit(Buffer.from([0x30, 0x80, 0x80, 0x80, 0x80]))).toBe(false);
  });

  it('stays refused, whatever comes after', () => {
    const meter = new PacketMeter(LIMIT);
    expect(meter.admit(packet(0x30, LIMIT + 1))).toBe(false);
    expect(meter.admit(packet(0xc0, 0))).toBe(false);
  });
});

describe('limitPacketSize: the socket as the broker reads it', () => {
  let server: Server;
  afterEach(() => new Promise((resolve) => server.close(resolve)));

  /** A server whose every connection is limited and echoed back through the stage. */
  async function echoServer(cuts: number[]): Promise<number> {
    server = createServer((socket: Socket) => {
      const stage = limitPacketSize(socket, LIMIT, (announced) => cuts.push(announced));
      stage.on('error', () => undefined);
      stage.pipe(stage);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return (server.address() as AddressInfo).port;
  }

  it('passes packets within the bound both ways, and cuts the connection at the first one over it', async () => {
    const cuts: number[] = [];
    const socket = createConnection(await echoServer(cuts), '127.0.0.1');
    socket.on('error', () => undefined);
    await once(socket, 'connect');
    const within = Buffer.concat([packet(0x10, 60), packet(0x32, LIMIT)]);
    socket.write(within);
    let echoed = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => (echoed = Buffer.concat([echoed, chunk])));
    await expect.poll(() => echoed.length).toBe(within.length);
    expect(echoed.equals(within)).toBe(true);

    const closed = new Promise((resolve) => socket.once('close', resolve));
    socket.write(packet(0x30, 100_000));
    await closed;
    // Cut at the second length byte: 1696 so far, past the bound already.
    expect(cuts).toEqual([1696]);
  });
});
