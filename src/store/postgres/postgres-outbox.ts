/** The outbox: messages recorded with the change that caused them, and their admin views. */
import { newMessageId } from '../../ids.js';
import { messageBody, messageKind, type MessageSpec } from '../messages.js';
import type { DeliveryAttempt, OutboxMessage } from '../../core/model.js';
import type { MessageFilter } from '../areas/outbox.js';
import { area, type Param, type Sql } from './database.js';
import { notifyDue, OUTBOX_CHANNEL } from './postgres-notify.js';
import type { OutboxArea } from '../areas/outbox.js';
import type { Notifications } from './postgres-notify.js';

/** A message that is neither delivered nor failed: it holds back the later ones of its (service, device). */
export const OPEN = `status IN ('pending', 'delivering', 'held')`;

/** The id of the first open message of the queue of `q` (a row with service_id and device_id): its rightful head. */
export function firstOpenOf(q: string): string {
  return `(SELECT e.id FROM outbox e WHERE e.service_id = ${q}.service_id AND e.device_id = ${q}.device_id AND e.${OPEN}
           ORDER BY e.sequence LIMIT 1)`;
}

/** What the admin API lists when it gives no limit. */
const DEFAULT_LIST_LIMIT = 100;

/** Columns shaped as `OutboxMessage`. */
const MESSAGE = `message_id AS "messageId", service_id AS "serviceId", device_id AS "deviceId", kind, push_type AS "pushType",
  sequence, body, status, attempts, created_at AS "createdAt", next_attempt_at AS "nextAttemptAt", delivered_at AS "deliveredAt"`;

/**
 * One statement for the whole fan-out: reserves as many numbers as it has messages in each
 * (service, device) order, then inserts every message, pending and due at once, numbered in the
 * order of `specs`, and wakes the dispatchers when it commits. The reserving upsert locks each
 * counter row, so concurrent writers to one order take turns; it takes them in key order, so two
 * writers never wait on each other in a cycle. (A CTE calling a volatile function runs once.)
 * The upsert also counts the queue's open messages: the first new one is the queue's head when none
 * was open before (the count is read under the row's lock, so a settle committing meanwhile is seen).
 * The messages come as one JSON array: as text arrays, each body was escaped by two regular
 * expressions in the driver and parsed again as an array literal by the server.
 */
const RECORD = `WITH new AS (
    SELECT * FROM ROWS FROM (json_to_recordset($1::json)
      AS (message_id text, service_id text, device_id text, kind text, push_type text, body text, at double precision))
      WITH ORDINALITY AS n (message_id, service_id, device_id, kind, push_type, body, at, ord)
  ), reserved AS (
    INSERT INTO message_sequences AS q (service_id, device_id, last_sequence, open_messages)
    SELECT service_id, device_id, count(*), count(*) FROM new GROUP BY service_id, device_id ORDER BY service_id, device_id
    ON CONFLICT (service_id, device_id) DO UPDATE
      SET last_sequence = q.last_sequence + EXCLUDED.last_sequence, open_messages = q.open_messages + EXCLUDED.open_messages
    RETURNING service_id, device_id, last_sequence, open_messages
  ), wake AS (
    SELECT pg_notify('${OUTBOX_CHANNEL}', '')
  )
  INSERT INTO outbox (message_id, service_id, device_id, kind, push_type, sequence, body, status, next_attempt_at, created_at, queue_head)
  SELECT n.message_id, n.service_id, n.device_id, n.kind, n.push_type,
         r.last_sequence - count(*) OVER pair + row_number() OVER (pair ORDER BY n.ord),
         n.body, 'pending', n.at, n.at,
         r.open_messages = count(*) OVER pair AND row_number() OVER (pair ORDER BY n.ord) = 1
  FROM new n JOIN reserved r ON r.service_id = n.service_id AND r.device_id = n.device_id CROSS JOIN wake
  WINDOW pair AS (PARTITION BY n.service_id, n.device_id)
  ORDER BY n.ord`;

/** Records the messages of one change. Call inside the change's transaction. */
export async function recordMessages(sql: Sql, specs: MessageSpec[], at: number): Promise<void> {
  await recordMessagesAt(sql, specs.map((spec) => ({ spec, at })));
}

