import type { TypeModels } from './model.js';

export const styler: TypeModels = {
  deviceType: 'DEVICE_STYLER',
  models: [
    {
      modelName: 'STY_910604_WW',
      origin: "LG's documented styler profile (no real capture exists); model name invented in LG's style",
      profile: 'styler/lgdoc_profile.json',
      status: 'styler/lgdoc_status.json',
      sandbox: { 'runState.currentState': 'INITIAL' },
    },
  ],
};
