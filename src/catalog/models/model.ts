/** How a catalog model is described: where its profile and starting status come from. */
import type { JsonObject } from '../types.js';

export interface ModelSource {
  modelName: string;
  /** Where the model comes from, in a line. */
  origin: string;
  /** A file under reference/thinq/, a profile of our own, or a reference profile with additions deep-merged in. */
  profile: string | { own: JsonObject } | { base: string; add: JsonObject };
  /** A status under reference/thinq/ to start the default status from; its invalid values are replaced. */
  status?: string;
  /**
   * Values the sandbox starts with, keyed `resource.property` (every entry that has it) or
   * `resource[entryName].property` (one entry of a multi-location resource).
   */
  sandbox?: Readonly<Record<string, unknown>>;
}

/** The models of one device type; the first is the default, used when no modelName is given. */
export interface TypeModels {
  deviceType: string;
  models: readonly [ModelSource, ...ModelSource[]];
}
