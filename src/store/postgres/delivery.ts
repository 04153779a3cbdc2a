/**
 * Delivery (DESIGN C, F): leases, outcomes, endpoint health and held messages, for any number of
 * dispatchers on one database. The rules are on DeliveryStore; what is PostgreSQL's own is how
 * nodes share the outbox: claims lock with FOR UPDATE SKIP LOCKED, so two nodes never lease one
 * message and neither waits for the other, and outcomes lock the message they settle. A claim
 * judges order by what had committed when it began: a message an admin resends meanwhile may be
 * overtaken by a later one of its device (a resend is a repeat out of order anyway).
 */
import type {
  AttemptRecord,
  ClaimedDelivery,
  ClaimRequest,
  EndpointDisabledReason,
  EndpointHealth,
  MessageKind,
  OutboxMessage,
  OutboxStats,
  RecordedStatus,
} from '../store.js';
import type { Sql } from './database.js';
import { notifyDue } from './notify.js';

/** A message that is neither delivered nor failed: it holds back the later ones of its (service, device). */
const OPEN = `status IN ('pending', 'delivering', 'held')`;

/** Per service: whether its push and its event messages can go out now. */
const ENDPOINTS = `(SELECT s.service_id,
    s.enabled AND e.disabled_at IS NULL AND s.callback_url IS NOT NULL AS push_ok,
    s.enabled AND e.disabled_at IS NULL AND coalesce(s.event_callback_url, s.callback_url) IS NOT NULL AS event_ok
  FROM services s LEFT JOIN delivery_endpoints e ON e.service_id = s.service_id)`;

/**
 * Bookkeeping of delivery commits without waiting for the disk. A crash of PostgreSQL may lose the
 * last claims and outcomes; those messages then go again under the same webhook-id, the duplicate
 * DESIGN C allows after a crash. Messages themselves are recorded with full durability.
 */
async function bookkeeping<T>(sql: Sql, work: (tx: Sql) => Promise<T>): Promise<T> {
  return sql.transaction(async (tx) => {
    await tx.run('SET LOCAL synchronous_commit = off');
    return work(tx);
  });
}

/**
 * Due messages first in their (service, device) order, of services that can take them and have
 * room, oldest due first, as many as the batch takes; a service with only some room left takes
 * that much of it. Then those not locked by another node's claim are leased.
 */
const CLAIM = `WITH busy AS (
    SELECT key AS service_id, value::integer AS n FROM jsonb_each_text($2::jsonb)
  ), heads AS (
    SELECT o.id, o.service_id, o.next_attempt_at
    FROM outbox o
    JOIN ${ENDPOINTS} c ON c.service_id = o.service_id AND CASE o.kind WHEN 'push' THEN c.push_ok ELSE c.event_ok END
    WHERE o.status = 'pending' AND o.next_attempt_at <= $1
      AND o.service_id NOT IN (SELECT service_id FROM busy WHERE n >= $3)
      AND NOT EXISTS (
        SELECT 1 FROM outbox e
        WHERE e.service_id = o.service_id AND e.device_id = o.device_id AND e.sequence < o.sequence AND e.${OPEN})
    ORDER BY o.next_attempt_at, o.id
    LIMIT $4
  ), chosen AS (
    SELECT h.id, row_number() OVER (ORDER BY h.next_attempt_at, h.id) AS rank,
           row_number() OVER (PARTITION BY h.service_id ORDER BY h.next_attempt_at, h.id) + coalesce(b.n, 0) AS place
    FROM heads h LEFT JOIN busy b ON b.service_id = h.service_id
  ), locked AS (
    SELECT o.id, c.rank FROM outbox o JOIN chosen c ON c.id = o.id
    WHERE c.place <= $3 AND o.status = 'pending'
    FOR UPDATE OF o SKIP LOCKED
  )
  UPDATE outbox o SET status = 'delivering', lease_owner = $5, lease_expires_at = $6, fencing_token = o.fencing_token + 1
  FROM locked l, services s
  WHERE o.id = l.id AND s.service_id = o.service_id
  RETURNING l.rank, o.message_id AS "messageId", o.service_id AS "serviceId", o.device_id AS "deviceId", o.kind,
    o.push_type AS "pushType", o.sequence, o.body, o.status, o.attempts, o.created_at AS "createdAt",
    o.next_attempt_at AS "nextAttemptAt", o.delivered_at AS "deliveredAt",
    o.fencing_token AS "fencingToken", o.attempts - o.schedule_start + 1 AS "scheduleAttempt",
    CASE o.kind WHEN 'push' THEN s.callback_url ELSE coalesce(s.event_callback_url, s.callback_url) END AS url,
    ARRAY(SELECT w.secret FROM webhook_secrets w WHERE w.service_id = o.service_id AND (w.expires_at IS NULL OR w.expires_at > $1)
          ORDER BY w.created_at DESC, w.id DESC) AS secrets`;

