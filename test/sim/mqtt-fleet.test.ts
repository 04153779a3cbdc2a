/**
 * The fleet of `sim devices` in process, against a cloud with its embedded broker: the devices
 * refuse commands with the rules of a virtual appliance, and what they do over time reaches the store.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { deepEqual } from '../../src/catalog/values.js';
import { randomId } from '../../src/ids.js';
import { startFleet, parseDeviceList, type Fleet } from '../../src/sim/mqtt/fleet.js';
import { startCloud, type Cloud } from '../gateway/fixture.js';

const MAIN = { location: { locationName: 'MAIN' } };

let cloud: Cloud | undefined;
let fleet: Fleet | undefined;
afterEach(async () => {
  await fleet?.stop();
  await cloud?.close();
  fleet = cloud = undefined;
});

async function until(check: () => Promise<boolean>, what: string, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A cloud and a fleet of one appliance of the type's default model, online. */
async function fleetOf(deviceType: string, timeScale = 1): Promise<{ deviceId: string; errors: unknown[] }> {
  cloud = await startCloud('embedded');
  const { device, deviceSecret } = await cloud.ctx.devices.register(cloud.world.userNumber, {
    deviceType,
    deviceId: `fleet-${randomId(9)}`,
    alias: deviceType,
    virtual: false,
  });
  const errors: unknown[] = [];
  fleet = await startFleet({
    mqttUrl: cloud.url,
    devices: [{ deviceId: device.deviceId, secret: deviceSecret, deviceType: device.deviceType, modelName: device.modelName }],
    timeScale,
    onError: (error) => errors.push(error),
  });
  const { deviceId } = device;
  await until(async () => (await cloud!.ctx.devices.state(deviceId)).online, `the ${deviceType} online`);
  return { deviceId, errors };
}

describe('startFleet', () => {
  it('refuses a command as the virtual washer would (2301 with remote control off), after reporting the switch itself', async () => {
    const { deviceId, errors } = await fleetOf('DEVICE_WASHER');
    // The panel switches remote control off: the device reports it like any change.
    await fleet!.simulator.act(deviceId, 'remote-control-off');
    await until(async () => {
      const { status } = await cloud!.ctx.devices.state(deviceId);
      return (status as { remoteControlEnable: { remoteControlEnabled: boolean } }[])[0]!.remoteControlEnable.remoteControlEnabled === false;
    }, 'the report of remote control off');
    const device = await cloud!.ctx.devices.get(deviceId);
    // Not conditional: the cloud does not check, so the refusal is the device's own, over MQTT.
    await expect(cloud!.ctx.devices.control(device, { ...MAIN, operation: { washerOperationMode: 'START' } }, false)).rejects.toMatchObject({
      code: '2301',
      message: expect.stringContaining('remoteControlEnabled'),
    });
    expect(errors).toEqual([]);
  });

  it('runs a washing cycle to its end from its own engine: the store sees it end', async () => {
    const { deviceId, errors } = await fleetOf('DEVICE_WASHER', 3000);
    await cloud!.ctx.devices.control(await cloud!.ctx.devices.get(deviceId), { ...MAIN, operation: { washerOperationMode: 'START' } }, true);
    const runState = async () => (await cloud!.ctx.devices.state(deviceId)).status as { runState: { currentState: string } }[];
    await until(async () => (await runState())[0]!.runState.currentState === 'END', 'the end of the cycle', 10_000);
    expect(errors).toEqual([]);
  });

  it("keeps an oven's temperature in LG's shape over MQTT: a control in °C switches the unit the device answers with", async () => {
    const { deviceId, errors } = await fleetOf('DEVICE_OVEN');
    const OVEN = { location: { locationName: 'OVEN' } };
    const temperature = async () => ((await cloud!.ctx.devices.state(deviceId)).status as { temperature: unknown }[])[0]?.temperature;
    expect(await temperature()).toEqual({ targetTemperature: 350, unit: 'F' });
    const device = await cloud!.ctx.devices.get(deviceId);
    const answered = await cloud!.ctx.devices.control(device, { ...OVEN, temperature: { targetTemperature: 180, unit: 'C' } }, true);
    expect((answered.status as { temperature: unknown }[])[0]?.temperature).toEqual({ targetTemperature: 180, unit: 'C' });
    expect(await temperature()).toEqual({ targetTemperature: 180, unit: 'C' });
    expect(errors).toEqual([]);
  });

  it("refuses and counts an oven's report of every unit at once, and stores the next one in LG's shape", async () => {
    cloud = await startCloud('embedded');
    const { device, deviceSecret } = await cloud.ctx.devices.register(cloud.world.userNumber, { deviceType: 'DEVICE_OVEN', deviceId: `oven-${randomId(9)}`, alias: 'Oven', virtual: false });
    const client = await cloud.connect({ deviceId: device.deviceId, secret: deviceSecret });
    const OVEN = { location: { locationName: 'OVEN' } };
    const rejected = async () => (await cloud!.metrics.reportsRejected.get()).values.find((v) => v.labels.source === 'mqtt')?.value ?? 0;
    await client.report({ ...OVEN, temperature: [{ unit: 'F', targetTemperature: 400 }, { unit: 'C', targetTemperature: 205 }] });
    await client.report({ ...OVEN, temperature: { targetTemperature: 375, unit: 'F' } });
    const temperature = async () => ((await cloud!.ctx.devices.state(device.deviceId)).status as { temperature: unknown }[])[0]?.temperature;
    // Per device, reports are handled in order: once the second is stored, the first was refused.
    await until(async () => deepEqual(await temperature(), { targetTemperature: 375, unit: 'F' }), 'the second report');
    expect(await rejected()).toBe(1);
  });

  it('says offline when stopped', async () => {
    const { deviceId } = await fleetOf('DEVICE_WASHER');
    await fleet!.stop();
    fleet = undefined;
    await until(async () => !(await cloud!.ctx.devices.state(deviceId)).online, 'the washer offline');
  });
});

describe('parseDeviceList', () => {
  it('takes what sim devices prints, filling the default model, and names what is wrong', () => {
    expect(parseDeviceList([{ deviceId: 'a', secret: 's', deviceType: 'DEVICE_WASHER' }])).toEqual([
      { deviceId: 'a', secret: 's', deviceType: 'DEVICE_WASHER', modelName: expect.any(String) },
    ]);
    expect(() => parseDeviceList({})).toThrow(/JSON array/);
    expect(() => parseDeviceList([{ deviceId: 'a', deviceType: 'DEVICE_WASHER' }])).toThrow(/devices\[0\]\.secret/);
    expect(() => parseDeviceList([{ deviceId: 'a', secret: 's', deviceType: 'DEVICE_TOASTER' }])).toThrow(/devices\[0\]\.deviceType/);
  });
});
