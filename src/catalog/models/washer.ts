import type { TypeModels } from './model.js';

export const washer: TypeModels = {
  deviceType: 'DEVICE_WASHER',
  models: [
    {
      modelName: 'FAFXU22027',
      origin: 'real capture (Home Assistant fixture), model name from its device.json',
      profile: 'washer/profile.json',
      status: 'washer/status.json',
      sandbox: { 'runState.currentState': 'INITIAL' },
    },
    {
      modelName: 'FH0D7DDNK0_WIFI',
      origin: "LG's documented washer profile; model name from LG's DEVICE_REGISTERED example for a washer",
      profile: 'washer/lgdoc_profile.json',
      status: 'washer/lgdoc_status.json',
      sandbox: { 'runState.currentState': 'INITIAL' },
    },
  ],
};
