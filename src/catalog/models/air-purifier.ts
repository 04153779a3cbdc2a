import type { TypeModels } from './model.js';

export const airPurifier: TypeModels = {
  deviceType: 'DEVICE_AIR_PURIFIER',
  models: [
    {
      // The real capture only offers power and a sleep timer; LG's documented profile adds modes, wind and timers.
      modelName: 'AS_910604_WW',
      origin: "LG's documented air-purifier profile; model name invented in LG's style",
      profile: 'air_purifier/lgdoc_profile.json',
      status: 'air_purifier/lgdoc_status.json',
      sandbox: { 'operation.airPurifierOperationMode': 'POWER_ON' },
    },
    {
      modelName: 'AIR_910604_WW',
      origin: 'real capture (Home Assistant fixture), model name from its device.json',
      profile: 'air_purifier/profile.json',
      status: 'air_purifier/status.json',
    },
  ],
};
