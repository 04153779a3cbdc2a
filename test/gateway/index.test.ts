import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { startGateway, type GatewayDeps } from '../../src/gateway/index.js';
import type { Device } from '../../src/core/model.js';

const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const deps = (settings: Record<string, string>): GatewayDeps => ({
  config: loadConfig('test', settings),
  devices: { reports: async (_deviceId, reports) => reports, push: async () => undefined, setConnection: async () => undefined, setRealDevicesOffline: async () => 0 },
  // The external broker here refuses before any lease is asked for.
  store: { getDevice: async () => undefined, holdLease: async () => true, releaseLease: async () => undefined },
  registrations: { getDevice: () => undefined, onDeviceChanged: () => undefined },
  logger: quiet,
});
const device = { deviceId: 'dev-1' } as Device;

describe('startGateway (DESIGN B, E)', () => {
  it('is disabled without MQTT_PORT and MQTT_URL, and then answers commands with 2209', async () => {
    const gateway = await startGateway(deps({}));
    expect(gateway).toMatchObject({ mode: 'disabled', port: null });
    expect(gateway.connected()).toBe(false);
    expect(await gateway.channel.sendCommand(device, {}, {}, 100)).toEqual({
      ok: false,
      code: '2209',
      message: 'No MQTT broker is configured, so device dev-1 cannot be reached.',
    });
    await gateway.close();
  });

  it('fails to start when the external broker refuses, without echoing its credentials', async () => {
    const start = startGateway(deps({ MQTT_URL: 'mqtt://cloud:s3cret@127.0.0.1:1' }));
    await expect(start).rejects.toThrow('MQTT broker mqtt://127.0.0.1:1 refused the connection');
    await expect(start).rejects.not.toThrow(/s3cret/);
  });

  it('starts the embedded broker on an ephemeral port', async () => {
    const gateway = await startGateway({ ...deps({}), listen: { port: 0, host: '127.0.0.1' } });
    expect(gateway.mode).toBe('embedded');
    expect(gateway.port).toBeGreaterThan(0);
    expect(gateway.connected()).toBe(true);
    await gateway.close();
    expect(gateway.connected()).toBe(false);
  });
});
