/**
 * What the delivery engine does with the outbox (DESIGN C): leases with fencing tokens, outcomes in
 * batches, endpoint health and held messages. The rules are on DeliveryArea in areas/delivery.ts.
 */
import type { AttemptRecord, ClaimedDelivery, ClaimRequest, EndpointDisabledReason, EndpointHealth, OutboxStats, RecordedAndClaimed, RecordedStatus } from '../areas/delivery.js';
import type { Sql } from './database.js';
import { canTake, CLOSED, EVENT_URL, markHead, notifyIf, OPEN, OUTBOX_COLUMNS, PUSH_URL, unpark } from './sqlite-outbox.js';
import { toMessage, type OutboxRow } from './rows.js';
import type { DeliveryArea } from '../areas/delivery.js';

/** Per service: whether its push and its event messages can go out now (0 or 1). */
const ENDPOINTS = `SELECT * FROM (
  SELECT s.service_id, ${canTake(PUSH_URL)} AS push_ok, ${canTake(EVENT_URL)} AS event_ok
  FROM services s LEFT JOIN delivery_endpoints e ON e.service_id = s.service_id)`;

interface EndpointRow {
  service_id: string;
  push_ok: number;
  event_ok: number;
}

/** A waiting queue head, in outbox_ready (the planner, lacking statistics, would pick another index). */
const READY = `outbox INDEXED BY outbox_ready WHERE status = 'pending' AND queue_head = 1`;

/** The services with waiting heads (one index seek each), and when the first of each falls due. */
const READY_SERVICES = `WITH RECURSIVE ready (service_id) AS (
    SELECT (SELECT service_id FROM ${READY} ORDER BY service_id LIMIT 1)
    UNION ALL
    SELECT (SELECT service_id FROM ${READY} AND service_id > ready.service_id ORDER BY service_id LIMIT 1)
    FROM ready WHERE ready.service_id IS NOT NULL)
  SELECT r.service_id, (SELECT min(next_attempt_at) FROM ${READY} AND service_id = r.service_id) AS due
  FROM ready r WHERE r.service_id IS NOT NULL`;

/**
 * One service's due heads, oldest first, with their URL. The NOT EXISTS re-checks the head flag at
 * one index probe per head: order is the promise that must never break.
 */
const SERVICE_CANDIDATES = `SELECT o.id,
    CASE o.kind WHEN 'push' THEN ${PUSH_URL} ELSE ${EVENT_URL} END AS url
  FROM outbox o INDEXED BY outbox_ready
  JOIN services s ON s.service_id = o.service_id
  WHERE o.service_id = ? AND o.status = 'pending' AND o.queue_head = 1 AND o.next_attempt_at <= ?
    AND NOT EXISTS (
      SELECT 1 FROM outbox e
      WHERE e.service_id = o.service_id AND e.device_id = o.device_id AND e.sequence < o.sequence
        AND e.queue_head >= 0)
  ORDER BY o.next_attempt_at, o.id
  LIMIT ?`;

interface LeasedRow extends OutboxRow {
  id: number;
  fencing_token: number;
  schedule_start: number;
}

/** Each connection's own level, read once: nothing else changes it after the connection is opened. */
const connectionSynchronous = new WeakMap<Sql, number>();

/**
 * Delivery bookkeeping commits without waiting for the disk. A process crash loses none of it (the
 * WAL is already the OS's); a power loss can lose the last claims and outcomes, and those messages
 * then go again under the same webhook-id, the duplicate DESIGN C allows after a crash. Messages
 * themselves are still recorded with the connection's full sync.
 */
function bookkeeping<T>(sql: Sql, work: () => T): T {
  let previous = connectionSynchronous.get(sql);
  if (previous === undefined) {
    previous = sql.one<{ synchronous: number }>('PRAGMA synchronous')?.synchronous ?? 2;
    connectionSynchronous.set(sql, previous);
  }
  sql.run('PRAGMA synchronous = NORMAL');
  try {
    return sql.write(work);
  } finally {
    sql.run(`PRAGMA synchronous = ${previous}`);
  }
}

function claimDeliveries(sql: Sql, request: ClaimRequest): ClaimedDelivery[] {
  return bookkeeping(sql, () => claim(sql, request));
}

/** One commit for a batch of outcomes and the claim that follows: a commit is most of their cost. */
function recordAndClaim(sql: Sql, attempts: AttemptRecord[], now: number, disableAfterFailingMs: number, request: ClaimRequest): RecordedAndClaimed {
  return bookkeeping(sql, () => ({ statuses: record(sql, attempts, now, disableAfterFailingMs), claimed: claim(sql, request) }));
}

