/** The outbox: messages recorded with the change that caused them, their order, their admin views. */
import { newMessageId } from '../../ids.js';
import { messageBody, messageKind, type MessageSpec } from '../messages.js';
import type { DeliveryAttempt, OutboxMessage } from '../../core/model.js';
import type { MessageFilter } from '../areas/outbox.js';
import { area, type Param, type Sql } from './database.js';
import { keptLookup } from './recording-lookups.js';
import { toAttempt, toMessage, type AttemptRow, type OutboxRow } from './rows.js';
import type { OutboxArea } from '../areas/outbox.js';

/** What the admin API lists when it gives no limit. */
const DEFAULT_LIST_LIMIT = 100;

export const OUTBOX_COLUMNS = `message_id, service_id, device_id, kind, push_type, sequence, body, status, attempts,
  next_attempt_at, created_at, delivered_at`;

/**
 * A message that is neither delivered nor failed (closed), and so holds back the later ones of its
 * (service, device) queue, as outbox_open has it: a parked message (held behind a held one) is left
 * out, and the held one before it stands for it. The first of these is the queue's head (1); the
 * others are 0. The predicate names queue_head alone, so that a claim, which changes only the
 * status of an open message, leaves its entry in outbox_open as it is.
 */
export const OPEN = 'queue_head >= 0';

/** The queue_head of a parked message. */
const PARKED = -1;

/** The queue_head of a delivered or failed message. */
export const CLOSED = -2;

/** Where service `s` takes push messages, and where events. */
export const PUSH_URL = 's.callback_url';
export const EVENT_URL = 'coalesce(s.event_callback_url, s.callback_url)';

/** Whether service `s`, with its endpoint `e` (LEFT JOIN delivery_endpoints), can take what goes to `url` now. */
export const canTake = (url: string) => `s.enabled = 1 AND e.disabled_at IS NULL AND ${url} IS NOT NULL`;

/** Whether the service (second parameter) can take a message of the kind (first) now: 1, 0, or no row. */
const TAKES = `SELECT ${canTake(`CASE ? WHEN 'push' THEN ${PUSH_URL} ELSE ${EVENT_URL} END`)}
  FROM services s LEFT JOIN delivery_endpoints e ON e.service_id = s.service_id WHERE s.service_id = ?`;

/**
 * The insert of one message. Only the queue's first message of a write may be its head (the ones
 * after it have it open before them); that first one is parked when it is held and so is the
 * queue's head (the first open message). Text built once: the statement cache is keyed by it, and a
 * text built per call is hashed and compared in full on every lookup.
 */
const INSERT_MESSAGE = `INSERT INTO outbox (message_id, service_id, device_id, kind, push_type, sequence, body, status, next_attempt_at, created_at, queue_head)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
          CASE WHEN ? THEN coalesce(
            (SELECT CASE WHEN status = 'held' AND ? THEN ${PARKED} ELSE 0 END FROM outbox
             WHERE service_id = ? AND device_id = ? AND ${OPEN} ORDER BY sequence LIMIT 1), 1) ELSE 0 END)`;

/**
 * Records each message due at once, each next in its (service, device) order, and the head of that
 * queue when nothing earlier is open. Call inside the change's transaction. A message its service
 * cannot take now (no callback URL, endpoint disabled) is recorded held, as the next claim would
 * hold it: no version of it as pending, and no claim woken for it.
 */
export function recordMessages(sql: Sql, specs: MessageSpec[], at: number): void {
  // A queue's numbers are reserved at once for all its messages here (several reports of a device in
  // one write). One message, the control's and most reports', needs no count (and no key built).
  const counts = specs.length > 1 ? countByQueue(specs) : undefined;
  const nextOf = new Map<string, number>();
  let pending = 0;
  for (const spec of specs) {
    const key = counts && queueKey(spec);
    const reserved = key === undefined ? undefined : nextOf.get(key);
    const sequence = reserved ?? reserveSequences(sql, spec.serviceId, spec.deviceId, key === undefined ? 1 : counts!.get(key)!);
    if (key !== undefined) nextOf.set(key, sequence + 1);
    const kind = messageKind(spec.pushType);
    const open = keptLookup(sql, kind === 'push' ? TAKES_PUSH : TAKES_EVENT, spec.serviceId, () => sql.rows<[number]>(TAKES, kind, spec.serviceId)[0]?.[0] === 1);
    if (open) pending += 1;
    const messageId = newMessageId();
    sql.run(
      INSERT_MESSAGE,
      messageId,
      spec.serviceId,
      spec.deviceId,
      kind,
      spec.pushType,
      sequence,
      messageBody(spec, messageId, at),
      open ? 'pending' : 'held',
      at,
      at,
      reserved === undefined ? 1 : 0,
      open ? 0 : 1,
      spec.serviceId,
      spec.deviceId,
    );
  }
  notifyIf(sql, pending);
}

