/**
 * Owners (DESIGN G): users who sign in with an email and a password, link their devices to calling
 * services by consenting, and take the consent back. Passwords are hashed with scrypt; the store
 * never sees one in clear, and nothing here logs one.
 */
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { fail } from '../errors.js';
import type { Clock } from '../ids.js';
import type { Device, Service, User } from './model.js';
import type { Store } from '../store/store.js';
import type { Accounts } from './accounts.js';
import type { LookupInvalidation } from './cache.js';
import type { Devices } from './devices.js';

/** What consent can grant (DESIGN G): each scope opens one part of the partner interface. */
export const SCOPES = ['devices', 'control', 'push', 'events'] as const;
export type Scope = (typeof SCOPES)[number];

export const SCOPE_DESCRIPTIONS: Record<Scope, string> = {
  devices: 'see your devices, their profiles and their status',
  control: 'control your devices',
  push: 'be told when your devices raise notifications',
  events: 'be told every change of your devices’ status',
};

// N = 2^15: about 50 ms and 32 MiB per hash, OWASP's floor for scrypt.
const SCRYPT: ScryptOptions = { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };
const KEY_LENGTH = 32;
// No control characters: PostgreSQL cannot store NUL, and a lookup by one fails the query.
const EMAIL = /^[^\s@\p{Cc}]+@[^\s@\p{Cc}]+\.[^\s@\p{Cc}]+$/u;
const MIN_PASSWORD = 8;

function derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFKC'), salt, KEY_LENGTH, options, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

/** `scrypt$N$r$p$salt$key`, base64url: the parameters travel with the hash so they can grow later. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, SCRYPT);
  return ['scrypt', SCRYPT.N, SCRYPT.r, SCRYPT.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [kind, n, r, p, salt, key] = stored.split('$');
  if (kind !== 'scrypt' || !salt || !key) return false;
  const expected = Buffer.from(key, 'base64url');
  const actual = await derive(password, Buffer.from(salt, 'base64url'), { N: Number(n), r: Number(r), p: Number(p), maxmem: SCRYPT.maxmem });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** How an email is compared: a login's is stored so, and sign-in looks it up so. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** Compared against when the email is unknown, so that a wrong email takes as long as a wrong password; made at the first need. */
let decoyHash: Promise<string> | undefined;

/** A service that can reach the owner's devices, as the owner's account page shows it. */
export interface Link {
  service: Service;
  /** `operator`: connected by an admin token, which carries every scope and sees every device of the service's allowed types. */
  linkedBy: 'consent' | 'operator';
  scopes: readonly string[];
  /** null: every device of the service's allowed types, later ones too. */
  deviceIds: string[] | null;
}

export class Owners {
  constructor(private readonly deps: { store: Store; clock: Clock; accounts: Accounts; devices: Devices; lookups: LookupInvalidation }) {}

  /** Gives the user a login (or replaces it); 1102 for a malformed email, a short password or an email in use. */
  async setLogin(userNumber: string, email: string, password: string): Promise<void> {
    const normalized = this.checkLogin(email, password);
    const passwordHash = await hashPassword(password);
    if (!(await this.deps.store.setOwnerLogin({ userNumber, email: normalized, passwordHash }))) {
      throw fail('1102', `email ${normalized} is another user's login.`);
    }
  }

  /**
   * Creates a user (Accounts.createUser), with a login when `email` and `password` are given (both or
   * neither: 1101). A refused login leaves no user behind.
   */
  async createUser(countryCode: string, options: { userNumber?: string; email?: string; password?: string }): Promise<User & { email?: string }> {
    const { email, password } = options;
    if ((email === undefined) !== (password === undefined)) throw fail('1101', 'email and password go together: give both or neither.');
    const login = email !== undefined && password !== undefined ? { email: this.checkLogin(email, password), password } : undefined;
    const user = await this.deps.accounts.createUser(countryCode, options.userNumber);
    if (!login) return user;
    try {
      await this.setLogin(user.userNumber, login.email, login.password);
    } catch (error) {
      await this.deps.accounts.deleteUser(user.userNumber);
      throw error;
    }
    return { ...user, email: login.email };
  }

  /** The email, normalized, when both are acceptable; 1102 otherwise. */
  checkLogin(email: string, password: string): string {
    const normalized = normalizeEmail(email);
    if (!EMAIL.test(normalized)) throw fail('1102', `email must be an email address; got ${JSON.stringify(email)}.`);
    if (password.length < MIN_PASSWORD) throw fail('1102', `password must be at least ${MIN_PASSWORD} characters long.`);
    return normalized;
  }