function claim(sql: Sql, request: ClaimRequest): ClaimedDelivery[] {
  const { owner, now, leaseMs, limit, perEndpointLimit, inFlight } = request;
  // A crashed or stalled holder's attempt may still land: the new token makes its outcome void.
  sql.run(
    `UPDATE outbox SET status = 'pending', lease_owner = NULL, lease_expires_at = NULL, fencing_token = fencing_token + 1
     WHERE status = 'delivering' AND lease_expires_at <= ?`,
    now,
  );
  holdUndeliverable(sql);
  // Services whose first waiting head is oldest go first, each taking no more than its room.
  const services = sql
    .all<{ service_id: string; due: number }>(READY_SERVICES)
    .filter(({ service_id, due }) => due <= now && (inFlight[service_id] ?? 0) < perEndpointLimit)
    .sort((a, b) => a.due - b.due);
  const chosen: { id: number; url: string | null }[] = [];
  for (const { service_id } of services) {
    const room = Math.min(perEndpointLimit - (inFlight[service_id] ?? 0), limit - chosen.length);
    if (room <= 0) break;
    chosen.push(...sql.all<{ id: number; url: string | null }>(SERVICE_CANDIDATES, service_id, now, room));
  }
  if (chosen.length === 0) return [];
  const leased = sql.all<LeasedRow>(
    `UPDATE outbox SET status = 'delivering', lease_owner = ?, lease_expires_at = ?, fencing_token = fencing_token + 1
     WHERE id IN (SELECT value FROM json_each(?))
     RETURNING id, ${OUTBOX_COLUMNS}, fencing_token, schedule_start`,
    owner,
    now + leaseMs,
    JSON.stringify(chosen.map((c) => c.id)),
  );
  const byId = new Map(leased.map((row) => [row.id, row]));
  const secrets = new Map<string, string[]>();
  return chosen.map(({ id, url }): ClaimedDelivery => {
    const row = byId.get(id);
    // Held messages were set aside above, so every chosen one has a URL.
    if (!row || url === null) throw new Error(`Outbox row ${id} was chosen but not leased`);
    if (!secrets.has(row.service_id)) secrets.set(row.service_id, currentSecrets(sql, row.service_id, now));
    return {
      message: toMessage(row),
      fencingToken: row.fencing_token,
      scheduleAttempt: row.attempts - row.schedule_start + 1,
      url,
      secrets: secrets.get(row.service_id) ?? [],
    };
  });
}

function currentSecrets(sql: Sql, serviceId: string, now: number): string[] {
  return sql
    .all<{ secret: string }>(
      `SELECT secret FROM webhook_secrets WHERE service_id = ? AND (expires_at IS NULL OR expires_at > ?)
       ORDER BY created_at DESC, id DESC`,
      serviceId,
      now,
    )
    .map((row) => row.secret);
}

/**
 * Pending messages of services that cannot take them now become held. It runs at every claim while
 * an endpoint is disabled, so it seeks them in outbox_pending: outbox_open would also read
 * every message held before.
 */
function holdUndeliverable(sql: Sql): void {
  for (const endpoint of sql.all<EndpointRow>(`${ENDPOINTS} WHERE NOT (push_ok AND event_ok)`)) {
    sql.run(
      `UPDATE outbox SET status = 'held'
       WHERE service_id = ? AND status = 'pending' AND ((kind = 'push' AND ? = 0) OR (kind = 'event' AND ? = 0))`,
      endpoint.service_id,
      endpoint.push_ok,
      endpoint.event_ok,
    );
  }
}

function recordAttempts(sql: Sql, attempts: AttemptRecord[], now: number, disableAfterFailingMs: number): RecordedStatus[] {
  return bookkeeping(sql, () => record(sql, attempts, now, disableAfterFailingMs));
}

function record(sql: Sql, attempts: AttemptRecord[], now: number, disableAfterFailingMs: number): RecordedStatus[] {
  // Services whose failing streak a success of this batch ended, and no failure restarted since:
  // a run of successes clears it once, not once per message.
  const healthy = new Set<string>();
  const statuses = attempts.map((attempt) => {
    if (attempt.verdict.kind === 'delivered') return recordDelivered(sql, attempt, healthy);
    const { status, serviceId } = recordAttempt(sql, attempt, now, disableAfterFailingMs);
    if (serviceId) healthy.delete(serviceId);
    return status;
  });
  // An endpoint disabled above holds every pending message of its service, not only these.
  if (statuses.includes('held')) holdUndeliverable(sql);
  return statuses;
}

/**
 * The common case in three statements: the fenced update that closes the message (it was its
 * queue's head, so the flag goes with it), its attempt, and the next open message of its queue
 * made head (one probe of outbox_open, never the delivered history).
 */
