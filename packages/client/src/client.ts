/** `ApplianceCloud`: a method for every operation of the partner interface (DESIGN A.5). */
import { ApplianceCloudError } from './errors.js';
import type { DeviceTypes } from './generated/devices.js';
import type { paths } from './generated/openapi.js';
import { baseUrlOf, type Phase, type Region } from './hosts.js';
import { call, type CallOptions, type Request, type TransportSettings } from './transport.js';

/** The `response` of an operation's 200, as the server's OpenAPI document declares it. */
export type Ok<P extends keyof paths, M extends 'get' | 'post' | 'delete'> = paths[P][M] extends {
  responses: { 200: { content: { 'application/json': { response: infer R } } } };
}
  ? R
  : never;

export type DeviceType = keyof DeviceTypes;
export type ProfileOf<T extends DeviceType> = DeviceTypes[T]['profile'];
export type StatusOf<T extends DeviceType> = DeviceTypes[T]['status'];
export type ControlOf<T extends DeviceType> = DeviceTypes[T]['control'];

/** One entry of `GET /devices`. */
export type DeviceListItem = Ok<'/devices', 'get'>[number];
export type User = Ok<'/users', 'get'>;
export type PushSubscription = NonNullable<Ok<'/push', 'get'>>[number];
export type EventSubscription = NonNullable<Ok<'/event', 'get'>>[number];
/** How long an event subscription lasts: `{unit: 'HOUR', timer: 1}` by default, at most 4464 hours. */
export type EventExpiry = NonNullable<NonNullable<paths['/event/{deviceId}']['post']['requestBody']>['content']['application/json']['expire']>;

/** Supplies the user's access token for each call, e.g. from a store that refreshes it (see `oauth`). */
export type TokenProvider = () => string | Promise<string>;

/** Where the deployment is: its base URL, or the region, phase and domain it is named by (DESIGN A.1). */
export type Endpoint = { baseUrl: string } | { region: Region; phase: Phase; domain: string };

export type ApplianceCloudOptions = Endpoint & {
  serviceId: string;
  serviceKey: string;
  /** ISO 3166-1 alpha-2 of the user, upper case (`x-country-code`). */
  countryCode: string;
  /** Milliseconds each attempt may take; default 30 000 (a control waits up to 10 s for the device). */
  timeoutMs?: number;
  /** Retries of a 429 (after its Retry-After) and of a read's network failure; default 2. */
  maxRetries?: number;
  /** The longest Retry-After the client waits for; a longer one is thrown to the caller. Default 60 000. */
  maxRetryDelayMs?: number;
  /** A fetch of your own (a proxy, instrumentation); the global one by default. */
  fetch?: typeof fetch;
} & ({ accessToken: string } | { tokenProvider: TokenProvider });

export interface ControlOptions extends CallOptions {
  /** Sends `x-conditional-control: true`: refused with 2301–2305 when the device cannot apply it now. */
  conditional?: boolean;
}

/** A status with its version (the `ETag`), which increments on every change of the device. */
export interface VersionedStatus<S> {
  status: S;
  version: number;
}

/** A device whose type is known, so that its status and commands are typed. */
export interface DeviceHandle<T extends DeviceType> {
  readonly deviceId: string;
  readonly deviceType: T;
  profile(options?: CallOptions): Promise<ProfileOf<T>>;
  status(options?: CallOptions): Promise<StatusOf<T>>;
  control(command: ControlOf<T>, options?: ControlOptions): Promise<StatusOf<T>>;
}

/**
 * Where the calling service stands in its rate limit (DESIGN J), as the latest answer said: the
 * bucket's size (`X-RateLimit-Limit`) and the requests it may still send at once
 * (`X-RateLimit-Remaining`). The limit is the service's, shared by all its clients and users.
 */
export interface RateLimitStatus {
  limit: number;
  remaining: number;
}

const DEFAULTS = { timeoutMs: 30_000, maxRetries: 2, maxRetryDelayMs: 60_000 };

/** The partner interface's client: one instance per calling service and user. */
export class ApplianceCloud {
  readonly baseUrl: string;
  readonly #settings: TransportSettings;
  #rateLimit: RateLimitStatus | undefined;

