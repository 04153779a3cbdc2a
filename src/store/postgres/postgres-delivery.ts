/**
 * Delivery (DESIGN C, F): leases, outcomes, endpoint health and held messages, for any number of
 * dispatchers on one database. The rules are on DeliveryArea (areas/delivery.ts); what is PostgreSQL's own is how
 * nodes share the outbox: claims lock with FOR UPDATE SKIP LOCKED, so two nodes never lease one
 * message and neither waits for the other, and outcomes lock the message they settle. A claim
 * judges order by what had committed when it began: a message an admin resends meanwhile may be
 * overtaken by a later one of its device (a resend is a repeat out of order anyway).
 *
 * Locks go in one order (issue 12): a device's rows, its queues' rows of message_sequences in key
 * order, then messages. An outcome locks the messages it settles before their queues, but those are
 * in flight, which nothing waits for while it holds a queue's row; a claim never waits for a queue's
 * row at all. Only an admin's resend or recover, marking heads under its queues' rows, can still meet
 * outcomes and reports in a cycle: PostgreSQL aborts one, and the store runs it again (database.ts).
 */
import type { OutboxMessage } from '../../core/model.js';
import type { AttemptRecord, ClaimedDelivery, ClaimRequest, EndpointHealth, OutboxStats, RecordedAndClaimed, RecordedStatus } from '../areas/delivery.js';
import { area, type Sql } from './database.js';
import { notifyDue } from './postgres-notify.js';
import { firstOpenOf, OPEN } from './postgres-outbox.js';
import type { DeliveryArea } from '../areas/delivery.js';

/** Per service: whether its push and its event messages can go out now. */
const ENDPOINTS = `(SELECT s.service_id,
    s.enabled AND e.disabled_at IS NULL AND s.callback_url IS NOT NULL AS push_ok,
    s.enabled AND e.disabled_at IS NULL AND coalesce(s.event_callback_url, s.callback_url) IS NOT NULL AS event_ok
  FROM services s LEFT JOIN delivery_endpoints e ON e.service_id = s.service_id)`;

/**
 * A test of the status of messages found by another key (their id, their lease's expiry), written so
 * that no partial index's predicate matches it. With a long delivered history, statistics make
 * pending and delivering messages look rare, and the planner chose to find them by walking every open
 * message (outbox_open), once per head claimed: claims 0.3 × as fast as without history (issue 12).
 */
const RECHECK = (test: string) => `(${test}) IS TRUE`;

/**
 * Bookkeeping of delivery commits without waiting for the disk. Each delivery statement reads this
 * as its CTE `async_commit`: the setting lasts until the statement's own (implicit) transaction
 * commits, so each is one round trip, without BEGIN, SET LOCAL and COMMIT. A crash of PostgreSQL may
 * lose the last claims and outcomes; those messages then go again under the same webhook-id, the
 * duplicate DESIGN C allows after a crash. Messages themselves are recorded with full durability.
 */
const ASYNC_COMMIT = `SELECT set_config('synchronous_commit', 'off', true)`;

/**
 * A message `o` just leased, with its service `s`, as a ClaimedDelivery's parts (columns named as
 * OutboxMessage's fields): the secrets valid at `now`.
 */
const LEASED = (now: string) => `o.message_id AS "messageId", o.service_id AS "serviceId", o.device_id AS "deviceId", o.kind,
    o.push_type AS "pushType", o.sequence, o.body, o.status, o.attempts, o.created_at AS "createdAt",
    o.next_attempt_at AS "nextAttemptAt", o.delivered_at AS "deliveredAt",
    o.fencing_token AS "fencingToken", o.attempts - o.schedule_start + 1 AS "scheduleAttempt",
    CASE o.kind WHEN 'push' THEN s.callback_url ELSE coalesce(s.event_callback_url, s.callback_url) END AS url,
    ARRAY(SELECT w.secret FROM webhook_secrets w WHERE w.service_id = o.service_id AND (w.expires_at IS NULL OR w.expires_at > ${now})
          ORDER BY w.created_at DESC, w.id DESC) AS secrets`;

