/** The channel router: one channel for Devices, each command going to the channel of its device's kind. */
import { describe, expect, it } from 'vitest';
import { ChannelRouter, unreachable, type DeviceChannel } from '../../src/core/channel.js';
import type { Device } from '../../src/core/model.js';

const virtualDevice = { deviceId: 'dev-v', virtual: true } as Device;
const realDevice = { deviceId: 'dev-r', virtual: false } as Device;

/** A channel that answers with a status naming it. */
const answered = (name: string) => ({ ok: true, status: { channel: { name } }, answered: { channel: { name } } }) as const;
const answering = (name: string): DeviceChannel => ({ sendCommand: async () => answered(name) });

describe('ChannelRouter', () => {
  it('sends a virtual device to the virtual channel and a real one to the real channel', async () => {
    const router = new ChannelRouter();
    router.attach('virtual', answering('simulator'));
    router.attach('real', answering('gateway'));
    expect(await router.sendCommand(virtualDevice, {}, {}, 100)).toEqual(answered('simulator'));
    expect(await router.sendCommand(realDevice, {}, {}, 100)).toEqual(answered('gateway'));
  });

  it('answers 2209 for a kind with no channel yet, and forwards once one is attached', async () => {
    const router = new ChannelRouter();
    expect(await router.sendCommand(realDevice, {}, {}, 100)).toEqual({
      ok: false,
      code: '2209',
      message: 'The device gateway has not started, so device dev-r cannot be reached.',
    });
    expect(await router.sendCommand(virtualDevice, {}, {}, 100)).toEqual({
      ok: false,
      code: '2209',
      message: 'No simulator runs in this process, so device dev-v cannot be reached.',
    });
    router.attach('real', answering('gateway'));
    expect(await router.sendCommand(realDevice, {}, {}, 100)).toEqual(answered('gateway'));
  });
});

describe('unreachable', () => {
  it('answers every command 2209, saying why', async () => {
    expect(await unreachable('No MQTT broker is configured').sendCommand(realDevice, {}, {}, 100)).toEqual({
      ok: false,
      code: '2209',
      message: 'No MQTT broker is configured, so device dev-r cannot be reached.',
    });
  });
});
