/**
 * The checks of DESIGN A.2 and A.5 that every partner request passes, in the order DESIGN fixes:
 * headers → service → token → user-service connection → device. (Body and device state follow in
 * the routes.) Each throws the ApiError of the first thing wrong.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Config } from '../config.js';
import { fail } from '../errors.js';
import { hashSecret, isDeviceId, isMessageId } from '../ids.js';
import { isCountryCode, regionOf } from '../regions.js';
import type { Connection, Device, Service } from '../core/model.js';
import type { Lookups } from '../core/cache.js';
import { andThen, type Eventually } from '../eventually.js';
import { issuedAccessToken } from '../oauth/adapter.js';
import type { Store } from '../store/store.js';
import { FULL_ACCESS, mayAccess, type Access } from './access.js';

export interface PartnerHeaders {
  token: string;
  countryCode: string;
  messageId: string;
  serviceId: string;
  serviceKey: string;
  /** x-conditional-control, only meaningful on control. */
  conditional: boolean;
}

/**
 * The names, in lower case, of the headers the request sent more than once, read from its raw
 * headers (name, value, name, value, …): Node joins most repeats with ", " and keeps only the first
 * Authorization, so the parsed headers cannot tell a repeat from one value.
 */
export function repeatedHeaders(rawHeaders: readonly string[]): Set<string> {
  const seen = new Set<string>();
  const repeated = new Set<string>();
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!.toLowerCase();
    if (seen.has(name)) repeated.add(name);
    seen.add(name);
  }
  return repeated;
}

