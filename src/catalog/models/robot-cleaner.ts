import type { TypeModels } from './model.js';

export const robotCleaner: TypeModels = {
  deviceType: 'DEVICE_ROBOT_CLEANER',
  models: [
    {
      // LG's example profile shows the start time read-only, though LG's schema allows writing it and
      // the SDK sets it (setAbsoluteTimeToStart).
      modelName: 'RBC_910604_WW',
      origin: "LG's documented robot-cleaner profile (no real capture exists), its start time writable as LG's schema allows; model name invented in LG's style",
      profile: {
        base: 'robot_cleaner/lgdoc_profile.json',
        add: { property: { timer: { absoluteHourToStart: { type: 'number', mode: ['r', 'w'] }, absoluteMinuteToStart: { type: 'number', mode: ['r', 'w'] } } } },
      },
      status: 'robot_cleaner/lgdoc_status.json',
    },
  ],
};
