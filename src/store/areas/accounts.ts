/** Calling services, users, their access tokens and the connections between users and services. */
import type { AccessToken, Connection, NewService, Service, ServicePatch, User } from '../../core/model.js';

export interface AccountsArea {
  /** The service, its first secret and its redirect URIs, written together or not at all. */
  createService(service: NewService, at: number): Promise<Service>;
  getService(serviceId: string): Promise<Service | undefined>;
  listServices(): Promise<Service[]>;
  /**
   * The service with `patch` applied as `patchService` (core/model.ts) has it, its disabled delivery
   * endpoint lifted when the patch has `enabled: true` (DESIGN C), and its redirect URIs replaced when
   * given, in one write; undefined when unknown. Its held messages stay held: releaseHeld releases them.
   */
  updateService(serviceId: string, patch: ServicePatch, redirectUris?: string[]): Promise<Service | undefined>;
  /**
   * Makes `secret` current; the previous current secret stays valid until `previousExpiresAt` (not
   * kept at all when that is `at` or earlier), and any older one is deleted at once.
   */
  rotateWebhookSecret(serviceId: string, secret: string, at: number, previousExpiresAt: number): Promise<boolean>;

  createUser(user: User): Promise<boolean>;
  getUser(userNumber: string): Promise<User | undefined>;
  /**
   * Unregisters the user's devices (with their messages), removes its connections and subscriptions,
   * and revokes its tokens as `disconnected` (so a later call with one answers 1202, not 1103).
   */
  deleteUser(userNumber: string, at: number): Promise<boolean>;

  /** Stores a token and connects its user to its service (keeping an existing connection as it is). */
  createToken(token: Omit<AccessToken, 'revokedAt' | 'revokedReason'>, at: number): Promise<void>;
  getToken(tokenHash: string): Promise<AccessToken | undefined>;

  getConnection(serviceId: string, userNumber: string): Promise<Connection | undefined>;
  /** The user's connections, oldest first: every service that can reach the user's devices, by consent or by an admin token. */
  listConnections(userNumber: string): Promise<Connection[]>;
  /** Marks the device list loaded (and the lifecycle subscription on) if it was not already. */
  markDeviceListLoaded(serviceId: string, userNumber: string, at: number): Promise<void>;
  /**
   * DELETE /user/service: deletes the pair's push and event subscriptions, its loaded device list and
   * lifecycle subscription, the connection, and revokes the pair's tokens as `disconnected`; unlinks
   * the owner's consent as deleteDeviceShare does, in the same transaction. Messages already in the
   * outbox stay.
   */
  disconnect(serviceId: string, userNumber: string, at: number): Promise<boolean>;
}
