/** Ports for what a test starts itself: the embedded broker takes no port 0 (MQTT_PORT=0 disables it), nor does a Mosquitto or a PostgreSQL of the test's own. */
import { createServer, type AddressInfo } from 'node:net';

/** A port nothing listens on now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