/**
 * Per service that can take messages and has room, its waiting queue heads due now, oldest due
 * first, as many as its room (one seek of outbox_ready each, never what waits behind a head); of
 * all those, the oldest due as many as the batch takes. Each head's order is checked again (one
 * probe of outbox_open: it is its queue's first open message): order is the promise that must never
 * break. Then those not locked by another node's claim are leased.
 *
 * In the same round trip, leases that expired go back to pending (a crashed or stalled holder's
 * attempt may still land, and the new token makes its outcome void), and the statement answers what
 * else a claim must see to: whether some queue is headless, and which services that cannot take
 * messages have some pending (one probe each: as EXISTS, the planner made it a join over every
 * pending message). What those chores make claimable, this statement's snapshot cannot show: see
 * claimDeliveries. Every row carries the answers, and there is one at least: a row without a rank leased nothing.
 */
const CLAIM = `WITH async_commit AS (${ASYNC_COMMIT}), expired AS (
    UPDATE outbox SET status = 'pending', lease_owner = NULL, lease_expires_at = NULL, fencing_token = fencing_token + 1
    FROM async_commit
    WHERE id IN (SELECT id FROM outbox WHERE lease_expires_at <= $1 AND ${RECHECK("status = 'delivering'")} FOR UPDATE SKIP LOCKED)
    RETURNING 1
  ), busy AS (
    SELECT key AS service_id, value::integer AS n FROM jsonb_each_text($2::jsonb)
  ), open_services AS (
    SELECT c.service_id, c.push_ok, c.event_ok, $3 - coalesce(b.n, 0) AS room
    FROM ${ENDPOINTS} c LEFT JOIN busy b ON b.service_id = c.service_id
    WHERE (c.push_ok OR c.event_ok) AND coalesce(b.n, 0) < $3
  ), heads AS (
    SELECT h.id, h.next_attempt_at
    FROM open_services c CROSS JOIN LATERAL (
      SELECT o.id, o.next_attempt_at FROM outbox o
      WHERE o.service_id = c.service_id AND o.status = 'pending' AND o.queue_head AND o.next_attempt_at <= $1
        AND CASE o.kind WHEN 'push' THEN c.push_ok ELSE c.event_ok END
        -- A subquery, not NOT EXISTS: planned as an anti-join, it was walking the whole service's queues per head.
        AND o.sequence = (SELECT min(e.sequence) FROM outbox e WHERE e.service_id = o.service_id AND e.device_id = o.device_id AND e.${OPEN})
      ORDER BY o.next_attempt_at, o.id
      LIMIT c.room) h
    ORDER BY h.next_attempt_at, h.id
    LIMIT $4
  ), ranked AS (
    SELECT id, row_number() OVER (ORDER BY next_attempt_at, id) AS rank FROM heads
  ), locked AS (
    SELECT o.id, r.rank FROM outbox o JOIN ranked r ON r.id = o.id
    WHERE ${RECHECK("o.status = 'pending'")}
    FOR UPDATE OF o SKIP LOCKED
  ), leased AS (
  UPDATE outbox o SET status = 'delivering', lease_owner = $5, lease_expires_at = $6, fencing_token = o.fencing_token + 1
  FROM locked l, services s, async_commit
  WHERE o.id = l.id AND s.service_id = o.service_id
  RETURNING l.rank, ${LEASED('$1')}
  ), chores AS (
    SELECT (SELECT count(*) FROM expired)::integer AS expired, EXISTS (SELECT 1 FROM message_sequences WHERE headless) AS headless,
      ARRAY(SELECT c.service_id FROM ${ENDPOINTS} c
            CROSS JOIN LATERAL (SELECT 1 FROM outbox o WHERE o.service_id = c.service_id AND o.status = 'pending' LIMIT 1) waiting
            WHERE NOT (c.push_ok AND c.event_ok)) AS unable
  )
  SELECT row_to_json(c) AS chores, l.* FROM chores c LEFT JOIN leased l ON true`;

/** What a claim found to do besides leasing. */
interface Chores {
  /** Leases it took back. */
  expired: number;
  headless: boolean;
  /** Services that cannot take their pending messages. */
  unable: string[];
}

type ClaimRow = { chores: Chores } & ((OutboxMessage & { rank: string; fencingToken: number; scheduleAttempt: number; url: string; secrets: string[] }) | { rank: null });

