/**
 * The MQTT payloads of DESIGN B, pure: untrusted bytes from a device are parsed here, once, into
 * typed values (or a sentence saying what is wrong), and what the cloud and a device send is encoded here.
 */
import { isUtf8 } from 'node:buffer';
import type { DeviceStatus, JsonObject } from '../catalog/types.js';
import { isObject, show } from '../catalog/values.js';
import { JsonTextError, parseJsonText } from '../json.js';

export type Decoded<T> = { ok: true; value: T } | { ok: false; problem: string };

/** The same bound as an HTTP body (DESIGN A.3): no appliance has a status anywhere near it. */
export const MAX_PAYLOAD_BYTES = 64 * 1024;

const COMMAND_ID = /^[A-Za-z0-9_-]{1,128}$/;
const CODE = /^\d{4}$/;

export interface PushMessage {
  pushCode: string;
}

export interface ConnectionMessage {
  online: boolean;
}

export interface CommandMessage {
  commandId: string;
  command: JsonObject;
}

/** A device's answer to a command; a refusal without code or message gets the defaults of DESIGN A.7. */
export type CommandResult =
  | { commandId: string; ok: true; status: DeviceStatus }
  | { commandId: string; ok: false; code: string | null; message: string | null };

const refuse = (problem: string): { ok: false; problem: string } => ({ ok: false, problem });

/**
 * JSON text to a value; too deep nesting and U+0000 are refused (json.ts), and so are bytes that are not UTF-8
 * (RFC 8259), which decoding would silently turn into U+FFFD.
 */
function parseJson(payload: Uint8Array): Decoded<unknown> {
  if (payload.byteLength > MAX_PAYLOAD_BYTES) return refuse(`payload is ${payload.byteLength} bytes; at most ${MAX_PAYLOAD_BYTES} are accepted`);
  if (!isUtf8(payload)) return refuse('payload is not valid UTF-8');
  try {
    const text = Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength).toString('utf8');
    return { ok: true, value: parseJsonText(text) };
  } catch (error) {
    return refuse(error instanceof JsonTextError && error.byRule ? `payload ${error.message}` : 'payload is not valid JSON');
  }
}

function parseObject(payload: Uint8Array): Decoded<JsonObject> {
  const parsed = parseJson(payload);
  if (!parsed.ok) return parsed;
  return isObject(parsed.value) ? { ok: true, value: parsed.value } : refuse(`payload must be a JSON object; got ${show(parsed.value)}`);
}

/** A status (full or partial): an object, or for whole-profile location arrays an array of entries. */
function isStatus(value: unknown): value is DeviceStatus {
  return isObject(value) || (Array.isArray(value) && value.every(isObject));
}

/** `appliance/{id}/state`: a partial status; whether it fits the profile is the catalog's to say. */
export function decodeReport(payload: Uint8Array): Decoded<DeviceStatus> {
  const parsed = parseJson(payload);
  if (!parsed.ok) return parsed;
  return isStatus(parsed.value) ? { ok: true, value: parsed.value } : refuse(`a report must be a JSON object or an array of objects; got ${show(parsed.value)}`);
}

/** `appliance/{id}/push`: `{"pushCode": "..."}`. */
export function decodePush(payload: Uint8Array): Decoded<PushMessage> {
  const parsed = parseObject(payload);
  if (!parsed.ok) return parsed;
  const { pushCode } = parsed.value;
  return typeof pushCode === 'string' && pushCode !== '' ? { ok: true, value: { pushCode } } : refuse(`pushCode must be a non-empty string; got ${show(pushCode)}`);
}

/** `appliance/{id}/connection`: `{"online": true|false}` (retained, and the will). */
export function decodeConnection(payload: Uint8Array): Decoded<ConnectionMessage> {
  const parsed = parseObject(payload);
  if (!parsed.ok) return parsed;
  const { online } = parsed.value;
  return typeof online === 'boolean' ? { ok: true, value: { online } } : refuse(`online must be true or false; got ${show(online)}`);
}

/** `appliance/{id}/command`, as a device reads it. */
export function decodeCommand(payload: Uint8Array): Decoded<CommandMessage> {
  const parsed = parseObject(payload);
  if (!parsed.ok) return parsed;
  const { commandId, command } = parsed.value;
  if (typeof commandId !== 'string' || !COMMAND_ID.test(commandId)) return refuse(`commandId must be 1 to 128 of A-Z, a-z, 0-9, _ and -; got ${show(commandId)}`);
  if (!isObject(command)) return refuse(`command must be a JSON object; got ${show(command)}`);
  return { ok: true, value: { commandId, command } };
}

/**
 * A command result that does not fit the contract names its command when its commandId could be
 * read: the device did answer that command, and its caller need not wait out the timeout.
 */
export type DecodedResult = Decoded<CommandResult> | { ok: false; problem: string; commandId: string };

/** `appliance/{id}/command/result`: success with the status after the command, or a refusal. */
export function decodeCommandResult(payload: Uint8Array): DecodedResult {
  const parsed = parseObject(payload);
  if (!parsed.ok) return parsed;
  const { commandId, ok, status, code, message } = parsed.value;
  if (typeof commandId !== 'string' || !COMMAND_ID.test(commandId)) return refuse(`commandId must be 1 to 128 of A-Z, a-z, 0-9, _ and -; got ${show(commandId)}`);
  const unfit = (problem: string) => ({ ok: false as const, problem, commandId });
  if (ok === true) {
    return isStatus(status) ? { ok: true, value: { commandId, ok, status } } : unfit(`status must be a JSON object or an array of objects; got ${show(status)}`);
  }
  if (ok !== false) return unfit(`ok must be true or false; got ${show(ok)}`);
  if (code !== undefined && (typeof code !== 'string' || !CODE.test(code))) return unfit(`code must be a 4-digit string; got ${show(code)}`);
  if (message !== undefined && typeof message !== 'string') return unfit(`message must be a string; got ${show(message)}`);
  return { ok: true, value: { commandId, ok, code: code ?? null, message: message ?? null } };
}

export function encodeCommand(message: CommandMessage): string {
  return JSON.stringify({ commandId: message.commandId, command: message.command });
}

export function encodeReport(report: DeviceStatus): string {
  return JSON.stringify(report);
}

export function encodePush(message: PushMessage): string {
  return JSON.stringify({ pushCode: message.pushCode });
}

export function encodeConnection(message: ConnectionMessage): string {
  return JSON.stringify({ online: message.online });
}

export function encodeCommandResult(result: CommandResult): string {
  if (result.ok) return JSON.stringify({ commandId: result.commandId, ok: true, status: result.status });
  const refusal: JsonObject = { commandId: result.commandId, ok: false };
  if (result.code !== null) refusal.code = result.code;
  if (result.message !== null) refusal.message = result.message;
  return JSON.stringify(refusal);
}
