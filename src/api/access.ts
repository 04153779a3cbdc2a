/**
 * What a token lets its service do (DESIGN G): its scopes, and which of the user's devices it may
 * see. Tokens from the admin API carry every scope and see every device; an owner's consent may
 * grant fewer of either.
 */
import { SCOPES, type Scope } from '../core/owners.js';
import { fail } from '../errors.js';
import type { Device } from '../core/model.js';

export interface Access {
  scopes: ReadonlySet<string>;
  /** null: every device of the service's allowed types, later ones too. */
  deviceIds: ReadonlySet<string> | null;
}

export const FULL_ACCESS: Access = { scopes: new Set(SCOPES), deviceIds: null };

/** 401 1308 naming the missing scope, when the token's scopes do not cover the route. */
export function checkScope(access: Access, scope: Scope | undefined): void {
  if (scope === undefined || access.scopes.has(scope)) return;
  const scopes = `its scopes (${[...access.scopes].join(' ') || 'none'}) do not include ${scope}`;
  throw fail('1308', scope === 'control' ? `The access token has no control authority: ${scopes}.` : `The access token cannot be used here: ${scopes}.`);
}

/** Whether the device is among those the token may see. */
export function mayAccess(access: Access, device: Pick<Device, 'deviceId'>): boolean {
  return access.deviceIds === null || access.deviceIds.has(device.deviceId);
}