/** Records messages each made at its own time (the changes of a group of reports). Call inside their transaction. */
export async function recordMessagesAt(sql: Sql, made: ReadonlyArray<{ spec: MessageSpec; at: number }>): Promise<void> {
  if (made.length === 0) return;
  const messages = made.map(({ spec, at }) => {
    const messageId = newMessageId();
    return {
      message_id: messageId,
      service_id: spec.serviceId,
      device_id: spec.deviceId,
      kind: messageKind(spec.pushType),
      push_type: spec.pushType,
      body: messageBody(spec, messageId, at),
      at,
    };
  });
  await sql.run(RECORD, JSON.stringify(messages));
}

/** A service's messages, newest first. */
async function listMessages(sql: Sql, serviceId: string, filter: MessageFilter): Promise<OutboxMessage[]> {
  const { status, deviceId, since, before, limit = DEFAULT_LIST_LIMIT } = filter;
  // Only the filters given go in: in a generic plan, `$n IS NULL OR …` would not bound the scan of outbox_service_created_id.
  // Each term takes one parameter, numbered after those of the terms before it.
  const terms: [string, Param][] = [['service_id = $1', serviceId]];
  const next = () => `$${terms.length + 1}`;
  if (status !== undefined) terms.push([`status = ${next()}`, status]);
  if (deviceId !== undefined) terms.push([`device_id = ${next()}`, deviceId]);
  if (since !== undefined) terms.push([`created_at >= ${next()}`, since]);
  // The key of outbox_service_created_id after service_id: the page starts right after `before`, however many share its created_at.
  if (before !== undefined) terms.push([`(created_at, id) < (SELECT created_at, id FROM outbox WHERE message_id = ${next()})`, before]);
  return sql.all<OutboxMessage>(
    `SELECT ${MESSAGE} FROM outbox WHERE ${terms.map(([term]) => term).join(' AND ')} ORDER BY created_at DESC, id DESC LIMIT ${next()}`,
    ...terms.map(([, value]) => value),
    limit,
  );
}

async function getMessage(sql: Sql, messageId: string): Promise<OutboxMessage | undefined> {
  return sql.one<OutboxMessage>(`SELECT ${MESSAGE} FROM outbox WHERE message_id = $1`, messageId);
}

/** The attempts of the given messages, by message then attempt number. */
async function listAttempts(sql: Sql, messageIds: string[]): Promise<DeliveryAttempt[]> {
  if (messageIds.length === 0) return [];
  return sql.all<DeliveryAttempt>(
    `SELECT message_id AS "messageId", attempt, started_at AS "startedAt", duration_ms AS "durationMs",
            response_status AS "responseStatus", response_body AS "responseBody", error
     FROM delivery_attempts WHERE message_id = ANY($1::text[])
     ORDER BY message_id COLLATE "C", attempt`,
    messageIds,
  );
}

/**
 * Up to `limit` delivered or failed messages created before `before`, oldest first, with their
 * attempts, in one statement: locks held no longer than an outcome's. A message another transaction
 * holds (an admin resending it) is left for the next sweep. Their queues' numbers stay in message_sequences.
 */
/** When a closed message closed: delivered, or failed at its last attempt (outbox_closed's expression). */
const CLOSED_AT = 'coalesce(delivered_at, next_attempt_at)';

const DELETE_OLD = `WITH old AS (
    SELECT id, message_id FROM outbox WHERE status IN ('delivered', 'failed') AND ${CLOSED_AT} < $1
    ORDER BY ${CLOSED_AT} LIMIT $2
    FOR UPDATE SKIP LOCKED
  ), attempts AS (
    DELETE FROM delivery_attempts a USING old WHERE a.message_id = old.message_id
  )
  DELETE FROM outbox o USING old WHERE o.id = old.id`;

async function deleteOldMessages(sql: Sql, before: number, limit: number): Promise<number> {
  return sql.run(DELETE_OLD, before, limit);
}

/**
 * Back to pending and due now, the retry schedule started over; a bumped fencing token voids any
 * lease a sender still holds on it. Returns each message's queue, and whether it was open already.
 */