/** A header's single value; a repeated header counts as malformed. */
function single(headers: IncomingHttpHeaders, repeated: ReadonlySet<string>, name: string): string | undefined {
  const value = headers[name];
  if (Array.isArray(value) || repeated.has(name)) throw fail('1216', `Header ${name} must be given once.`);
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

/** Quotes an offending value for a message without echoing a whole oversized header. */
export function quote(value: string): string {
  return JSON.stringify(value.length > 64 ? `${value.slice(0, 64)}…` : value);
}

export function hasBody(headers: IncomingHttpHeaders): boolean {
  const length = headers['content-length'];
  return (length !== undefined && length !== '0') || headers['transfer-encoding'] !== undefined;
}

/** `content-type: application/json` on a request with a body, else 1000. */
export function checkContentType(headers: IncomingHttpHeaders): void {
  if (!hasBody(headers)) return;
  const type = headers['content-type'];
  const mediaType = typeof type === 'string' ? type.split(';')[0]!.trim().toLowerCase() : '';
  if (mediaType !== 'application/json') {
    throw fail('1000', `A request with a body must have content-type application/json; got ${type === undefined ? 'none' : quote(String(type))}.`);
  }
}

/** The mandatory headers of DESIGN A.2, in the table's order; `rawHeaders` tells which were sent more than once. */
export function checkHeaders(headers: IncomingHttpHeaders, config: Pick<Config, 'region'>, isControl: boolean, rawHeaders: readonly string[] = []): PartnerHeaders {
  const repeated = repeatedHeaders(rawHeaders);
  const authorization = single(headers, repeated, 'authorization');
  if (authorization === undefined) throw fail('1101', 'Header Authorization is missing.');
  const token = authorization.replace(/^Bearer\s+/i, '').trim();
  if (token === '' || /^Bearer$/i.test(token)) throw fail('1101', 'Header Authorization holds no access token.');

  const countryCode = single(headers, repeated, 'x-country-code');
  if (countryCode === undefined) throw fail('1101', 'Header x-country-code is missing.');
  if (!isCountryCode(countryCode)) {
    throw fail('1216', `Header x-country-code must be an ISO 3166-1 alpha-2 country code in upper case; got ${quote(countryCode)}.`);
  }
  if (regionOf(countryCode) !== config.region) {
    throw fail('1307', `Country ${countryCode} is not served by this deployment (region ${config.region}).`);
  }

  const messageId = single(headers, repeated, 'x-message-id');
  if (messageId === undefined) throw fail('1101', 'Header x-message-id is missing.');
  if (!isMessageId(messageId)) {
    throw fail('1104', `Header x-message-id must be 22 URL-safe base64 characters (a UUID's 16 bytes, unpadded); got ${quote(messageId)}.`);
  }

  const serviceId = single(headers, repeated, 'x-service-id');
  if (serviceId === undefined) throw fail('1101', 'Header x-service-id is missing.');
  const serviceKey = single(headers, repeated, 'x-service-key');
  if (serviceKey === undefined) throw fail('1101', 'Header x-service-key is missing.');

  checkContentType(headers);

  // Read only on control: elsewhere the header means nothing, repeated or not.
  const conditional = isControl && conditionalControl(headers, repeated);
  return { token, countryCode, messageId, serviceId, serviceKey, conditional };
}

/** x-conditional-control: absent is false; an empty value is one of the "other values" (1216), not an absent header. */
function conditionalControl(headers: IncomingHttpHeaders, repeated: ReadonlySet<string>): boolean {
  if (headers['x-conditional-control'] === undefined) return false;
  const value = single(headers, repeated, 'x-conditional-control') ?? '';
  if (value !== 'true' && value !== 'false') throw fail('1216', `Header x-conditional-control must be true or false; got ${quote(value)}.`);
  return value === 'true';
}

const SERVICE_REFUSED = 'The service id is unknown or the service key is wrong.';

/** Beyond this many remembered credentials the oldest go: a bound on memory, far above the callers of one node. */
const CREDENTIAL_CAPACITY = 10_000;
/**
 * Longer credentials are hashed each time, never remembered: ours are at most 43 characters, and
 * remembering headers of up to 64 KiB that anyone may send held 10,000 of them (~600 MB).
 */
const REMEMBERED_LENGTH = 256;

/**
 * The SHA-256 of presented credentials, remembered: a partner sends the same service key and token
 * with every request, and hashing both each time was ~5 % of a status read's CPU.
 */
export class CredentialHashes {
  readonly #hashes = new Map<string, string>();

  constructor(private readonly capacity = CREDENTIAL_CAPACITY) {}

  of(secret: string): string {
    if (secret.length > REMEMBERED_LENGTH) return hashSecret(secret);
    let hash = this.#hashes.get(secret);
    if (hash === undefined) {
      hash = hashSecret(secret);
      if (this.#hashes.size >= this.capacity) this.#hashes.delete(this.#hashes.keys().next().value as string);
      this.#hashes.set(secret, hash);
    }
    return hash;
  }

  /** How many credentials are remembered. */
  get size(): number {
    return this.#hashes.size;
  }
}

/**
 * Compares two hex hashes in constant time: every character is looked at, whichever differ. Over the
 * strings, as standard-webhooks' timingSafeEqual does over bytes: copying both into Buffers for
 * crypto's was ~1.5 % of a status read's CPU.
 */
function sameHash(presented: string, stored: string): boolean {
  if (presented.length !== stored.length) return false;
  let difference = 0;
  for (let i = 0; i < presented.length; i += 1) difference |= presented.charCodeAt(i) ^ stored.charCodeAt(i);
  return difference === 0;
}

/**
 * The calling service; the same answer for an unknown id and a wrong key. `store` may be a cache in
 * front of it. This and the checks below answer at once what their lookups answer at once, and
 * throw what is wrong then; otherwise they reject.
 */
export function checkService(store: Pick<Lookups, 'getService'>, serviceId: string, serviceKeyHash: string): Eventually<Service> {
  return andThen(store.getService(serviceId), (service) => {
    if (!service || !sameHash(serviceKeyHash, service.keyHash)) throw fail('1301', SERVICE_REFUSED);
    if (!service.enabled) throw fail('1301', `Service ${serviceId} is disabled.`);
    return service;
  });
}

/** What the token check found: the token's user connected to the calling service, and what the token may do there. */
export interface Authorized {
  connection: Connection;
  access: Access;
}

/** Where tokens are found: admin tokens (maybe through a cache) and those the authorization server issued. */
export type TokenSource = Pick<Lookups, 'getToken' | 'getConnection'> & Pick<Store, 'findOAuthRecord' | 'getDeviceShare'>;

/** The token's user, connected to the calling service, and what the token may do. `store` may be a cache in front of it. */
export function checkTokenAndConnection(store: TokenSource, service: Service, tokenHash: string, now: number): Eventually<Authorized> {
  return andThen(store.getToken(tokenHash), (stored) => {
    if (!stored) return checkIssuedToken(store, service, tokenHash, now);
    if (stored.serviceId !== service.serviceId) throw fail('1103', 'The access token is unknown.');
    if (stored.revokedReason === 'disconnected') {
      throw fail('1202', 'The user is no longer connected to this service.');
    }
    if (stored.revokedAt !== null) throw fail('1103', 'The access token was revoked.');
    if (stored.expiresAt <= now) throw fail('1103', 'The access token has expired.');
    return andThen(connectionOf(store, service, stored.userNumber), (connection) => ({ connection, access: FULL_ACCESS }));
  });
}

function connectionOf(store: Pick<Lookups, 'getConnection'>, service: Service, userNumber: string): Eventually<Connection> {
  return andThen(store.getConnection(service.serviceId, userNumber), (connection) => {
    if (!connection) throw fail('1202', 'The user is not connected to this service.');
    return connection;
  });
}

/**
 * A token of the authorization server (DESIGN G): it acts for the pair only while its grant is the
 * pair's consent; one the owner took back (or gave again since) answers 1202, as after DELETE /user/service.
 */
async function checkIssuedToken(store: TokenSource, service: Service, tokenHash: string, now: number): Promise<Authorized> {
  const record = await store.findOAuthRecord('AccessToken', tokenHash, now);
  const token = record && issuedAccessToken(record);
  if (!token || token.serviceId !== service.serviceId) throw fail('1103', 'The access token is unknown, expired or revoked.');
  const share = await store.getDeviceShare(service.serviceId, token.userNumber);
  if (!share || share.grantId !== token.grantId) throw fail('1202', 'The user is no longer connected to this service: the consent was taken back.');
  const connection = await connectionOf(store, service, token.userNumber);
  return { connection, access: { scopes: new Set(token.scopes), deviceIds: share.deviceIds && new Set(share.deviceIds) } };
}

/** A device the connected user may operate on through this service. */
export function checkDevice(store: Pick<Lookups, 'getDevice'>, service: Service, { connection, access }: Authorized, deviceId: string): Eventually<Device> {
  if (!isDeviceId(deviceId)) {
    throw fail('1224', `Device id ${quote(deviceId)} is malformed: it must be 1 to 128 of A-Z, a-z, 0-9, _ and -.`);
  }
  if (connection.deviceListLoadedAt === null) {
    throw fail('1210', 'Call GET /devices for this user before operating on a device.');
  }
  return andThen(store.getDevice(deviceId), (device) => {
    // A device the owner did not share does not exist for the service (DESIGN G).
    if (!device || !device.userNumbers.includes(connection.userNumber) || !mayAccess(access, device)) {
      throw fail('1205', `Device ${deviceId} is not registered to this user.`);
    }
    if (!service.allowedDevices.includes(device.deviceType)) {
      throw fail('1221', `Device type ${device.deviceType} is not allowed for this service.`);
    }
    return device;
  });
}