interface LeasedRow extends OutboxMessage {
  rank: string;
  fencingToken: number;
  scheduleAttempt: number;
  url: string;
  secrets: string[];
}

export async function claimDeliveries(sql: Sql, request: ClaimRequest): Promise<ClaimedDelivery[]> {
  const { owner, now, leaseMs, limit, perEndpointLimit, inFlight } = request;
  return bookkeeping(sql, async (tx) => {
    // A crashed or stalled holder's attempt may still land: the new token makes its outcome void.
    await tx.run(
      `UPDATE outbox SET status = 'pending', lease_owner = NULL, lease_expires_at = NULL, fencing_token = fencing_token + 1
       WHERE id IN (SELECT id FROM outbox WHERE status = 'delivering' AND lease_expires_at <= $1 FOR UPDATE SKIP LOCKED)`,
      now,
    );
    await holdUndeliverable(tx);
    const leased = await tx.all<LeasedRow>(CLAIM, now, JSON.stringify(inFlight), perEndpointLimit, limit, owner, now + leaseMs);
    // The statement returns rows in no particular order; rank is the claim's order (a bigint, as text).
    leased.sort((a, b) => Number(a.rank) - Number(b.rank));
    return leased.map(({ rank, fencingToken, scheduleAttempt, url, secrets, ...message }) => ({ message, fencingToken, scheduleAttempt, url, secrets }));
  });
}

/** Pending messages of services that cannot take them now become held (rows another node holds are its to judge). */
async function holdUndeliverable(sql: Sql): Promise<void> {
  await sql.run(
    `UPDATE outbox SET status = 'held' WHERE id IN (
       SELECT o.id FROM outbox o JOIN ${ENDPOINTS} c ON c.service_id = o.service_id
       WHERE o.status = 'pending' AND NOT (CASE o.kind WHEN 'push' THEN c.push_ok ELSE c.event_ok END)
       FOR UPDATE OF o SKIP LOCKED)`,
  );
}

export async function recordAttempts(sql: Sql, attempts: AttemptRecord[], now: number, disableAfterFailingMs: number): Promise<RecordedStatus[]> {
  return bookkeeping(sql, async (tx) => {
    const statuses: RecordedStatus[] = [];
    // In order: an earlier outcome may disable the endpoint a later one is judged by.
    for (const attempt of attempts) statuses.push(await recordAttempt(tx, attempt, now, disableAfterFailingMs));
    // An endpoint disabled above holds every pending message of its service, not only these.
    if (statuses.includes('held')) await holdUndeliverable(tx);
    return statuses;
  });
}