/**
 * Headless queues get their head: the first open message of each queue a record left headless. The
 * queues are locked in one statement and their heads found in the next, in one transaction: the
 * second's snapshot is taken under the locks, so it sees every settle and insert of those queues,
 * which all lock the queue's row. Found in the statement that locked them, from its snapshot taken
 * before the locks, a head could be a message another node had meanwhile promoted, leased and
 * delivered: promoted again, delivered, it was a head nothing would ever claim (the chaos run on
 * PostgreSQL, issue 12).
 *
 * A queue whose row another transaction holds (a report recording into it, an outcome settling it)
 * stays headless for the next claim. Waiting for it, a claim holding other queues' rows, taken in
 * the order they lie on disk, deadlocked with reports taking theirs in key order (issue 12).
 */
const LOCK_HEADLESS = `WITH async_commit AS (${ASYNC_COMMIT})
  UPDATE message_sequences SET headless = false FROM async_commit
  WHERE (service_id, device_id) IN (SELECT service_id, device_id FROM message_sequences WHERE headless FOR UPDATE SKIP LOCKED)
  RETURNING service_id AS "serviceId", device_id AS "deviceId"`;

const PROMOTE = `UPDATE outbox o SET queue_head = true
  FROM (SELECT ${firstOpenOf('q')} AS id FROM unnest($1::text[], $2::text[]) AS q (service_id, device_id)) f
  WHERE o.id = f.id AND NOT o.queue_head`;

async function repairHeads(sql: Sql): Promise<void> {
  await sql.transaction(async (tx) => {
    const queues = await tx.all<{ serviceId: string; deviceId: string }>(LOCK_HEADLESS);
    if (queues.length === 0) return;
    await tx.run(PROMOTE, queues.map((q) => q.serviceId), queues.map((q) => q.deviceId));
  });
}

/**
 * One statement while there is nothing to see to (the usual case, at every claim): it takes back
 * expired leases and leases what is due. Otherwise the chores follow, each atomic on its own and safe
 * to repeat and to interleave with another node's claim (a repair and a hold are transactions of their
 * own), and then, when leases came back or queues got their heads, a second claim with the room left.
 */
async function claimDeliveries(sql: Sql, request: ClaimRequest): Promise<ClaimedDelivery[]> {
  const { claimed, chores } = await lease(sql, request);
  if (chores.headless) await repairHeads(sql);
  if (chores.unable.length > 0) await hold(sql, chores.unable);
  const room = request.limit - claimed.length;
  if ((chores.expired === 0 && !chores.headless) || room === 0) return claimed;
  const inFlight = { ...request.inFlight };
  for (const { message } of claimed) inFlight[message.serviceId] = (inFlight[message.serviceId] ?? 0) + 1;
  return [...claimed, ...(await lease(sql, { ...request, limit: room, inFlight })).claimed];
}

async function lease(sql: Sql, request: ClaimRequest): Promise<{ claimed: ClaimedDelivery[]; chores: Chores }> {
  const { owner, now, leaseMs, limit, perEndpointLimit, inFlight } = request;
  const rows = await sql.all<ClaimRow>(CLAIM, now, JSON.stringify(inFlight), perEndpointLimit, limit, owner, now + leaseMs);
  const leased = rows.flatMap((row) => (row.rank === null ? [] : [row]));
  // The statement returns rows in no particular order; rank is the claim's order (a bigint, as text).
  leased.sort((a, b) => Number(a.rank) - Number(b.rank));
  const claimed = leased.map(({ rank, chores, fencingToken, scheduleAttempt, url, secrets, ...message }) => ({ message, fencingToken, scheduleAttempt, url, secrets }));
  return { claimed, chores: rows[0]!.chores };
}

/**
 * Pending messages of services that cannot take them now become held (rows another node holds are its
 * to judge). Services are judged first, on their own (a claim judges them as it leases): while every
 * one can take its messages, or those that cannot have nothing pending, that is all.
 *
 * Otherwise the services are locked (FOR SHARE) and judged again before their messages are held, in
 * one transaction: whoever makes a service able again (updateService) writes its row, so it waits
 * for a hold in flight to commit, and the release after it sees what that hold held. Without
 * the lock, a release running beside a hold missed the messages being held, and they waited for the
 * next sweep.
 */
