import type { TypeModels } from './model.js';

export const dehumidifier: TypeModels = {
  deviceType: 'DEVICE_DEHUMIDIFIER',
  models: [
    {
      modelName: 'DHUM_056905_KR',
      origin: 'real capture (Home Assistant fixture), model name from its device.json',
      profile: 'dehumidifier/profile.json',
      status: 'dehumidifier/status.json',
    },
    {
      modelName: 'DHUM_910604_WW',
      origin: "LG's documented dehumidifier profile (adds timers); model name invented in LG's style",
      profile: 'dehumidifier/lgdoc_profile.json',
      status: 'dehumidifier/lgdoc_status.json',
    },
  ],
};
