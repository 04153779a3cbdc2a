import { describe, expect, it } from 'vitest';
import { getModel } from '../../src/catalog/index.js';
import { decodeCommand } from '../../src/device-protocol/codec.js';
import { MqttCommandChannel } from '../../src/gateway/channel.js';
import type { Device } from '../../src/core/model.js';

const model = getModel('DEVICE_DEHUMIDIFIER')!;
const device: Device = {
  deviceId: 'dehum-1',
  deviceType: model.deviceType,
  modelName: model.modelName,
  alias: 'Basement',
  groupId: null,
  secretHash: '',
  virtual: false,
  online: true,
  userNumbers: ['u1'],
  createdAt: 0,
};
const command = { airFlow: { windStrengthLevel: 'LOW' } };

/** A channel whose published commands are kept, with their ids, for the test to answer. */
function channel() {
  const sent: { topic: string; commandId: string }[] = [];
  const mqtt = new MqttCommandChannel(async (topic, payload) => {
    const decoded = decodeCommand(Buffer.from(payload));
    if (!decoded.ok) throw new Error(decoded.problem);
    sent.push({ topic, commandId: decoded.value.commandId });
  });
  const send = () => mqtt.sendCommand(device, model.defaultStatus, command, 1000);
  const lastId = () => sent.at(-1)!.commandId;
  return { mqtt, sent, send, lastId };
}

describe('MqttCommandChannel (DESIGN A.7.3)', () => {
  it('publishes to the device topic and merges the status it answers into the current one', async () => {
    const c = channel();
    const outcome = c.send();
    await Promise.resolve();
    expect(c.sent[0]?.topic).toBe('appliance/dehum-1/command');
    expect(c.mqtt.settle('dehum-1', { commandId: c.lastId(), ok: true, status: command })).toBe(true);
    expect(await outcome).toEqual({ ok: true, status: { ...model.defaultStatus, airFlow: { windStrengthLevel: 'LOW' } }, answered: command });
  });

  it('ignores results for unknown commands and from another device', async () => {
    const c = channel();
    const outcome = c.send();
    await Promise.resolve();
    expect(c.mqtt.settle('dehum-1', { commandId: 'unknown', ok: false, code: null, message: null })).toBe(false);
    expect(c.mqtt.settle('dehum-2', { commandId: c.lastId(), ok: false, code: null, message: null })).toBe(false);
    expect(c.mqtt.settle('dehum-1', { commandId: c.lastId(), ok: false, code: '2303', message: 'The tank is full.' })).toBe(true);
    expect(await outcome).toEqual({ ok: false, code: '2303', message: 'The tank is full.' });
  });

  it('turns a code that is no device refusal, or a status that does not fit the profile, into 2208', async () => {
    const c = channel();
    const foreign = c.send();
    await Promise.resolve();
    c.mqtt.settle('dehum-1', { commandId: c.lastId(), ok: false, code: '1205', message: 'nope' });
    expect(await foreign).toEqual({ ok: false, code: '2208', message: 'Device dehum-1 refused the command with code 1205: nope.' });

    const misfit = c.send();
    await Promise.resolve();
    c.mqtt.settle('dehum-1', { commandId: c.lastId(), ok: true, status: { humidity: { targetHumidity: 56 } } });
    expect(await misfit).toMatchObject({
      ok: false,
      code: '2208',
      message: expect.stringMatching(/^Device dehum-1 answered with a status that does not fit its profile: /),
    });
  });

  it('fails the command with 2208 at once when its answer does not fit the contract, from its own device only', async () => {
    const c = channel();
    const outcome = c.send();
    await Promise.resolve();
    expect(c.mqtt.unfit('dehum-2', c.lastId(), 'ok must be true or false; got 42')).toBe(false);
    expect(c.mqtt.unfit('dehum-1', c.lastId(), 'ok must be true or false; got 42')).toBe(true);
    expect(await outcome).toEqual({
      ok: false,
      code: '2208',
      message: 'Device dehum-1 answered the command with a result that does not fit the device contract: ok must be true or false; got 42.',
    });
    expect(c.mqtt.unfit('dehum-1', c.lastId(), 'again')).toBe(false);
  });

  it("fails a device's waiting commands with 1222 when it goes offline, and no other device's", async () => {
    const c = channel();
    const [first, second] = [c.send(), c.send()];
    const other = c.mqtt.sendCommand({ ...device, deviceId: 'dehum-2' }, model.defaultStatus, command, 1000);
    await Promise.resolve();
    c.mqtt.offline('dehum-1');
    const gone = { ok: false, code: '1222', message: 'Device dehum-1 went offline before it answered the command.' };
    expect([await first, await second]).toEqual([gone, gone]);
    expect(c.mqtt.settle('dehum-2', { commandId: c.lastId(), ok: false, code: '2303', message: 'The tank is full.' })).toBe(true);
    expect(await other).toEqual({ ok: false, code: '2303', message: 'The tank is full.' });
  });

  it('answers 2209 when the broker does not take the command, and on close', async () => {
    const refusing = new MqttCommandChannel(async () => {
      throw new Error('client disconnecting');
    });
    expect(await refusing.sendCommand(device, model.defaultStatus, command, 1000)).toEqual({
      ok: false,
      code: '2209',
      message: 'Device dehum-1 did not answer the command: the broker did not take the command (client disconnecting).',
    });
    const c = channel();
    const waiting = c.send();
    c.mqtt.close();
    expect(await waiting).toMatchObject({ ok: false, code: '2209', message: 'Device dehum-1 did not answer the command: the device gateway shut down.' });
    expect(await c.send()).toMatchObject({ ok: false, code: '2209' });
  });
});