function recordDelivered(sql: Sql, attempt: AttemptRecord, healthy: Set<string>): RecordedStatus {
  const row = sql.one<{ service_id: string; device_id: string; attempts: number }>(
    `UPDATE outbox SET status = 'delivered', attempts = attempts + 1, delivered_at = ?, lease_owner = NULL, lease_expires_at = NULL, queue_head = ${CLOSED}
     WHERE message_id = ? AND fencing_token = ? AND status = 'delivering'
     RETURNING service_id, device_id, attempts`,
    attempt.startedAt + attempt.durationMs,
    attempt.messageId,
    attempt.fencingToken,
  );
  if (!row) return 'fenced';
  insertAttempt(sql, attempt, row.attempts);
  sql.run(
    `UPDATE outbox SET queue_head = 1
     WHERE id = (SELECT id FROM outbox WHERE service_id = ? AND device_id = ? AND ${OPEN} ORDER BY sequence LIMIT 1)`,
    row.service_id,
    row.device_id,
  );
  if (!healthy.has(row.service_id)) {
    sql.run('UPDATE delivery_endpoints SET failing_since = NULL WHERE service_id = ? AND failing_since IS NOT NULL', row.service_id);
    healthy.add(row.service_id);
  }
  return 'delivered';
}

function insertAttempt(sql: Sql, attempt: AttemptRecord, number: number): void {
  sql.run(
    `INSERT INTO delivery_attempts (message_id, attempt, started_at, duration_ms, response_status, response_body, error)
     VALUES (?, ?, ?, ?, ?, ?, ?)`,
    attempt.messageId,
    number,
    attempt.startedAt,
    attempt.durationMs,
    attempt.responseStatus,
    attempt.responseBody,
    attempt.error,
  );
}

/** A failed attempt: the endpoint's health decides between a retry, held and failed; with the service it counted against. */
function recordAttempt(sql: Sql, attempt: AttemptRecord, now: number, disableAfterFailingMs: number): { status: RecordedStatus; serviceId?: string } {
  const row = sql.one<{ service_id: string; device_id: string; kind: string; attempts: number }>(
    `SELECT service_id, device_id, kind, attempts FROM outbox
     WHERE message_id = ? AND fencing_token = ? AND status = 'delivering'`,
    attempt.messageId,
    attempt.fencingToken,
  );
  if (!row) return { status: 'fenced' };
  const number = row.attempts + 1;
  insertAttempt(sql, attempt, number);
  const status = settle(sql, row.service_id, row.kind, attempt, now, disableAfterFailingMs);
  const { verdict } = attempt;
  const nextAttemptAt = verdict.kind === 'retry' ? verdict.nextAttemptAt : null;
  sql.run(
    `UPDATE outbox SET status = ?, attempts = ?, next_attempt_at = coalesce(?, next_attempt_at), delivered_at = NULL,
       lease_owner = NULL, lease_expires_at = NULL, queue_head = CASE WHEN ? = 'failed' THEN ${CLOSED} ELSE queue_head END
     WHERE message_id = ?`,
    status,
    number,
    nextAttemptAt,
    status,
    attempt.messageId,
  );
  // Failed, it no longer holds its queue back.
  if (status === 'failed') markHead(sql, row.service_id, row.device_id);
  return { status, serviceId: row.service_id };
}

/** The message's next status, updating its endpoint's health on the way. */
function settle(sql: Sql, serviceId: string, kind: string, attempt: AttemptRecord, now: number, disableAfterFailingMs: number): Exclude<RecordedStatus, 'fenced' | 'delivered'> {
  const { verdict } = attempt;
  if (verdict.kind === 'gone') {
    // A 410 from a URL the service left while the attempt was out: the new one is not gone.
    if (verdict.url !== currentUrl(sql, serviceId, kind)) return takesNow(sql, serviceId, kind) ? 'pending' : 'held';
    disableEndpoint(sql, serviceId, 'gone', now);
    return 'held';
  }
  const failing = sql.one<{ failing_since: number }>(
    `INSERT INTO delivery_endpoints (service_id, failing_since) VALUES (?, ?)
     ON CONFLICT (service_id) DO UPDATE SET failing_since = coalesce(failing_since, excluded.failing_since)
     RETURNING failing_since`,
    serviceId,
    attempt.startedAt,
  );
  if (failing && now - failing.failing_since >= disableAfterFailingMs) {
    disableEndpoint(sql, serviceId, 'failing', now);
    return 'held';
  }
  if (verdict.kind === 'exhausted') return 'failed';
  return takesNow(sql, serviceId, kind) ? 'pending' : 'held';
}

