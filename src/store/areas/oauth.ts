/**
 * Owners, account linking and consent (DESIGN G): what the authorization server keeps, in our store
 * so that a grant made on one node works on every node. The protocol's artifacts (codes, tokens,
 * grants, sessions, interactions) are opaque records to the store; what the rest of the product
 * reads is typed: owner logins, client redirect URIs and each (service, user) pair's device share.
 * Times are epoch milliseconds.
 */

/**
 * One artifact of the authorization server, keyed by its kind and the SHA-256 of its id. The console
 * keeps its one-time messages here too (kind ConsoleFlash, src/console/session.ts): short-lived, swept alike.
 */
export interface OAuthRecord {
  model: string;
  /** The id's hash: a token's value is its id, and the store never holds it in clear. */
  key: string;
  /** The artifact as JSON, without its id. */
  payload: string;
  grantId: string | null;
  userCode: string | null;
  uid: string | null;
  /** null: it lives until destroyed. */
  expiresAt: number | null;
  consumedAt: number | null;
}

/** Which of the user's devices a linked service may see: all (of its allowed types, later ones too) or a chosen list. */
export interface DeviceShare {
  serviceId: string;
  userNumber: string;
  /** The grant that made it: only that grant's tokens act for the pair. */
  grantId: string;
  scopes: string[];
  /** null: every device of the service's allowed types. */
  deviceIds: string[] | null;
  createdAt: number;
}

export interface OwnerLogin {
  userNumber: string;
  /** Lower case. */
  email: string;
  passwordHash: string;
}

export interface OAuthArea {
  /** Creates or replaces the record of (model, key). */
  saveOAuthRecord(record: OAuthRecord): Promise<void>;
  /** Unexpired at `now`. */
  findOAuthRecord(model: string, key: string, now: number): Promise<OAuthRecord | undefined>;
  findOAuthRecordByUserCode(model: string, userCode: string, now: number): Promise<OAuthRecord | undefined>;
  findOAuthRecordByUid(model: string, uid: string, now: number): Promise<OAuthRecord | undefined>;
  /** Marks the record consumed at `at`; false when it already was (or is gone): one use only, however many ask at once. */
  consumeOAuthRecord(model: string, key: string, at: number): Promise<boolean>;
  destroyOAuthRecord(model: string, key: string): Promise<void>;
  /** Deletes every record of the grant (the grant's own carries its id as grantId): its codes and tokens stop working at once. */
  revokeOAuthGrant(grantId: string): Promise<void>;
  /**
   * The sweeper's delete: at most `limit` records expired at `now`, which no find returns any more.
   * Returns how many.
   */
  deleteExpiredOAuthRecords(now: number, limit: number): Promise<number>;

  /**
   * Records the pair's share and connects the pair (keeping an existing connection as it is). An
   * earlier share of the pair is unlinked as by deleteDeviceShare.
   */
  saveDeviceShare(share: DeviceShare): Promise<void>;
  getDeviceShare(serviceId: string, userNumber: string): Promise<DeviceShare | undefined>;
  /** The share the grant was given as, while it is the pair's; undefined for a grant no share holds. */
  getDeviceShareByGrant(grantId: string): Promise<DeviceShare | undefined>;
  /** The user's linked services, oldest link first. */
  listDeviceShares(userNumber: string): Promise<DeviceShare[]>;
  /**
   * Unlinks the pair: deletes its share and its grant's records, except its access tokens, which stay
   * until they expire so that a call with one answers 1202 (no longer connected), not 1103. false when there was none.
   */
  deleteDeviceShare(serviceId: string, userNumber: string): Promise<boolean>;

  /** false when the email is another user's; replaces the user's own login. */
  setOwnerLogin(login: OwnerLogin): Promise<boolean>;
  findOwnerLogin(email: string): Promise<OwnerLogin | undefined>;

  /** Where the service's authorization requests may return to; [] when none was set (createService, updateService). */
  getRedirectUris(serviceId: string): Promise<string[]>;

  /**
   * A secret every node of the deployment shares (cookie and CSRF keys, the signing key): the one
   * stored under `name`, or `candidate`, stored, when there is none yet.
   */
  sharedSecret(name: string, candidate: string): Promise<string>;
}