function requeueStatement(where: string): string {
  return `WITH target AS (SELECT id, ${OPEN} AS was_open FROM outbox WHERE ${where} FOR UPDATE)
    UPDATE outbox o
    SET status = 'pending', next_attempt_at = $1, delivered_at = NULL, schedule_start = o.attempts,
        lease_owner = NULL, lease_expires_at = NULL, fencing_token = o.fencing_token + 1
    FROM target t WHERE o.id = t.id
    RETURNING o.service_id AS "serviceId", o.device_id AS "deviceId", t.was_open AS "wasOpen"`;
}

async function resendMessage(sql: Sql, messageId: string, now: number): Promise<boolean> {
  return (await requeue(sql, requeueStatement('message_id = $2'), now, messageId)) === 1;
}

async function recoverFailed(sql: Sql, serviceId: string, since: number, now: number): Promise<number> {
  return requeue(sql, requeueStatement(`service_id = $2 AND status = 'failed' AND created_at >= $3`), now, serviceId, since);
}

/** The queue of a message, for keeping the queue's count and head. */
interface Queue {
  serviceId: string;
  deviceId: string;
}

/**
 * A message open again counts in its queue again, and may now be first in it: each queue touched
 * gets its head anew (after its count, so that the row lock orders this after inserts in flight).
 */
async function requeue(sql: Sql, update: string, ...params: Param[]): Promise<number> {
  return sql.transaction(async (tx) => {
    const requeued = await tx.all<Queue & { wasOpen: boolean }>(update, ...params);
    if (requeued.length === 0) return 0;
    const reopened = requeued.filter((m) => !m.wasOpen);
    if (reopened.length > 0) {
      // The queues' rows locked in key order, as inserts and outcomes lock them: taken in hash order, they deadlocked with outcomes.
      await tx.run(
        `WITH r AS (
           SELECT service_id, device_id, count(*) AS n FROM unnest($1::text[], $2::text[]) AS r (service_id, device_id) GROUP BY service_id, device_id
         ), locked AS MATERIALIZED (
           SELECT q.service_id, q.device_id, r.n FROM message_sequences q JOIN r ON r.service_id = q.service_id AND r.device_id = q.device_id
           ORDER BY q.service_id, q.device_id
           FOR UPDATE OF q
         )
         UPDATE message_sequences q SET open_messages = q.open_messages + l.n
         FROM locked l WHERE q.service_id = l.service_id AND q.device_id = l.device_id`,
        reopened.map((m) => m.serviceId),
        reopened.map((m) => m.deviceId),
      );
    }
    await markHeads(tx, requeued);
    await notifyDue(tx);
    return requeued.length;
  });
}

/**
 * The first open message of each queue becomes its head, and no other waiting message stays one. A
 * message in flight keeps its flag (its lease is locked by a sender's record, which must not wait on
 * this): the claim re-checks each head's order, so a second head only costs a probe.
 */
async function markHeads(sql: Sql, queues: Queue[]): Promise<void> {
  await sql.run(
    `WITH queue AS (SELECT DISTINCT * FROM unnest($1::text[], $2::text[]) AS q (service_id, device_id)),
     first AS (
       SELECT q.service_id, q.device_id, ${firstOpenOf('q')} AS id FROM queue q)
     UPDATE outbox o SET queue_head = coalesce(o.id = f.id, false)
     FROM first f
     WHERE o.service_id = f.service_id AND o.device_id = f.device_id AND o.status IN ('pending', 'held')
       AND o.queue_head <> coalesce(o.id = f.id, false)`,
    queues.map((q) => q.serviceId),
    queues.map((q) => q.deviceId),
  );
}

/** The outbox area on PostgreSQL; `watchOutbox` hears every process's commits: they NOTIFY, and `notifications` LISTENs. */
export function postgresOutbox(sql: Sql, notifications: Notifications): OutboxArea {
  return {
    ...area(sql, { listMessages, getMessage, listAttempts, resendMessage, recoverFailed, deleteOldMessages }),
    watchOutbox: (listener) => notifications.watchOutbox(listener),
  };
}