  /** The user number of the owner with these credentials, or undefined. */
  async signIn(email: string, password: string): Promise<string | undefined> {
    const normalized = normalizeEmail(email);
    // What could not be set as a login is no one's: not looked up (a NUL failed the query, a 500), but hashed all the same.
    const login = EMAIL.test(normalized) ? await this.deps.store.findOwnerLogin(normalized) : undefined;
    const matches = await verifyPassword(password, login?.passwordHash ?? (await (decoyHash ??= hashPassword(randomBytes(16).toString('hex')))));
    return login && matches ? login.userNumber : undefined;
  }

  /** The owner's devices a service may be given: those of its allowed types. */
  async shareableDevices(userNumber: string, service: Service): Promise<Device[]> {
    const devices = await this.deps.store.listUserDevices(userNumber);
    return devices.filter((device) => service.allowedDevices.includes(device.deviceType));
  }

  async devicesOf(userNumber: string): Promise<Device[]> {
    return this.deps.store.listUserDevices(userNumber);
  }

  /**
   * Records a consent: the scopes and the devices shared (null: all of the allowed types, later ones
   * too), which connects the pair. A chosen device that the service may not be given is refused
   * before `saveGrant` runs, so that a refused consent leaves no grant behind. `saveGrant` saves the
   * authorization server's grant the consent stands for and answers its id, which this answers too.
   */
  async link(service: Service, userNumber: string, saveGrant: () => Promise<{ grantId: string; scopes: string[] }>, deviceIds: string[] | null): Promise<string> {
    if (deviceIds !== null) {
      const shareable = new Set((await this.shareableDevices(userNumber, service)).map((d) => d.deviceId));
      const foreign = deviceIds.filter((id) => !shareable.has(id));
      if (foreign.length) throw fail('1102', `Devices ${foreign.join(', ')} cannot be shared with ${service.name}.`);
    }
    const { grantId, scopes } = await saveGrant();
    const createdAt = this.deps.clock.now();
    await this.deps.store.saveDeviceShare({ serviceId: service.serviceId, userNumber, grantId, scopes, deviceIds: deviceIds && [...new Set(deviceIds)], createdAt });
    await this.deps.lookups.userChanged(userNumber);
    return grantId;
  }

  /**
   * The services linked to the owner: those consented to, oldest first, then those the operator
   * connected without a consent; a service gone since is left out.
   */
  async links(userNumber: string): Promise<Link[]> {
    const [shares, connections] = await Promise.all([this.deps.store.listDeviceShares(userNumber), this.deps.store.listConnections(userNumber)]);
    const consented = new Set(shares.map((share) => share.serviceId));
    const wanted: (Omit<Link, 'service'> & { serviceId: string })[] = [
      ...shares.map(({ serviceId, scopes, deviceIds }) => ({ serviceId, linkedBy: 'consent' as const, scopes, deviceIds })),
      ...connections
        .filter(({ serviceId }) => !consented.has(serviceId))
        .map(({ serviceId }) => ({ serviceId, linkedBy: 'operator' as const, scopes: SCOPES, deviceIds: null })),
    ];
    const links: Link[] = [];
    for (const { serviceId, ...link } of wanted) {
      const service = await this.deps.store.getService(serviceId);
      if (service) links.push({ service, ...link });
    }
    return links;
  }

  /** Unlinks a service, consented to or connected by the operator: the effect of DELETE /user/service (its tokens answer 1202). */
  async unlink(userNumber: string, serviceId: string): Promise<void> {
    await this.deps.accounts.disconnect(serviceId, userNumber);
  }

  /**
   * The authorization server revoked a grant (a refresh token used twice, a code replayed, the
   * service's RFC 7009 revocation of a refresh token): the consent it stood for is gone, so the pair
   * is unlinked as from /account (DESIGN G, J), and messages about the owner's devices stop. A grant
   * no share holds (replaced by a later consent, or unlinked already) changes nothing.
   */
  async grantRevoked(grantId: string): Promise<void> {
    const share = await this.deps.store.getDeviceShareByGrant(grantId);
    if (share) await this.deps.accounts.disconnect(share.serviceId, share.userNumber);
  }

  /** Renames one of the owner's devices (DEVICE_ALIAS_CHANGED); 1205 for a device not theirs. */
  async renameDevice(userNumber: string, deviceId: string, alias: string): Promise<void> {
    const device = await this.deps.store.getDevice(deviceId);
    if (!device || !device.userNumbers.includes(userNumber)) throw fail('1205', `Device ${deviceId} is not registered to you.`);
    await this.deps.devices.rename(deviceId, alias);
  }
}
