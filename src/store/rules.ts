/**
 * Rules the store applies that are decisions, not SQL: written once here, each backend runs them
 * inside its own transaction.
 */

/**
 * Whether a pair holding `held` unexpired event subscriptions (counted as GET /event lists them) may
 * create one more; beyond, the API answers 1312. Renewing one it holds, even expired, is never refused.
 */
export function mayCreateEventSubscription(held: number, limit: number): boolean {
  return held < limit;
}
