/** The command channel of virtual appliances: the device answers in process, as a real one would over MQTT. */
import type { DeviceChannel } from '../core/channel.js';
import { getModel } from '../catalog/index.js';
import { applyCommand } from './virtual.js';

export const virtualChannel: DeviceChannel = {
  async sendCommand(device, status, command) {
    const model = getModel(device.deviceType, device.modelName);
    if (!model) return { ok: false, code: '2208', message: `Device ${device.deviceId} has no model ${device.modelName}.` };
    const outcome = applyCommand(model, status, command);
    return outcome.ok ? { ok: true, status: outcome.status } : { ok: false, code: outcome.refusal.code, message: outcome.refusal.message };
  },
};
