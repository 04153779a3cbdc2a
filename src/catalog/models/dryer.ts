import type { TypeModels } from './model.js';

export const dryer: TypeModels = {
  deviceType: 'DEVICE_DRYER',
  models: [
    {
      modelName: 'RH16KX',
      origin: "LG's documented dryer profile; model name from LG's DEVICE_REGISTERED example for a dryer",
      profile: 'dryer/lgdoc_profile.json',
      status: 'dryer/lgdoc_status.json',
      sandbox: { 'runState.currentState': 'INITIAL' },
    },
  ],
};
