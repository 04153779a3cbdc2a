/** The ThinQ profile grammar (DESIGN A.6) as types, the shape of what GET /devices/profile/{id} answers. */

export interface RangeValue {
  min: number;
  max: number;
  /** 1 when left out, as LG's own dryer and styler profiles do. */
  step?: number;
  except?: number[];
}

/** One property of a profile: its type, whether it can be read and written, and the values it takes. */
export type PropertyDescriptor =
  | Descriptor<'enum' | 'list' | 'array', string[]>
  | Descriptor<'range', RangeValue>
  | Descriptor<'boolean' | 'bool', boolean[]>
  | Descriptor<'number' | 'string', never>;

/** The fields every descriptor has. */
export interface Descriptor<T extends string, V> {
  type: T;
  mode: Array<'r' | 'w'>;
  value?: { r?: V; w?: V };
  unit?: string;
}
