import type { TypeModels } from './model.js';

export const washtowerDryer: TypeModels = {
  deviceType: 'DEVICE_WASHTOWER_DRYER',
  models: [
    {
      modelName: 'W3S1CVK2EVS',
      origin: 'real capture (Home Assistant fixture), model name from its device.json',
      profile: 'washtower_dryer/profile.json',
      status: 'washtower_dryer/status.json',
      sandbox: { 'runState.currentState': 'INITIAL' },
    },
    {
      modelName: 'SDH_WT4101_KR',
      origin: "LG's documented washtower-dryer profile; model name from LG's device-list example",
      profile: 'washtower_dryer/lgdoc_profile.json',
      status: 'washtower_dryer/lgdoc_status.json',
      sandbox: { 'runState.currentState': 'INITIAL' },
    },
  ],
};
