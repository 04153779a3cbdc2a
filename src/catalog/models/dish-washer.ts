import type { TypeModels } from './model.js';

export const dishWasher: TypeModels = {
  deviceType: 'DEVICE_DISH_WASHER',
  models: [
    {
      // LG's example profile is read-only, though LG's schema and both SDKs control the dish washer:
      // the additions are the schema's operation, remote-control flag and writable delayed start.
      modelName: 'DW_910604_WW',
      origin: "LG's documented dish-washer profile plus the controls of LG's dish-washer schema; model name invented in LG's style",
      profile: {
        base: 'dish_washer/lgdoc_profile.json',
        add: {
          property: {
            operation: { dishWasherOperationMode: { mode: ['w'], type: 'enum', value: { w: ['START', 'STOP', 'POWER_OFF', 'CANCEL'] } } },
            remoteControlEnable: { remoteControlEnabled: { mode: ['r'], type: 'boolean', value: { r: [true, false] } } },
            timer: { relativeHourToStart: { mode: ['r', 'w'], type: 'number' } },
          },
        },
      },
      status: 'dish_washer/lgdoc_status.json',
      sandbox: { 'runState.currentState': 'INITIAL' },
    },
  ],
};
