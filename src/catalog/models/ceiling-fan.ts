import type { TypeModels } from './model.js';

export const ceilingFan: TypeModels = {
  deviceType: 'DEVICE_CEILING_FAN',
  models: [
    {
      modelName: 'CFAN_910604_WW',
      origin: "LG's documented ceiling-fan profile (no real capture exists); model name invented in LG's style",
      profile: 'ceiling_fan/lgdoc_profile.json',
      status: 'ceiling_fan/lgdoc_status.json',
    },
  ],
};
