/**
 * The demo world of DESIGN E, seeded idempotently through the same domain functions as the admin
 * API: one service allowed every catalog type, one user of the deployment's region, one virtual
 * appliance of each type, and an access token. What already exists is kept.
 */
import { DEVICE_TYPES } from '../catalog/index.js';
import type { AppContext } from '../context.js';
import { hashSecret, secretMatches } from '../ids.js';
import { demoCountry, regionOf } from '../regions.js';
import type { Device, Service, User } from '../core/model.js';
import type { SandboxCredentials } from './credentials.js';

/** The sandbox token lives 30 days; a re-run issues a new one when less than a day is left. */
export const SANDBOX_TOKEN_SECONDS = 30 * 24 * 60 * 60;
const TOKEN_RENEWAL_MARGIN_MS = 24 * 60 * 60 * 1000;
const WASHTOWER_HALF = /^DEVICE_WASHTOWER_/;

export interface SandboxWorld {
  credentials: SandboxCredentials;
  /** Where the service's messages go; null when nowhere yet (they wait, held). */
  callbackUrl: string | null;
  countryCode: string;
  devices: Device[];
  /** The demo user's login to /oauth and /account (DESIGN G). */
  owner: { email: string; password: string };
}

export const DEMO_OWNER_EMAIL = 'owner@sandbox.example';

export interface SeedOptions {
  /** Becomes the service's callbackUrl when given. */
  callbackUrl?: string;
  adminToken: string;
}

/** `DEVICE_WASHTOWER_WASHER` → `Washtower washer`. */
export function aliasOf(deviceType: string): string {
  const words = deviceType.replace(/^DEVICE_/, '').toLowerCase().replaceAll('_', ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

async function ensureService(ctx: AppContext, saved: SandboxCredentials | null, callbackUrl: string | undefined) {
  const existing = saved ? await ctx.store.getService(saved.serviceId) : undefined;
  // A service whose key no longer matches the saved one could not be called with what we print.
  if (saved && existing && secretMatches(saved.serviceKey, existing.keyHash)) {
    const missing = DEVICE_TYPES.filter((type) => !existing.allowedDevices.includes(type));
    const patch = {
      ...(missing.length ? { allowedDevices: [...existing.allowedDevices, ...missing] } : {}),
      ...(callbackUrl !== undefined && callbackUrl !== existing.callbackUrl ? { callbackUrl } : {}),
    };
    const service: Service = Object.keys(patch).length ? await ctx.accounts.updateService(existing.serviceId, patch) : existing;
    return { service, serviceKey: saved.serviceKey };
  }
  const created = await ctx.accounts.createService({ name: 'Sandbox service', allowedDevices: [...DEVICE_TYPES], callbackUrl: callbackUrl ?? null });
  return { service: created.service, serviceKey: created.serviceKey };
}

async function ensureUser(ctx: AppContext, saved: SandboxCredentials | null): Promise<User> {
  const existing = saved ? await ctx.store.getUser(saved.userNumber) : undefined;
  // A user of another region would be refused with 1307 once REGION changed between runs.
  if (existing && regionOf(existing.countryCode) === ctx.config.region) return existing;
  return ctx.accounts.createUser(demoCountry(ctx.config.region));
}

/** Registers a virtual appliance of every catalog type the user does not have yet. */
async function ensureDevices(ctx: AppContext, userNumber: string): Promise<Device[]> {
  const devices = await ctx.store.listUserDevices(userNumber);
  for (const deviceType of DEVICE_TYPES) {
    if (devices.some((device) => device.deviceType === deviceType)) continue;
    // The washtower's washer and dryer are one appliance: the second half joins the first's group.
    const groupId = WASHTOWER_HALF.test(deviceType) ? devices.find((d) => WASHTOWER_HALF.test(d.deviceType))?.groupId : undefined;
    const { device } = await ctx.devices.register(userNumber, {
      deviceType,
      alias: aliasOf(deviceType),
      virtual: true,
      ...(groupId ? { groupId } : {}),
    });
    devices.push(device);
  }
  return devices;
}

async function ensureToken(ctx: AppContext, saved: SandboxCredentials | null, userNumber: string, serviceId: string) {
  if (saved) {
    const token = await ctx.store.getToken(hashSecret(saved.accessToken));
    const usable = token && token.revokedAt === null && token.userNumber === userNumber && token.serviceId === serviceId
      && token.expiresAt > ctx.clock.now() + TOKEN_RENEWAL_MARGIN_MS;
    if (usable) return { accessToken: saved.accessToken, expiresAt: token.expiresAt };
  }
  return ctx.accounts.issueToken(userNumber, serviceId, SANDBOX_TOKEN_SECONDS);
}

/**
 * Gives the demo user its login. The password is derived from the saved admin token: the same on
 * every run, known to whoever holds the sandbox's credentials, and nobody else.
 */
async function ensureOwner(ctx: AppContext, userNumber: string, adminToken: string): Promise<{ email: string; password: string }> {
  const password = hashSecret(`demo-owner:${adminToken}`).slice(0, 16);
  await ctx.owners.setLogin(userNumber, DEMO_OWNER_EMAIL, password);
  return { email: DEMO_OWNER_EMAIL, password };
}

/** Seeds (or finds again) the sandbox's world; returns it with the credentials to save. */
export async function seedSandbox(ctx: AppContext, saved: SandboxCredentials | null, options: SeedOptions): Promise<SandboxWorld> {
  const { service, serviceKey } = await ensureService(ctx, saved, options.callbackUrl);
  const user = await ensureUser(ctx, saved);
  const devices = await ensureDevices(ctx, user.userNumber);
  const token = await ensureToken(ctx, saved, user.userNumber, service.serviceId);
  const owner = await ensureOwner(ctx, user.userNumber, options.adminToken);
  const webhookSecret = service.webhookSecrets[0]?.secret;
  if (!webhookSecret) throw new Error(`Service ${service.serviceId} has no webhook secret`);
  return {
    credentials: {
      serviceId: service.serviceId,
      serviceKey,
      webhookSecret,
      userNumber: user.userNumber,
      accessToken: token.accessToken,
      accessTokenExpiresAt: token.expiresAt,
      adminToken: options.adminToken,
    },
    callbackUrl: service.callbackUrl,
    countryCode: user.countryCode,
    devices,
    owner,
  };
}
