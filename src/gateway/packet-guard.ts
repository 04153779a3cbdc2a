/**
 * The packet size bound of DESIGN J, enforced as bytes arrive: aedes (through mqtt-packet) has no
 * maximum packet size and buffers a packet whole before it looks at it, authentication included.
 * This stage reads each packet's fixed header (a type byte and the remaining length, a varint of at
 * most four bytes) as it streams past and cuts the connection the moment a packet announces more
 * than the bound, so a stranger's 200 MB CONNECT or a device's 20 MB PUBLISH is never buffered.
 */
import { Duplex } from 'node:stream';
import type { Socket } from 'node:net';

/** Follows packet boundaries in a byte stream by their fixed headers, skipping their bodies unread. Pure. */
export class PacketMeter {
  private state: 'type' | 'length' | 'body' = 'type';
  private length = 0;
  private lengthBytes = 0;
  private bodyLeft = 0;
  private refusedLength: number | null = null;

  /** `maxLength` bounds a packet's remaining length (everything after its fixed header). */
  constructor(private readonly maxLength: number) {}

  /**
   * Takes the next bytes of the stream; false once a packet announces more than the bound or a
   * malformed length (a fifth length byte), and from then on.
   */
  admit(chunk: Uint8Array): boolean {
    if (this.refusedLength !== null) return false;
    let i = 0;
    while (i < chunk.length) {
      if (this.state === 'type') {
        i++;
        this.state = 'length';
        this.length = 0;
        this.lengthBytes = 0;
      } else if (this.state === 'length') {
        const byte = chunk[i++]!;
        this.length += (byte & 0x7f) * 128 ** this.lengthBytes++;
        // Later length bytes only add to it: what is announced so far is already a lower bound.
        if (this.length > this.maxLength || (byte & 0x80 && this.lengthBytes === 4)) {
          this.refusedLength = this.length;
          return false;
        }
        if (byte & 0x80) continue;
        this.bodyLeft = this.length;
        this.state = this.length === 0 ? 'type' : 'body';
      } else {
        const skipped = Math.min(this.bodyLeft, chunk.length - i);
        i += skipped;
        this.bodyLeft -= skipped;
        if (this.bodyLeft === 0) this.state = 'type';
      }
    }
    return true;
  }

  /** What the refused packet's length bytes announced up to the one that passed the bound; null while none was. */
  get refused(): number | null {
    return this.refusedLength;
  }
}

/**
 * The socket as a stream for the broker, passing its bytes on only while every packet's announced
 * size is within `maxLength`; past it the socket is destroyed and `onCut` told how much was
 * announced (at least).
 * Writes go straight to the socket.
 */
export function limitPacketSize(socket: Socket, maxLength: number, onCut: (announcedAtLeast: number) => void): Duplex {
  const meter = new PacketMeter(maxLength);
  const stage = new Duplex({
    allowHalfOpen: false,
    read() {
      socket.resume();
    },
    write(chunk: Buffer, _encoding, callback) {
      socket.write(chunk, callback);
    },
    // mqtt-packet writes a packet in pieces within one cork: they reach the socket as one write.
    writev(chunks: { chunk: Buffer }[], callback) {
      socket.write(Buffer.concat(chunks.map(({ chunk }) => chunk)), callback);
    },
    final(callback) {
      socket.end(callback);
    },
    destroy(error, callback) {
      socket.destroy();
      callback(error);
    },
  });
  socket.on('data', (chunk: Buffer) => {
    if (!meter.admit(chunk)) {
      onCut(meter.refused ?? 0);
      stage.destroy();
      return;
    }
    // The broker reads at its own pace: the socket waits while the stage's buffer is full.
    if (!stage.push(chunk)) socket.pause();
  });
  socket.on('end', () => stage.push(null));
  socket.on('error', (error) => stage.destroy(error));
  socket.on('close', () => stage.destroy());
  return stage;
}
