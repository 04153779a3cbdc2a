/** Calling services, users and their access tokens: what the admin API and the CLI manage. */
import { DEVICE_TYPES } from '../catalog/index.js';
import type { UrlCheck } from '../delivery/address-guard.js';
import { newWebhookSecret } from '../delivery/sign.js';
import { fail } from '../errors.js';
import { hashSecret, isMessageId, newUserNumber, randomId, type Clock } from '../ids.js';
import type { Phase, Region } from '../config.js';
import { checkRedirectUri } from '../oauth/clients.js';
import { countriesOf, isCountryCode, regionOf } from '../regions.js';
import type { DeliveryAttempt, OutboxMessage, Service, ServicePatch, User } from './model.js';
import type { MessageFilter } from '../store/areas/outbox.js';
import type { Store } from '../store/store.js';
import type { Page } from '../store/areas/overview.js';
import type { LookupInvalidation } from './cache.js';

/** During a rotation, the previous webhook secret keeps signing for this long (DESIGN C). */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;
const USER_NUMBER = /^[A-Za-z0-9_-]{1,64}$/;

export interface NewServiceInput {
  name: string;
  allowedDevices: string[];
  callbackUrl?: string | null;
  eventCallbackUrl?: string | null;
  /** Where the authorization server may send its owners back (DESIGN G). */
  redirectUris?: string[];
}

export type ServiceChange = ServicePatch & { redirectUris?: string[] };

function checkAllowedDevices(allowedDevices: string[]): void {
  const unknown = allowedDevices.filter((type) => !DEVICE_TYPES.includes(type));
  if (unknown.length) {
    throw fail('1102', `allowedDevices may hold only ${DEVICE_TYPES.join(', ')}; got ${unknown.join(', ')}.`);
  }
}

/**
 * A callback URL is judged when it is set by the delivery guard's own URL check (DESIGN J), so a
 * URL that every delivery would refuse (phase OP: not https, or a private literal) is refused now.
 */