  constructor(options: ApplianceCloudOptions) {
    this.baseUrl = 'baseUrl' in options ? options.baseUrl : baseUrlOf(options.region, options.phase, options.domain);
    const token: TokenProvider = 'tokenProvider' in options ? options.tokenProvider : () => options.accessToken;
    this.#settings = {
      baseUrl: this.baseUrl,
      serviceId: options.serviceId,
      serviceKey: options.serviceKey,
      countryCode: options.countryCode,
      accessToken: async () => token(),
      timeoutMs: options.timeoutMs ?? DEFAULTS.timeoutMs,
      maxRetries: options.maxRetries ?? DEFAULTS.maxRetries,
      maxRetryDelayMs: options.maxRetryDelayMs ?? DEFAULTS.maxRetryDelayMs,
      fetch: options.fetch ?? globalThis.fetch,
      onAnswer: (headers) => {
        const limit = headers.get('x-ratelimit-limit');
        const remaining = headers.get('x-ratelimit-remaining');
        if (limit !== null && remaining !== null) this.#rateLimit = { limit: Number(limit), remaining: Number(remaining) };
      },
    };
  }

  /**
   * The service's rate limit as this client's latest answer that carried it said (a 429's too);
   * undefined before any, or when the server limits no rate.
   */
  get rateLimit(): RateLimitStatus | undefined {
    return this.#rateLimit;
  }

  async #call<T>(request: Request, options?: CallOptions): Promise<T> {
    return (await call<T>(this.#settings, request, options)).response;
  }

  /** `GET /devices`: the user's devices of the types this service may see. Call it once before any device operation. */
  listDevices(options?: CallOptions): Promise<DeviceListItem[]> {
    return this.#call({ method: 'GET', path: '/devices' }, options);
  }

  /** `GET /devices/profile/{id}`: what the device can report and be told. */
  getProfile<T extends DeviceType = DeviceType>(deviceId: string, options?: CallOptions): Promise<ProfileOf<T>> {
    return this.#call({ method: 'GET', path: `/devices/profile/${encodeURIComponent(deviceId)}` }, options);
  }

  /** `GET /devices/{id}`: the device's full current status. */
  getStatus<T extends DeviceType = DeviceType>(deviceId: string, options?: CallOptions): Promise<StatusOf<T>> {
    // Not through getStatusWithVersion: a proxy that drops the ETag does not make the status unreadable.
    return this.#call({ method: 'GET', path: `/devices/${encodeURIComponent(deviceId)}` }, options);
  }

  /** `GET /devices/{id}` with the status version of its `ETag`. */
  async getStatusWithVersion<T extends DeviceType = DeviceType>(deviceId: string, options?: CallOptions): Promise<VersionedStatus<StatusOf<T>>> {
    const answer = await call<StatusOf<T>>(this.#settings, { method: 'GET', path: `/devices/${encodeURIComponent(deviceId)}` }, options);
    // `"7"` as the server sends it; a compressing proxy weakens it to `W/"7"` (nginx) or suffixes it (`"7-gzip"`, Apache).
    const version = /^(?:W\/)?"(\d+)/.exec(answer.headers.get('etag') ?? '')?.[1];
    if (version === undefined) {
      const message = `GET /devices/${deviceId} answered without its ETag version: ${answer.headers.get('etag') ?? 'no ETag'}`;
      throw new ApplianceCloudError({ code: 'BAD_RESPONSE', message, httpStatus: 200, messageId: answer.messageId });
    }
    return { status: answer.response, version: Number(version) };
  }

  /**
   * `POST /devices/{id}`: applies a command and answers the device's full status after it. Name the
   * type, `control<'DEVICE_WASHER'>(id, …)`, or use {@link device}, for the command to be checked against it.
   */
  control<T extends DeviceType = DeviceType>(deviceId: string, command: ControlOf<T>, options: ControlOptions = {}): Promise<StatusOf<T>> {
    const { conditional, ...rest } = options;
    const headers = conditional === undefined ? undefined : { 'x-conditional-control': String(conditional) };
    return this.#call({ method: 'POST', path: `/devices/${encodeURIComponent(deviceId)}`, body: command, ...(headers ? { headers } : {}) }, rest);
  }

  /** A device of a known type: `client.device('DEVICE_WASHER', id).control({...})` is checked against the washer. */
  device<T extends DeviceType>(deviceType: T, deviceId: string): DeviceHandle<T> {
    return {
      deviceId,
      deviceType,
      profile: (options) => this.getProfile<T>(deviceId, options),
      status: (options) => this.getStatus<T>(deviceId, options),
      control: (command, options) => this.control<T>(deviceId, command, options),
    };
  }

  /** `GET /users`: the token's user. */
  getUser(options?: CallOptions): Promise<User> {
    return this.#call({ method: 'GET', path: '/users' }, options);
  }

  /** `DELETE /user/service`: disconnects the user from this service; the token stops working (1202). */
  async disconnectUser(options?: CallOptions): Promise<void> {
    await this.#call({ method: 'DELETE', path: '/user/service' }, options);
  }

  /** `GET /push`: the devices this service receives DEVICE_PUSH for; `[]` when none (the wire says `null`). */
  async listPushSubscriptions(options?: CallOptions): Promise<PushSubscription[]> {
    return (await this.#call<PushSubscription[] | null>({ method: 'GET', path: '/push' }, options)) ?? [];
  }

  /** `POST /push/{id}`: 1207 when already subscribed. */
  async subscribePush(deviceId: string, options?: CallOptions): Promise<void> {
    await this.#call({ method: 'POST', path: `/push/${encodeURIComponent(deviceId)}` }, options);
  }

  /** `DELETE /push/{id}`: 1206 when not subscribed. */
  async unsubscribePush(deviceId: string, options?: CallOptions): Promise<void> {
    await this.#call({ method: 'DELETE', path: `/push/${encodeURIComponent(deviceId)}` }, options);
  }

  /** `GET /event`: the event subscriptions with their expiry; `[]` when none (the wire says `null`). */
  async listEventSubscriptions(options?: CallOptions): Promise<EventSubscription[]> {
    return (await this.#call<EventSubscription[] | null>({ method: 'GET', path: '/event' }, options)) ?? [];
  }

  /** `POST /event/{id}`: DEVICE_STATUS events for the device until the expiry (default one hour); again renews it. */
  async subscribeEvents(deviceId: string, expire?: EventExpiry, options?: CallOptions): Promise<void> {
    await this.#call({ method: 'POST', path: `/event/${encodeURIComponent(deviceId)}`, body: expire === undefined ? {} : { expire } }, options);
  }

  /** `DELETE /event/{id}`: 1204 when not subscribed. */
  async unsubscribeEvents(deviceId: string, options?: CallOptions): Promise<void> {
    await this.#call({ method: 'DELETE', path: `/event/${encodeURIComponent(deviceId)}` }, options);
  }
}
