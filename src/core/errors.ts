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

/**
 * The device's status was written by someone else (another node) since the version a change was
 * worked out from: nothing was stored, and the change is to be worked out again from the status as
 * it is now. Never reaches a caller outside the domain (Devices retries), so its code is a 500's.
 */
export class StatusMoved extends ApiError {
  constructor(deviceId: string) {
    super('2000', `The status of device ${deviceId} changed while a change was being stored.`);
  }
}

/**
 * The node stopped consuming the device stream a message came on (its lease ran out, or another node
 * took the stream over) before the message was stored: nothing was stored, and the message is left
 * unacknowledged for the node that consumes the stream now, which gets it again from the broker.
 * Stored here, an old report could be merged over the newer ones that node stored meanwhile.
 */
export class StreamLost extends ApiError {
  constructor(deviceId: string) {
    super('2000', `This node no longer consumes the device stream; the message of device ${deviceId} is left to the node that does.`);
  }
}
