import type { TypeModels } from './model.js';

export const refrigerator: TypeModels = {
  deviceType: 'DEVICE_REFRIGERATOR',
  models: [
    {
      modelName: 'REF_910604_WW',
      origin: "LG's documented refrigerator profile (no real capture exists); model name invented in LG's style",
      profile: 'refrigerator/lgdoc_profile.json',
      status: 'refrigerator/lgdoc_status.json',
    },
  ],
};