async function recordAttempt(tx: Sql, attempt: AttemptRecord, now: number, disableAfterFailingMs: number): Promise<RecordedStatus> {
  // Locked: a claim taking back an expired lease waits for this outcome, then finds it settled.
  const row = await tx.one<{ serviceId: string; kind: MessageKind; attempts: number }>(
    `SELECT service_id AS "serviceId", kind, attempts FROM outbox
     WHERE message_id = $1 AND fencing_token = $2 AND status = 'delivering' FOR UPDATE`,
    attempt.messageId,
    attempt.fencingToken,
  );
  if (!row) return 'fenced';
  const number = row.attempts + 1;
  await tx.run(
    `INSERT INTO delivery_attempts (message_id, attempt, started_at, duration_ms, response_status, response_body, error)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    attempt.messageId,
    number,
    attempt.startedAt,
    attempt.durationMs,
    attempt.responseStatus,
    attempt.responseBody,
    attempt.error,
  );
  const status = await settle(tx, row.serviceId, row.kind, attempt, now, disableAfterFailingMs);
  const { verdict } = attempt;
  await tx.run(
    `UPDATE outbox SET status = $1, attempts = $2, next_attempt_at = coalesce($3, next_attempt_at), delivered_at = $4,
       lease_owner = NULL, lease_expires_at = NULL
     WHERE message_id = $5`,
    status,
    number,
    verdict.kind === 'retry' ? verdict.nextAttemptAt : null,
    status === 'delivered' ? attempt.startedAt + attempt.durationMs : null,
    attempt.messageId,
  );
  return status;
}

/** The message's next status, updating its endpoint's health on the way. */
async function settle(
  tx: Sql,
  serviceId: string,
  kind: MessageKind,
  attempt: AttemptRecord,
  now: number,
  disableAfterFailingMs: number,
): Promise<Exclude<RecordedStatus, 'fenced'>> {
  const { verdict } = attempt;
  if (verdict.kind === 'delivered') {
    await tx.run('UPDATE delivery_endpoints SET failing_since = NULL WHERE service_id = $1 AND failing_since IS NOT NULL', serviceId);
    return 'delivered';
  }
  if (verdict.kind === 'gone') {
    await disableEndpoint(tx, serviceId, 'gone', now);
    return 'held';
  }
  const failing = await tx.one<{ failingSince: number }>(
    `INSERT INTO delivery_endpoints AS d (service_id, failing_since) VALUES ($1, $2)
     ON CONFLICT (service_id) DO UPDATE SET failing_since = coalesce(d.failing_since, EXCLUDED.failing_since)
     RETURNING failing_since AS "failingSince"`,
    serviceId,
    attempt.startedAt,
  );
  if (failing && now - failing.failingSince >= disableAfterFailingMs) {
    await disableEndpoint(tx, serviceId, 'failing', now);
    return 'held';
  }
  if (verdict.kind === 'exhausted') return 'failed';
  const endpoint = await tx.one<{ ok: boolean }>(
    `SELECT CASE $2 WHEN 'push' THEN push_ok ELSE event_ok END AS ok FROM ${ENDPOINTS} c WHERE service_id = $1`,
    serviceId,
    kind,
  );
  return endpoint?.ok ? 'pending' : 'held';
}

/** The first reason stays: a 410 after days of failures is still "failing since". */
async function disableEndpoint(tx: Sql, serviceId: string, reason: EndpointDisabledReason, now: number): Promise<void> {
  await tx.run(
    `INSERT INTO delivery_endpoints AS d (service_id, disabled_at, disabled_reason) VALUES ($1, $2, $3)
     ON CONFLICT (service_id) DO UPDATE SET disabled_at = coalesce(d.disabled_at, EXCLUDED.disabled_at),
       disabled_reason = coalesce(d.disabled_reason, EXCLUDED.disabled_reason)`,
    serviceId,
    now,
    reason,
  );
}

export async function getEndpointHealth(sql: Sql, serviceId: string): Promise<EndpointHealth | undefined> {
  return sql.one<EndpointHealth>(
    `SELECT s.service_id AS "serviceId", e.failing_since AS "failingSince", e.disabled_at AS "disabledAt", e.disabled_reason AS "disabledReason"
     FROM services s LEFT JOIN delivery_endpoints e ON e.service_id = s.service_id WHERE s.service_id = $1`,
    serviceId,
  );
}

export async function enableEndpoint(sql: Sql, serviceId: string, now: number): Promise<number> {
  return sql.transaction(async (tx) => {
    await tx.run('DELETE FROM delivery_endpoints WHERE service_id = $1', serviceId);
    return releaseHeld(tx, now, serviceId);
  });
}

/** Back to pending, due now, each schedule started over: the held messages that can go out again. */
export async function releaseHeld(sql: Sql, now: number, serviceId?: string): Promise<number> {
  return sql.transaction(async (tx) => {
    const released = await tx.run(
      `UPDATE outbox o SET status = 'pending', next_attempt_at = $1, schedule_start = o.attempts
       FROM ${ENDPOINTS} c
       WHERE c.service_id = o.service_id AND o.status = 'held' AND ($2::text IS NULL OR o.service_id = $2)
         AND CASE o.kind WHEN 'push' THEN c.push_ok ELSE c.event_ok END`,
      now,
      serviceId ?? null,
    );
    if (released > 0) await notifyDue(tx);
    return released;
  });
}

export async function outboxStats(sql: Sql): Promise<OutboxStats> {
  const row = await sql.one<OutboxStats>(
    `SELECT count(*) FILTER (WHERE status = 'pending')::integer AS pending,
            count(*) FILTER (WHERE status = 'delivering')::integer AS delivering,
            count(*) FILTER (WHERE status = 'held')::integer AS held,
            min(created_at) FILTER (WHERE status <> 'held') AS "oldestPendingAt"
     FROM outbox WHERE ${OPEN}`,
  );
  return row ?? { pending: 0, delivering: 0, held: 0, oldestPendingAt: null };
}