async function holdUndeliverable(sql: Sql): Promise<void> {
  const unable = await sql.all<{ serviceId: string }>(
    `SELECT c.service_id AS "serviceId" FROM ${ENDPOINTS} c
     CROSS JOIN LATERAL (SELECT 1 FROM outbox o WHERE o.service_id = c.service_id AND o.status = 'pending' LIMIT 1) waiting
     WHERE NOT (c.push_ok AND c.event_ok)`,
  );
  if (unable.length > 0) await hold(sql, unable.map((u) => u.serviceId));
}

/** Holds the pending messages that `serviceIds`, judged unable to take them, still cannot take once locked. */
async function hold(sql: Sql, serviceIds: string[]): Promise<void> {
  await sql.transaction(async (tx) => {
    await tx.run('SELECT 1 FROM services WHERE service_id = ANY($1::text[]) ORDER BY service_id FOR SHARE', serviceIds);
    // LATERAL, so that a service's messages are read only once it is judged unable to take them.
    await tx.run(
      `WITH async_commit AS (${ASYNC_COMMIT})
       UPDATE outbox SET status = 'held' FROM async_commit WHERE id IN (
         SELECT m.id FROM ${ENDPOINTS} c CROSS JOIN LATERAL (
           SELECT o.id FROM outbox o
           WHERE o.service_id = c.service_id AND o.status = 'pending' AND NOT (CASE o.kind WHEN 'push' THEN c.push_ok ELSE c.event_ok END)
           FOR UPDATE OF o SKIP LOCKED) m
         WHERE NOT (c.push_ok AND c.event_ok))`,
    );
  });
}

/**
 * Every outcome of a batch in one statement (STYLE habit 8), with the rules of DeliveryArea. Each
 * message's lease is locked and checked: a claim taking back an expired lease waits for this, then
 * finds it settled; an outcome under another token is fenced. The endpoint's health is walked in
 * the batch's order within each service, as if the outcomes came one by one: a success clears the
 * failing time, a failure starts it (after the last success of the batch, or where it stood before),
 * and an outcome after one that disabled the endpoint finds it disabled. A message delivered or
 * failed leaves its queue: the queue counts one open message fewer (its row locked in key order, as
 * inserts lock them), and where some are still open, the first this statement sees becomes its head.
 * Those it does not see were inserted after it began, and so numbered after those it sees: each insert
 * takes its numbers under the queue's row lock and holds it until it commits. Where it sees none (a
 * message inserted while it waited for the queue's lock), or its head changed meanwhile, the queue is
 * marked headless, for the next claim to give it its head (LOCK_HEADLESS); marked in the same commit
 * as the outcome, a headless queue survives any crash. Before, every settle left its queue headless:
 * each claim then repaired heads in a transaction of its own, four round trips more per batch.
 * Given a lease owner ($12, from recordAndClaim), a new head that can go out now is leased in the
 * same update that makes it head: as many per service as its outcomes here freed slots, at most.
 */
