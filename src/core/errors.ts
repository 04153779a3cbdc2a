/**
 * The domain's refusals that callers other than the interfaces act on (the MQTT bridge, the
 * simulator): they branch on the kind, never on a partner-API code. Each is an ApiError all the
 * same, so that the HTTP interfaces and the CLI answer it with its code and message.
 */
import { ApiError } from '../errors.js';

/** No device is registered under the id (or not to the user named): answered 1205. */
export class DeviceNotRegistered extends ApiError {
  constructor(message: string) {
    super('1205', message);
  }
}

/** What a device sent (a report or a notification) fits neither its profile nor its bound: answered 1102. */
export class DeviceInputRefused extends ApiError {
  constructor(message: string) {
    super('1102', message);
  }
}
