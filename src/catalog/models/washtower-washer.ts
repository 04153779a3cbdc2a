import type { TypeModels } from './model.js';

export const washtowerWasher: TypeModels = {
  deviceType: 'DEVICE_WASHTOWER_WASHER',
  models: [
    {
      modelName: 'FAKPK21021',
      origin: "LG's documented washtower-washer profile; model name from LG's device-list example",
      profile: 'washtower_washer/lgdoc_profile.json',
      status: 'washtower_washer/lgdoc_status.json',
      sandbox: { 'runState.currentState': 'INITIAL' },
    },
  ],
};