/** What keptLookup keeps of whether a service takes push messages now, and events. */
const TAKES_PUSH = 'takes push';
const TAKES_EVENT = 'takes event';

function countByQueue(specs: MessageSpec[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const spec of specs) counts.set(queueKey(spec), (counts.get(queueKey(spec)) ?? 0) + 1);
  return counts;
}

function queueKey(spec: MessageSpec): string {
  return `${spec.serviceId}\n${spec.deviceId}`;
}

/** The first of `count` numbers taken next in the queue's order. */
function reserveSequences(sql: Sql, serviceId: string, deviceId: string, count: number): number {
  const row = sql.one<{ last_sequence: number }>(
    `INSERT INTO message_sequences (service_id, device_id, last_sequence) VALUES (?, ?, ?)
     ON CONFLICT (service_id, device_id) DO UPDATE SET last_sequence = last_sequence + excluded.last_sequence
     RETURNING last_sequence`,
    serviceId,
    deviceId,
    count,
  );
  if (!row) throw new Error(`No sequence returned for ${serviceId}/${deviceId}`);
  return row.last_sequence - count + 1;
}

/** A service's messages, newest first. */
function listMessages(sql: Sql, serviceId: string, filter: MessageFilter): OutboxMessage[] {
  const { status, deviceId, since, before, limit = DEFAULT_LIST_LIMIT } = filter;
  // Only the filters given go in: under `? IS NULL OR …`, since and before would not bound the scan of outbox_service_created.
  const terms: [string, Param][] = [['service_id = ?', serviceId]];
  if (status !== undefined) terms.push(['status = ?', status]);
  if (deviceId !== undefined) terms.push(['device_id = ?', deviceId]);
  if (since !== undefined) terms.push(['created_at >= ?', since]);
  // The index ends in the rowid id, so the page starts right after `before`, however many share its created_at.
  if (before !== undefined) terms.push(['(created_at, id) < (SELECT created_at, id FROM outbox WHERE message_id = ?)', before]);
  const rows = sql.all<OutboxRow>(
    `SELECT ${OUTBOX_COLUMNS} FROM outbox WHERE ${terms.map(([term]) => term).join(' AND ')} ORDER BY created_at DESC, id DESC LIMIT ?`,
    ...terms.map(([, value]) => value),
    limit,
  );
  return rows.map(toMessage);
}

function getMessage(sql: Sql, messageId: string): OutboxMessage | undefined {
  const row = sql.one<OutboxRow>(`SELECT ${OUTBOX_COLUMNS} FROM outbox WHERE message_id = ?`, messageId);
  return row && toMessage(row);
}

/** The attempts of the given messages, by message then attempt number. */
function listAttempts(sql: Sql, messageIds: string[]): DeliveryAttempt[] {
  const rows = sql.all<AttemptRow>(
    `SELECT message_id, attempt, started_at, duration_ms, response_status, response_body, error
     FROM delivery_attempts
     WHERE message_id IN (SELECT value FROM json_each(?))
     ORDER BY message_id, attempt`,
    JSON.stringify(messageIds),
  );
  return rows.map(toAttempt);
}

/**
 * Up to `limit` delivered or failed messages created before `before`, oldest first, with their
 * attempts, in one short write: reports and deliveries wait for it no longer than for one of theirs.
 * Their queues' numbers stay in message_sequences.
 */
/** When a closed message closed: delivered, or failed at its last attempt (outbox_closed's expression). */
const CLOSED_AT = 'coalesce(delivered_at, next_attempt_at)';

function deleteOldMessages(sql: Sql, before: number, limit: number): number {
  return sql.write(() => {
    const old = sql.all<{ id: number; message_id: string }>(
      `SELECT id, message_id FROM outbox INDEXED BY outbox_closed
       WHERE status IN ('delivered', 'failed') AND ${CLOSED_AT} < ? ORDER BY ${CLOSED_AT} LIMIT ?`,
      before,
      limit,
    );
    if (old.length === 0) return 0;
    sql.run('DELETE FROM delivery_attempts WHERE message_id IN (SELECT value FROM json_each(?))', JSON.stringify(old.map((m) => m.message_id)));
    return sql.run('DELETE FROM outbox WHERE id IN (SELECT value FROM json_each(?))', JSON.stringify(old.map((m) => m.id)));
  });
}

