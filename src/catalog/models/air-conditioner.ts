import type { TypeModels } from './model.js';

/**
 * Realistic readings for the per-unit temperatures the captures leave out, and the same in every
 * place that shows them: the captures' own (19 and 10.5 °C) would disagree with them until the
 * first command or simulated minute.
 */
const TEMPERATURES = {
  'temperature.currentTemperature': 25,
  'temperature.targetTemperature': 24,
  'twoSetTemperature.currentTemperature': 25,
  'temperatureInUnits[C].currentTemperature': 25,
  'temperatureInUnits[C].targetTemperature': 24,
  'temperatureInUnits[F].currentTemperature': 77,
  'temperatureInUnits[F].targetTemperature': 75,
};

/** LG's schema: an absolute time to start and to stop, each with its SET/UNSET flag (written only to UNSET). */
const ABSOLUTE_TIMERS = {
  absoluteHourToStart: { mode: ['r', 'w'], type: 'number' },
  absoluteMinuteToStart: { mode: ['r', 'w'], type: 'number' },
  absoluteHourToStop: { mode: ['r', 'w'], type: 'number' },
  absoluteMinuteToStop: { mode: ['r', 'w'], type: 'number' },
  absoluteStartTimer: { mode: ['r', 'w'], type: 'enum', value: { r: ['SET', 'UNSET'], w: ['UNSET'] } },
  absoluteStopTimer: { mode: ['r', 'w'], type: 'enum', value: { r: ['SET', 'UNSET'], w: ['UNSET'] } },
};

export const airConditioner: TypeModels = {
  deviceType: 'DEVICE_AIR_CONDITIONER',
  models: [
    {
      modelName: 'PAC_910604_WW',
      origin: 'real capture (Home Assistant fixture), model name from its device.json',
      profile: 'air_conditioner/profile.json',
      status: 'air_conditioner/status.json',
      sandbox: { 'operation.airConOperationMode': 'POWER_ON', 'airConJobMode.currentJobMode': 'COOL', ...TEMPERATURES },
    },
    {
      // LG's example profile has only relative timers, though LG's documented command sets an
      // absolute one and its example status carries their flags: the additions are the schema's.
      modelName: 'RAC_910604_WW',
      origin: "LG's documented air-conditioner profile (two-set temperatures, display, sleep timer) plus the absolute timers of LG's schema; model name invented in LG's style",
      profile: { base: 'air_conditioner/lgdoc_profile.json', add: { property: { timer: ABSOLUTE_TIMERS } } },
      status: 'air_conditioner/lgdoc_status.json',
      sandbox: { 'operation.airConOperationMode': 'POWER_ON', 'airConJobMode.currentJobMode': 'COOL', ...TEMPERATURES },
    },
  ],
};