function checkUrl(name: string, value: string | null | undefined, guard: CallbackGuard): void {
  if (value === null || value === undefined) return;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw fail('1102', `${name} must be an absolute http(s) URL; got ${JSON.stringify(value)}.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw fail('1102', `${name} must be an http or https URL; got ${JSON.stringify(value)}.`);
  }
  const check = guard(value);
  if (!check.ok) throw fail('1102', `${name} ${JSON.stringify(value)} cannot receive messages: ${check.reason}.`);
}

/** The delivery guard's check of a callback URL's scheme and literal address, in this deployment's phase. */
export type CallbackGuard = (url: string) => UrlCheck;

export interface MessageWithAttempts {
  message: OutboxMessage;
  attempts: DeliveryAttempt[];
}

export class Accounts {
  /** The partner checks read services, tokens and connections through this cache: each change here is told to it. */
  private readonly lookups: LookupInvalidation;

  /** `region` is the deployment's: its users live in its countries (DESIGN A.2). */
  constructor(private readonly deps: { store: Store; clock: Clock; region: Region; phase: Phase; checkCallbackUrl: CallbackGuard; lookups: LookupInvalidation }) {
    this.lookups = deps.lookups;
  }

  /** Creates a calling service; its key and webhook secret are returned once and never again. */
  async createService(input: NewServiceInput): Promise<{ service: Service; serviceKey: string; webhookSecret: string }> {
    checkAllowedDevices(input.allowedDevices);
    checkUrl('callbackUrl', input.callbackUrl, this.deps.checkCallbackUrl);
    checkUrl('eventCallbackUrl', input.eventCallbackUrl, this.deps.checkCallbackUrl);
    for (const uri of input.redirectUris ?? []) checkRedirectUri(uri, this.deps.phase);
    const serviceKey = randomId(24);
    const webhookSecret = newWebhookSecret();
    const service = await this.deps.store.createService(
      {
        serviceId: `svc_${randomId(12)}`,
        name: input.name,
        keyHash: hashSecret(serviceKey),
        allowedDevices: [...new Set(input.allowedDevices)],
        callbackUrl: input.callbackUrl ?? null,
        eventCallbackUrl: input.eventCallbackUrl ?? null,
        webhookSecret,
        redirectUris: [...new Set(input.redirectUris ?? [])],
      },
      this.deps.clock.now(),
    );
    return { service, serviceKey, webhookSecret };
  }

  /** Every calling service, for the admin API and the CLI. */
  async listServices(): Promise<Service[]> {
    return this.deps.store.listServices();
  }

  async getService(serviceId: string): Promise<Service> {
    const service = await this.deps.store.getService(serviceId);
    if (!service) throw fail('1305', `Service ${serviceId} does not exist.`);
    return service;
  }

  /** Where the service's authorizations may return to (DESIGN G). */
  async redirectUris(serviceId: string): Promise<string[]> {
    return this.deps.store.getRedirectUris(serviceId);
  }

  async updateService(serviceId: string, change: ServiceChange): Promise<Service> {
    const { redirectUris, ...fields } = change;
    // Each type once, as createService keeps them.
    const patch = fields.allowedDevices ? { ...fields, allowedDevices: [...new Set(fields.allowedDevices)] } : fields;
    if (patch.allowedDevices) checkAllowedDevices(patch.allowedDevices);
    for (const uri of redirectUris ?? []) checkRedirectUri(uri, this.deps.phase);
    checkUrl('callbackUrl', patch.callbackUrl, this.deps.checkCallbackUrl);
    checkUrl('eventCallbackUrl', patch.eventCallbackUrl, this.deps.checkCallbackUrl);
    const service = await this.deps.store.updateService(serviceId, patch, redirectUris && [...new Set(redirectUris)]);
    await this.lookups.serviceChanged(serviceId);
    if (!service) throw fail('1305', `Service ${serviceId} does not exist.`);
    // Held messages go out as soon as delivery is possible again (`enabled: true` lifted a disabled
    // endpoint with the change, DESIGN C), not at the next sweep, which releases them should this fail.
    await this.deps.store.releaseHeld(this.deps.clock.now(), serviceId);
    return service;
  }

  /**
   * A new current webhook secret. The previous one keeps signing for 24 h, or stops at once with
   * `expirePreviousNow` (a leaked secret); one rotated out before it stops at once either way.
   */
  async rotateSecret(serviceId: string, options: { expirePreviousNow?: boolean } = {}): Promise<string> {
    const secret = newWebhookSecret();
    const now = this.deps.clock.now();
    const previousExpiresAt = options.expirePreviousNow === true ? now : now + ROTATION_OVERLAP_MS;
    const rotated = await this.deps.store.rotateWebhookSecret(serviceId, secret, now, previousExpiresAt);
    await this.lookups.serviceChanged(serviceId);
    if (!rotated) throw fail('1305', `Service ${serviceId} does not exist.`);
    return secret;
  }

  async createUser(countryCode: string, userNumber?: string): Promise<User> {
    if (!isCountryCode(countryCode)) throw fail('1102', `countryCode must be an ISO 3166-1 alpha-2 code; got ${JSON.stringify(countryCode)}.`);
    if (regionOf(countryCode) !== this.deps.region) {
      const { region } = this.deps;
      throw fail('1102', `countryCode must be a country of this deployment's region ${region} (${countriesOf(region).join(', ')}); got ${JSON.stringify(countryCode)}.`);
    }
    if (userNumber !== undefined && !USER_NUMBER.test(userNumber)) {
      throw fail('1102', `userNumber must be 1 to 64 of A-Z, a-z, 0-9, _ and -; got ${JSON.stringify(userNumber)}.`);
    }
    const user = { userNumber: userNumber ?? newUserNumber(), countryCode, createdAt: this.deps.clock.now() };
    if (!(await this.deps.store.createUser(user))) throw fail('1102', `User ${user.userNumber} already exists.`);
    return user;
  }

  /** Users by userNumber, a page at a time. */
  async listUsers(page: Page): Promise<User[]> {
    return this.deps.store.listUsers(page);
  }

  async deleteUser(userNumber: string): Promise<void> {
    const devices = await this.deps.store.listUserDevices(userNumber);
    const deleted = await this.deps.store.deleteUser(userNumber, this.deps.clock.now());
    await this.lookups.userChanged(userNumber);
    // Its devices were unregistered from it (gone, unless shared): the broker cuts off a gone one's connection.
    for (const { deviceId } of devices) await this.lookups.deviceChanged(deviceId);
    if (!deleted) throw fail('1202', `User ${userNumber} does not exist.`);
  }

  /** Issues an access token, which connects the user to the service. */
  async issueToken(userNumber: string, serviceId: string, expiresInSeconds = 86_400): Promise<{ accessToken: string; expiresAt: number }> {
    if (!(await this.deps.store.getUser(userNumber))) throw fail('1202', `User ${userNumber} does not exist.`);
    if (!(await this.deps.store.getService(serviceId))) throw fail('1102', `serviceId ${serviceId} is not a service.`);
    const accessToken = randomId(32);
    const now = this.deps.clock.now();
    const expiresAt = Math.floor(now + expiresInSeconds * 1000);
    await this.deps.store.createToken({ tokenHash: hashSecret(accessToken), userNumber, serviceId, expiresAt }, now).catch(async (error: unknown) => {
      // The user was deleted since the check above, by a call at the same time: answered as that check answers.
      if (!(await this.deps.store.getUser(userNumber))) throw fail('1202', `User ${userNumber} does not exist.`);
      throw error;
    });
    return { accessToken, expiresAt };
  }

  /**
   * DELETE /user/service: the pair's subscriptions, loaded device list and connection go, its tokens
   * are revoked (later calls with them answer 1202).
   */
  async disconnect(serviceId: string, userNumber: string): Promise<void> {
    // An owner's consent goes with it, in the same write (DESIGN G): its tokens answer 1202, its refresh tokens stop.
    await this.deps.store.disconnect(serviceId, userNumber, this.deps.clock.now());
    await this.lookups.userChanged(userNumber);
  }

  // A service's messages and their delivery attempts (DESIGN C): what the admin API and the CLI inspect and replay.

  /** The service's messages matching `filter`, each with its attempts in order. */
  async listMessages(serviceId: string, filter: MessageFilter): Promise<MessageWithAttempts[]> {
    await this.getService(serviceId);
    if (filter.before !== undefined) await this.checkPageEnd(serviceId, filter.before);
    const messages = await this.deps.store.listMessages(serviceId, filter);
    const attempts = await this.deps.store.listAttempts(messages.map((m) => m.messageId));
    return messages.map((message) => ({
      message,
      attempts: attempts.filter((a) => a.messageId === message.messageId).sort((a, b) => a.attempt - b.attempt),
    }));
  }

  /** `before` must name a message of the service: a mistyped or deleted one would list nothing, as if no older one were left. */
  private async checkPageEnd(serviceId: string, before: string): Promise<void> {
    const last = isMessageId(before) ? await this.deps.store.getMessage(before) : undefined;
    if (last?.serviceId !== serviceId) {
      throw fail('1102', `before must be the messageId of a message of service ${serviceId}, the last of the previous page; got ${JSON.stringify(before)}.`);
    }
  }

  /** Puts one message back to pending, due now; returns it so as resent, with the attempts it had. */
  async resendMessage(messageId: string): Promise<MessageWithAttempts> {
    const { store, clock } = this.deps;
    if (!(await store.resendMessage(messageId, clock.now()))) throw fail('1305', `Message ${messageId} does not exist.`);
    const message = await store.getMessage(messageId);
    // Retention deleted it in between: it was delivered meanwhile, and old.
    if (!message) throw fail('1305', `Message ${messageId} does not exist.`);
    return { message, attempts: (await store.listAttempts([messageId])).sort((a, b) => a.attempt - b.attempt) };
  }

  /** Puts every failed message of the service created since `since` back to pending; returns how many. */
  async recoverFailed(serviceId: string, since: number): Promise<number> {
    await this.getService(serviceId);
    return this.deps.store.recoverFailed(serviceId, since, this.deps.clock.now());
  }
}