/** Whether the service can take a message of `kind` now. */
function takesNow(sql: Sql, serviceId: string, kind: string): boolean {
  const endpoint = sql.one<EndpointRow>(`${ENDPOINTS} WHERE service_id = ?`, serviceId);
  return Boolean(kind === 'push' ? endpoint?.push_ok : endpoint?.event_ok);
}

/** Where the service takes messages of `kind` now; null when nowhere. */
function currentUrl(sql: Sql, serviceId: string, kind: string): string | null {
  return (
    sql.one<{ url: string | null }>(
      `SELECT CASE ? WHEN 'push' THEN ${PUSH_URL} ELSE ${EVENT_URL} END AS url FROM services s WHERE s.service_id = ?`,
      kind,
      serviceId,
    )?.url ?? null
  );
}

/** The first reason stays: a 410 after days of failures is still "failing since". */
function disableEndpoint(sql: Sql, serviceId: string, reason: EndpointDisabledReason, now: number): void {
  sql.run(
    `INSERT INTO delivery_endpoints (service_id, disabled_at, disabled_reason) VALUES (?, ?, ?)
     ON CONFLICT (service_id) DO UPDATE SET disabled_at = coalesce(disabled_at, excluded.disabled_at),
       disabled_reason = coalesce(disabled_reason, excluded.disabled_reason)`,
    serviceId,
    now,
    reason,
  );
}

function getEndpointHealth(sql: Sql, serviceId: string): EndpointHealth | undefined {
  const row = sql.one<{ service_id: string; failing_since: number | null; disabled_at: number | null; disabled_reason: EndpointDisabledReason | null }>(
    `SELECT s.service_id, e.failing_since, e.disabled_at, e.disabled_reason
     FROM services s LEFT JOIN delivery_endpoints e ON e.service_id = s.service_id WHERE s.service_id = ?`,
    serviceId,
  );
  return row && { serviceId: row.service_id, failingSince: row.failing_since, disabledAt: row.disabled_at, disabledReason: row.disabled_reason };
}

function releaseHeld(sql: Sql, now: number, serviceId?: string): number {
  return sql.write(() => {
    let released = 0;
    const open = sql.all<EndpointRow>(`${ENDPOINTS} WHERE (push_ok OR event_ok) AND (? IS NULL OR service_id = ?)`, serviceId ?? null, serviceId ?? null);
    for (const endpoint of open) {
      const changed = sql.run(
        `UPDATE outbox SET status = 'pending', next_attempt_at = ?, schedule_start = attempts, queue_head = max(queue_head, 0)
         WHERE service_id = ? AND status = 'held' AND ((kind = 'push' AND ? = 1) OR (kind = 'event' AND ? = 1))`,
        now,
        endpoint.service_id,
        endpoint.push_ok,
        endpoint.event_ok,
      );
      // Those of the other kind may be parked behind one released.
      if (changed > 0) unpark(sql, endpoint.service_id);
      released += changed;
    }
    return notifyIf(sql, released);
  });
}

function outboxStats(sql: Sql): OutboxStats {
  // Each status in its own partial index: outbox_open leaves parked messages out.
  const rows = sql.all<{ status: 'pending' | 'delivering' | 'held'; n: number; oldest: number | null }>(
    `SELECT 'pending' AS status, count(*) AS n, min(created_at) AS oldest FROM outbox WHERE status = 'pending'
     UNION ALL SELECT 'delivering', count(*), min(created_at) FROM outbox WHERE status = 'delivering'
     UNION ALL SELECT 'held', count(*), min(created_at) FROM outbox WHERE status = 'held'`,
  );
  const count = (status: string) => rows.find((r) => r.status === status)?.n ?? 0;
  const open = rows.filter((r) => r.status !== 'held' && r.oldest !== null).map((r) => r.oldest!);
  return { pending: count('pending'), delivering: count('delivering'), held: count('held'), oldestPendingAt: open.length ? Math.min(...open) : null };
}

/**
 * The delivery area on SQLite: claims and outcomes of the one node. Written out, not bound by
 * `area()`: claims and outcomes are the dispatcher's hot path, and each stays one direct call.
 */
export function sqliteDelivery(sql: Sql): DeliveryArea {
  return {
    claimDeliveries: async (request) => claimDeliveries(sql, request),
    recordAttempts: async (attempts, now, disableAfterFailingMs) => recordAttempts(sql, attempts, now, disableAfterFailingMs),
    recordAndClaim: async (attempts, now, disableAfterFailingMs, request) => recordAndClaim(sql, attempts, now, disableAfterFailingMs, request),
    getEndpointHealth: async (serviceId) => getEndpointHealth(sql, serviceId),
    releaseHeld: async (now, serviceId) => releaseHeld(sql, now, serviceId),
    outboxStats: async () => outboxStats(sql),
  };
}