const RECORD = `WITH async_commit AS (${ASYNC_COMMIT}), input AS (
    SELECT * FROM unnest($1::text[], $2::integer[], $3::double precision[], $4::double precision[], $5::integer[],
                         $6::text[], $7::text[], $8::text[], $9::double precision[], $14::text[])
      WITH ORDINALITY AS i (message_id, fencing_token, started_at, duration_ms, response_status, response_body, error, verdict, next_attempt_at, gone_url, pos)
  ), leased AS (
    SELECT o.id, o.message_id, o.fencing_token, o.service_id, o.device_id, o.kind, o.attempts FROM outbox o
    WHERE o.message_id = ANY($1::text[]) AND ${RECHECK("o.status = 'delivering'")}
    FOR UPDATE
  ), outcomes AS (
    SELECT DISTINCT ON (i.message_id) i.*, l.id, l.service_id, l.device_id, l.kind, l.attempts + 1 AS attempt, i.verdict IN ('retry', 'exhausted') AS failed
    FROM input i JOIN leased l ON l.message_id = i.message_id AND l.fencing_token = i.fencing_token
    ORDER BY i.message_id, i.pos
  ), walked AS (
    SELECT o.*, e.failing_since AS failing_before,
           count(*) FILTER (WHERE o.verdict = 'delivered') OVER (PARTITION BY o.service_id ORDER BY o.pos) AS successes
    FROM outcomes o LEFT JOIN delivery_endpoints e ON e.service_id = o.service_id
  ), failing AS (
    SELECT w.*, CASE WHEN w.failed THEN coalesce(
             CASE WHEN w.successes = 0 THEN w.failing_before END,
             (array_agg(w.started_at) FILTER (WHERE w.failed) OVER (PARTITION BY w.service_id, w.successes ORDER BY w.pos))[1]) END AS failing_since
    FROM walked w
  ), disabling AS (
    -- A 410 from a URL the service left while the attempt was out disables nothing: the message goes again, to the new one.
    SELECT f.*, CASE
        WHEN f.verdict = 'gone' AND f.gone_url = CASE f.kind WHEN 'push' THEN s.callback_url ELSE coalesce(s.event_callback_url, s.callback_url) END THEN 'gone'
        WHEN $10 - f.failing_since >= $11 THEN 'failing' END AS disables
    FROM failing f JOIN services s ON s.service_id = f.service_id
  ), judged AS (
    SELECT d.*, CASE
        WHEN d.verdict = 'delivered' THEN 'delivered'
        WHEN d.disables IS NOT NULL THEN 'held'
        WHEN d.verdict = 'exhausted' THEN 'failed'
        WHEN CASE d.kind WHEN 'push' THEN c.push_ok ELSE c.event_ok END
             AND NOT coalesce(bool_or(d.disables IS NOT NULL) OVER (PARTITION BY d.service_id ORDER BY d.pos ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), false)
          THEN 'pending'
        ELSE 'held' END AS status
    FROM disabling d JOIN ${ENDPOINTS} c ON c.service_id = d.service_id
  ), attempts AS (
    INSERT INTO delivery_attempts (message_id, attempt, started_at, duration_ms, response_status, response_body, error)
    SELECT message_id, attempt, started_at, duration_ms, response_status, response_body, error FROM judged
  ), settled AS (
    UPDATE outbox o SET status = j.status, attempts = j.attempt, next_attempt_at = coalesce(j.next_attempt_at, o.next_attempt_at),
      delivered_at = CASE j.status WHEN 'delivered' THEN j.started_at + j.duration_ms END, lease_owner = NULL, lease_expires_at = NULL,
      queue_head = o.queue_head AND j.status NOT IN ('delivered', 'failed')
    FROM judged j WHERE o.id = j.id
  ), closed AS (
    SELECT service_id, device_id, count(*) AS n FROM judged WHERE status IN ('delivered', 'failed') GROUP BY service_id, device_id
  ), queue_locks AS MATERIALIZED (
    SELECT q.service_id, q.device_id, c.n FROM message_sequences q JOIN closed c ON c.service_id = q.service_id AND c.device_id = q.device_id
    ORDER BY q.service_id, q.device_id
    FOR UPDATE OF q
  ), next_heads AS MATERIALIZED (
    -- Skipped when another transaction holds it (an admin's resend): then the next claim repairs the queue, and none waits in a cycle.
    SELECT o.id, l.service_id, l.device_id, o.status, o.next_attempt_at, o.kind
    FROM queue_locks l CROSS JOIN LATERAL (
      SELECT e.id FROM outbox e
      WHERE e.service_id = l.service_id AND e.device_id = l.device_id AND e.${OPEN}
        AND e.id NOT IN (SELECT id FROM judged WHERE status IN ('delivered', 'failed'))
      ORDER BY e.sequence LIMIT 1) f
    JOIN outbox o ON o.id = f.id
    WHERE ${RECHECK("o.status IN ('pending', 'held')")}
    FOR UPDATE OF o SKIP LOCKED
  ), next_leases AS (
    -- Given a lease owner ($12), each new head that can go out now goes in this statement, leased as a claim would lease it;
    -- not to a service an outcome of this batch disabled.
    SELECT h.id, $12::text IS NOT NULL AND h.status = 'pending' AND h.next_attempt_at <= $10
        AND CASE h.kind WHEN 'push' THEN c.push_ok ELSE c.event_ok END
        AND h.service_id NOT IN (SELECT service_id FROM judged WHERE disables IS NOT NULL) AS leases
    FROM next_heads h JOIN ${ENDPOINTS} c ON c.service_id = h.service_id
  ), promoted AS (
    UPDATE outbox o SET queue_head = true,
      status = CASE WHEN n.leases THEN 'delivering' ELSE o.status END,
      lease_owner = CASE WHEN n.leases THEN $12 ELSE o.lease_owner END,
      lease_expires_at = CASE WHEN n.leases THEN $13::double precision ELSE o.lease_expires_at END,
      fencing_token = o.fencing_token + CASE WHEN n.leases THEN 1 ELSE 0 END
    FROM next_leases n, services s
    WHERE o.id = n.id AND s.service_id = o.service_id AND (n.leases OR NOT o.queue_head)
    RETURNING n.leases, ${LEASED('$10')}
  ), counted AS (
    -- NOT IN, a hashed subplan: as a join, estimated at one row each, it compared every queue with every head.
    UPDATE message_sequences q SET open_messages = q.open_messages - l.n,
      headless = q.open_messages - l.n > 0 AND (l.service_id, l.device_id) NOT IN (SELECT service_id, device_id FROM next_heads)
    FROM queue_locks l
    WHERE q.service_id = l.service_id AND q.device_id = l.device_id
  ), health AS (
    -- Each service as its last outcome left it: a 410 moves the failing time neither way; the first reason to disable stays.
    SELECT j.service_id, (array_agg(j.disables ORDER BY j.pos) FILTER (WHERE j.disables IS NOT NULL))[1] AS disabled_reason,
           CASE WHEN bool_or(j.verdict <> 'gone') THEN (array_agg(j.failing_since ORDER BY j.pos DESC) FILTER (WHERE j.verdict <> 'gone'))[1]
                ELSE min(j.failing_before) END AS failing_since
    FROM judged j GROUP BY j.service_id
  ), endpoints AS (
    INSERT INTO delivery_endpoints AS d (service_id, failing_since, disabled_at, disabled_reason)
    SELECT h.service_id, h.failing_since, CASE WHEN h.disabled_reason IS NOT NULL THEN $10::double precision END, h.disabled_reason
    FROM health h LEFT JOIN delivery_endpoints e ON e.service_id = h.service_id
    WHERE h.failing_since IS DISTINCT FROM e.failing_since OR (h.disabled_reason IS NOT NULL AND e.disabled_at IS NULL)
    ON CONFLICT (service_id) DO UPDATE SET failing_since = EXCLUDED.failing_since,
      disabled_at = coalesce(d.disabled_at, EXCLUDED.disabled_at), disabled_reason = coalesce(d.disabled_reason, EXCLUDED.disabled_reason)
  )
  SELECT i.pos, coalesce(j.status, 'fenced') AS status, j.service_id AS "serviceId", NULL::jsonb AS leased
  FROM async_commit, input i LEFT JOIN judged j ON j.pos = i.pos
  UNION ALL
  SELECT NULL, NULL, NULL, to_jsonb(p) - 'leases' FROM promoted p WHERE p.leases
  ORDER BY 1`;

