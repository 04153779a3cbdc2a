import type { TypeModels } from './model.js';

export const waterPurifier: TypeModels = {
  deviceType: 'DEVICE_WATER_PURIFIER',
  models: [
    {
      modelName: 'WPU_910604_WW',
      origin: "LG's documented water-purifier profile (read-only: every command is refused with 2207); model name invented in LG's style",
      profile: 'water_purifier/lgdoc_profile.json',
      status: 'water_purifier/lgdoc_status.json',
    },
  ],
};
