/**
 * Settings that every node of a deployment shares and that change while it runs (the virtual
 * appliances' time scale): a node that takes a change writes it here, the others read it back.
 */
export interface SharedSettingsArea {
  /** The value last written under `name`, or null when none was. */
  readSharedSetting(name: string): Promise<string | null>;
  writeSharedSetting(name: string, value: string): Promise<void>;
}