/** A row of RECORD: an outcome's status at its position (with its service, unless fenced), or a new head it leased. */
type RecordRow = { pos: number; status: RecordedStatus; serviceId: string | null; leased: null } | { pos: null; status: null; serviceId: null; leased: LeasedRow };

type LeasedRow = OutboxMessage & { fencingToken: number; scheduleAttempt: number; url: string; secrets: string[] };

/** Records the outcomes; given `lease`, also leases the new heads that can go out now. */
async function record(
  sql: Sql,
  attempts: AttemptRecord[],
  now: number,
  disableAfterFailingMs: number,
  lease?: { owner: string; expiresAt: number },
): Promise<{ statuses: RecordedStatus[]; services: Set<string>; leased: ClaimedDelivery[] }> {
  if (attempts.length === 0) return { statuses: [], services: new Set(), leased: [] };
  const rows = await sql.all<RecordRow>(
    RECORD,
    attempts.map((a) => a.messageId),
    attempts.map((a) => a.fencingToken),
    attempts.map((a) => a.startedAt),
    attempts.map((a) => a.durationMs),
    attempts.map((a) => a.responseStatus),
    attempts.map((a) => a.responseBody),
    attempts.map((a) => a.error),
    attempts.map((a) => a.verdict.kind),
    attempts.map((a) => (a.verdict.kind === 'retry' ? a.verdict.nextAttemptAt : null)),
    now,
    disableAfterFailingMs,
    lease?.owner ?? null,
    lease?.expiresAt ?? null,
    attempts.map((a) => (a.verdict.kind === 'gone' ? a.verdict.url : null)),
  );
  const statuses: RecordedStatus[] = [];
  const services = new Set<string>();
  const leased: ClaimedDelivery[] = [];
  for (const row of rows) {
    if (row.pos !== null) {
      statuses.push(row.status);
      if (row.serviceId !== null) services.add(row.serviceId);
    } else {
      const { fencingToken, scheduleAttempt, url, secrets, ...message } = row.leased;
      leased.push({ message, fencingToken, scheduleAttempt, url, secrets });
    }
  }
  // An endpoint disabled above holds every pending message of its service, not only these. Its own
  // statement suffices: meanwhile no claim takes them, since a claim leases only what an endpoint can take.
  if (statuses.includes('held')) await holdUndeliverable(sql);
  return { statuses, services, leased };
}