/**
 * Back to pending and due now, the retry schedule started over; a bumped fencing token voids any
 * lease a sender still holds on it.
 */
const REQUEUE = `UPDATE outbox
  SET status = 'pending', next_attempt_at = ?, delivered_at = NULL, schedule_start = attempts,
      lease_owner = NULL, lease_expires_at = NULL, fencing_token = fencing_token + 1, queue_head = max(queue_head, 0)`;

interface QueueRow {
  service_id: string;
  device_id: string;
}

function resendMessage(sql: Sql, messageId: string, now: number): boolean {
  return requeue(sql, `${REQUEUE} WHERE message_id = ?`, now, messageId) === 1;
}

function recoverFailed(sql: Sql, serviceId: string, since: number, now: number): number {
  return requeue(sql, `${REQUEUE} WHERE service_id = ? AND status = 'failed' AND created_at >= ?`, now, serviceId, since);
}

/**
 * A message open again may now be first in its queue: each queue it touched gets its head anew. A
 * held one resent leaves what was parked behind it without a held message before it: each service
 * touched is unparked once (one pass over its held messages), before the heads are found.
 */
function requeue(sql: Sql, update: string, ...params: Param[]): number {
  return sql.write(() => {
    const queues = sql.all<QueueRow>(`${update} RETURNING service_id, device_id`, ...params);
    for (const serviceId of new Set(queues.map((q) => q.service_id))) unpark(sql, serviceId);
    const distinct = new Map(queues.map((q) => [`${q.service_id}\n${q.device_id}`, q]));
    for (const queue of distinct.values()) markHead(sql, queue.service_id, queue.device_id);
    return notifyIf(sql, queues.length);
  });
}

/** The service's parked messages back in outbox_open, held as they were. */
export function unpark(sql: Sql, serviceId: string): void {
  sql.run(`UPDATE outbox SET queue_head = 0 WHERE service_id = ? AND status = 'held' AND queue_head = ${PARKED}`, serviceId);
}

/** The first open message of the queue is its head, and no other. */
export function markHead(sql: Sql, serviceId: string, deviceId: string): void {
  const head = sql.one<{ id: number }>(
    `SELECT id FROM outbox WHERE service_id = ? AND device_id = ? AND ${OPEN} ORDER BY sequence LIMIT 1`,
    serviceId,
    deviceId,
  )?.id ?? null;
  sql.run(
    `UPDATE outbox SET queue_head = coalesce(id = ?, 0)
     WHERE service_id = ? AND device_id = ? AND (queue_head = 1 OR id = ?)`,
    head,
    serviceId,
    deviceId,
    head,
  );
}

// Waking the delivery engine when messages become due.

const listeners = new WeakMap<Sql, Set<() => void>>();
const notifying = new WeakSet<Sql>();

/** Calls `listener` after each commit of this database that made messages due. */
function watchOutbox(sql: Sql, listener: () => void): () => void {
  const set = listeners.get(sql) ?? new Set<() => void>();
  listeners.set(sql, set);
  set.add(listener);
  return () => {
    set.delete(listener);
  };
}

/**
 * better-sqlite3 commits synchronously, so a microtask queued inside a transaction runs after its
 * COMMIT (or its ROLLBACK, and then the woken dispatcher finds nothing new). One per burst of writes.
 */
function notifyAfterCommit(sql: Sql): void {
  const set = listeners.get(sql);
  if (!set?.size || notifying.has(sql)) return;
  notifying.add(sql);
  queueMicrotask(() => {
    notifying.delete(sql);
    for (const listener of set) listener();
  });
}

/** Passes `changed` through, waking the watchers when it is not 0. */
export function notifyIf(sql: Sql, changed: number): number {
  if (changed > 0) notifyAfterCommit(sql);
  return changed;
}

/** The outbox area on SQLite; `watchOutbox` hears this process's commits only: another process writing the same file is seen by the dispatcher's poll. */
export function sqliteOutbox(sql: Sql): OutboxArea {
  return area(sql, { listMessages, getMessage, listAttempts, resendMessage, recoverFailed, deleteOldMessages, watchOutbox });
}
