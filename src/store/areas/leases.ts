/**
 * Work that one node of a deployment does at a time, whoever it is (DESIGN B: consuming what devices
 * send through an external broker, in order). A lease is held for a while and renewed; a holder that
 * stops renewing (it crashed, or lost the database) loses it when that time runs out.
 */
export interface LeasesArea {
  /**
   * Takes the lease `name` for `holder`, or renews it, unless another holder's is still running; true
   * when `holder` holds it now, for `ttlMs` from the moment the database took it.
   */
  holdLease(name: string, holder: string, ttlMs: number): Promise<boolean>;
  /** Gives the lease up if `holder` holds it, so that another node may take it at once. */
  releaseLease(name: string, holder: string): Promise<void>;
}
