/** Every catalog type's behaviour table, by device type. */
import { own } from '../../catalog/values.js';
import type { TypeBehaviour } from '../behaviour.js';
import { AIR_CONDITIONER, AIR_PURIFIER, CEILING_FAN, DEHUMIDIFIER } from './air.js';
import { OVEN, REFRIGERATOR, WATER_PURIFIER } from './kitchen.js';
import { DISH_WASHER, DRYER, STYLER, WASHER } from './laundry.js';
import { ROBOT_CLEANER } from './robot.js';

export { COMMON_ACTIONS } from './common.js';

const BEHAVIOURS: Readonly<Record<string, TypeBehaviour>> = {
  DEVICE_REFRIGERATOR: REFRIGERATOR,
  DEVICE_WASHER: WASHER,
  DEVICE_WASHTOWER_WASHER: WASHER,
  DEVICE_DRYER: DRYER,
  DEVICE_WASHTOWER_DRYER: DRYER,
  DEVICE_AIR_CONDITIONER: AIR_CONDITIONER,
  DEVICE_AIR_PURIFIER: AIR_PURIFIER,
  DEVICE_ROBOT_CLEANER: ROBOT_CLEANER,
  DEVICE_OVEN: OVEN,
  DEVICE_DISH_WASHER: DISH_WASHER,
  DEVICE_STYLER: STYLER,
  DEVICE_WATER_PURIFIER: WATER_PURIFIER,
  DEVICE_DEHUMIDIFIER: DEHUMIDIFIER,
  DEVICE_CEILING_FAN: CEILING_FAN,
};

/** A type's behaviour; a type the simulator does not know still answers commands, it just does nothing over time. */
export function behaviourOf(deviceType: string): TypeBehaviour {
  return own(BEHAVIOURS, deviceType) ?? { recipes: {} };
}