async function recordAttempts(sql: Sql, attempts: AttemptRecord[], now: number, disableAfterFailingMs: number): Promise<RecordedStatus[]> {
  return (await record(sql, attempts, now, disableAfterFailingMs)).statuses;
}

/**
 * The queues the outcomes moved on get their next message leased in the record's own statement (as
 * many as the outcomes freed slots of their service, at most); then a claim, one after the other,
 * takes what room is left. While queues run deep, each message is one update from waiting to leased,
 * not a promotion and then a lease, and most batches one statement: while every service of the
 * batch still has three quarters of its slots busy, the claim for the few left waits for a batch
 * that leaves more, and takes them all at once.
 */
async function recordAndClaim(sql: Sql, attempts: AttemptRecord[], now: number, disableAfterFailingMs: number, request: ClaimRequest): Promise<RecordedAndClaimed> {
  const { statuses, services, leased } = await record(sql, attempts, now, disableAfterFailingMs, { owner: request.owner, expiresAt: request.now + request.leaseMs });
  const inFlight = { ...request.inFlight };
  for (const { message } of leased) inFlight[message.serviceId] = (inFlight[message.serviceId] ?? 0) + 1;
  const busy = [...services].every((serviceId) => (inFlight[serviceId] ?? 0) >= (request.perEndpointLimit * 3) / 4);
  const room = request.limit - leased.length;
  if (room <= 0 || (leased.length > 0 && busy)) return { statuses, claimed: leased };
  try {
    return { statuses, claimed: [...leased, ...(await claimDeliveries(sql, { ...request, limit: room, inFlight }))] };
  } catch (error) {
    // The outcomes are committed: a rejection would lose them to the caller, and idle what they leased.
    return { statuses, claimed: leased, claimFailed: error };
  }
}

async function getEndpointHealth(sql: Sql, serviceId: string): Promise<EndpointHealth | undefined> {
  return sql.one<EndpointHealth>(
    `SELECT s.service_id AS "serviceId", e.failing_since AS "failingSince", e.disabled_at AS "disabledAt", e.disabled_reason AS "disabledReason"
     FROM services s LEFT JOIN delivery_endpoints e ON e.service_id = s.service_id WHERE s.service_id = $1`,
    serviceId,
  );
}

/** Back to pending, due now, each schedule started over: the held messages that can go out again. */
async function releaseHeld(sql: Sql, now: number, serviceId?: string): Promise<number> {
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

async function outboxStats(sql: Sql): Promise<OutboxStats> {
  const row = await sql.one<OutboxStats>(
    `SELECT count(*) FILTER (WHERE status = 'pending')::integer AS pending,
            count(*) FILTER (WHERE status = 'delivering')::integer AS delivering,
            count(*) FILTER (WHERE status = 'held')::integer AS held,
            min(created_at) FILTER (WHERE status <> 'held') AS "oldestPendingAt"
     FROM outbox WHERE ${OPEN}`,
  );
  return row ?? { pending: 0, delivering: 0, held: 0, oldestPendingAt: null };
}

/** The delivery area on PostgreSQL: claims and outcomes of any number of nodes. */
export function postgresDelivery(sql: Sql): DeliveryArea {
  return area(sql, { claimDeliveries, recordAttempts, recordAndClaim, getEndpointHealth, releaseHeld, outboxStats });
}
