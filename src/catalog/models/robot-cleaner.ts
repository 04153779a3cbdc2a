import type { TypeModels } from './model.js';

export const robotCleaner: TypeModels = {
  deviceType: 'DEVICE_ROBOT_CLEANER',
  models: [
    {
      modelName: 'RBC_910604_WW',
      origin: "LG's documented robot-cleaner profile (no real capture exists); model name invented in LG's style",
      profile: 'robot_cleaner/lgdoc_profile.json',
      status: 'robot_cleaner/lgdoc_status.json',
    },
  ],
};
