/** The catalog's models by type, in sandbox order: the twelve types of DESIGN A.6, then the washtower halves. */
import { airConditioner } from './air-conditioner.js';
import { airPurifier } from './air-purifier.js';
import { ceilingFan } from './ceiling-fan.js';
import { dehumidifier } from './dehumidifier.js';
import { dishWasher } from './dish-washer.js';
import { dryer } from './dryer.js';
import type { TypeModels } from './model.js';
import { oven } from './oven.js';
import { refrigerator } from './refrigerator.js';
import { robotCleaner } from './robot-cleaner.js';
import { styler } from './styler.js';
import { washer } from './washer.js';
import { washtowerDryer } from './washtower-dryer.js';
import { washtowerWasher } from './washtower-washer.js';
import { waterPurifier } from './water-purifier.js';

export type { ModelSource, TypeModels } from './model.js';

export const TYPE_MODELS: readonly TypeModels[] = [
  refrigerator,
  washer,
  dryer,
  airConditioner,
  airPurifier,
  robotCleaner,
  oven,
  dishWasher,
  styler,
  waterPurifier,
  dehumidifier,
  ceilingFan,
  washtowerWasher,
  washtowerDryer,
];
